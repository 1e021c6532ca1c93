// SPDX-License-Identifier: MIT
/*
 * What the hostile driver's attack modes and fuzzer share (hostile.h).
 */
#include <errno.h>
#include <string.h>

#include "drivers/virtio/hostile.h"
#include "drivers/virtio/virtio_net.h"
#include "kernel/dma.h"
#include "kernel/poll.h"
#include "net/net.h"

void hostile_victim(enum vsock_type type, uint32_t port, struct hostile_victim *v)
{
	struct vsock_sock *s = NULL;
	struct vsock_info in;

	memset(v, 0, sizeof(*v));
	v->type = type;
	v->local_port = HOSTILE_UNUSED_PORT;
	v->peer_port = HOSTILE_UNUSED_PORT + 1;
	v->buf_alloc = 65536;
	while ((s = vsock_next(s))) {
		vsock_get_info(s, &in);
		if (in.state != VSOCK_CONNECTED || in.type != type)
			continue;
		if (in.local_port != port && type != VSOCK_TYPE_SEQPACKET)
			continue;
		v->found = true;
		v->local_port = in.local_port;
		v->peer_port = in.peer_port;
		v->buf_alloc = in.buf_alloc;
		v->fwd_cnt = in.fwd_cnt;
		return;
	}
}

void hostile_hdr(const struct hostile_victim *v, uint16_t op, struct virtio_vsock_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->src_cid = vsock_local_cid();
	h->dst_cid = VSOCK_CID_HOST;
	h->src_port = v->local_port;
	h->dst_port = v->peer_port;
	h->type = v->type;
	h->op = op;
	h->buf_alloc = v->buf_alloc;
	h->fwd_cnt = v->fwd_cnt;
}

int hostile_queue_pkt(const struct virtio_vsock_hdr *h, uint32_t payload, uint32_t desc_len)
{
	struct virtq *vq = virtio_vsock_txq();
	struct vsock_pkt *pkt;
	struct vbuf out;
	int ret;

	if (!vq)
		return -ENODEV;
	pkt = vsock_pkt_alloc(payload);
	if (!pkt)
		return -ENOMEM;
	pkt->hdr = *h;
	memset(pkt->data, 0xa5, payload);
	out.addr = &pkt->hdr;
	out.len = desc_len;
	/* completion frees it in the driver's tx_reclaim like any packet */
	ret = virtq_add(vq, &out, 1, NULL, 0, pkt);
	if (ret)
		vsock_pkt_free(pkt);
	return ret;
}

void hostile_probe(void)
{
	struct hostile_victim none;
	struct virtio_vsock_hdr h;

	memset(&none, 0, sizeof(none));
	none.type = VSOCK_TYPE_STREAM;
	none.local_port = HOSTILE_UNUSED_PORT;
	none.peer_port = HOSTILE_UNUSED_PORT + 1;
	hostile_hdr(&none, VSOCK_OP_RST, &h);
	if (!hostile_queue_pkt(&h, 0, VSOCK_HDR_LEN))
		virtq_kick(virtio_vsock_txq());
}

/* ---- virtio-net frames ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put16_be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void hostile_net_frame(uint8_t *f, uint32_t len, uint16_t ip_len)
{
	struct net_dev *dev = net_device();

	memset(f, 0xa5, len);
	memset(f, 0xff, ETH_ALEN);
	if (dev)
		memcpy(f + ETH_ALEN, dev->mac, ETH_ALEN);
	put16_be(f + 12, 0x0800);
	memset(f + ETH_HLEN, 0, 40);
	f[14] = 0x45; /* IPv4, 20-byte header */
	put16_be(f + 16, ip_len);
	f[22] = 64; /* ttl */
	f[23] = 6; /* TCP */
	memset(f + 30, 0xff, 4); /* to 255.255.255.255 */
	put16_be(f + 34, 9); /* discard port, both ends */
	put16_be(f + 36, 9);
	f[46] = 0x50; /* TCP header of 20 bytes */
	f[47] = 0x10; /* ACK */
}

void hostile_net_hdr(uint8_t *h, uint8_t flags, uint8_t gso_type, uint16_t hdr_len,
		     uint16_t gso_size, uint16_t csum_start, uint16_t csum_offset,
		     uint16_t num_buffers)
{
	h[0] = flags;
	h[1] = gso_type;
	put16(h + 2, hdr_len);
	put16(h + 4, gso_size);
	put16(h + 6, csum_start);
	put16(h + 8, csum_offset);
	put16(h + 10, num_buffers);
}

#define NET_POOL 64

static uint8_t *net_pool, *net_long;
static unsigned int net_next;

uint8_t *hostile_net_buf(uint32_t frame_len)
{
	if (!net_pool)
		net_pool = dma_alloc((size_t)NET_POOL * HOSTILE_NET_SMALL, 64);
	if (!net_long)
		net_long = dma_alloc(VIRTIO_NET_HDR_LEN + HOSTILE_NET_LONG, 64);
	if (!net_pool || !net_long || frame_len > HOSTILE_NET_LONG)
		return NULL;
	if (VIRTIO_NET_HDR_LEN + frame_len > HOSTILE_NET_SMALL)
		return net_long;
	return net_pool + (size_t)(net_next++ % NET_POOL) * HOSTILE_NET_SMALL;
}

/* ---- the TX watch ---- */

/*
 * What the driver has reclaimed of @vq is what a look sees; with txpoll
 * only the queue's context reclaims, on a quiet device nothing schedules
 * it, so each look asks it to, and the next look sees what the device
 * completed since.
 */
static void ask_reclaim(struct virtq *vq)
{
	struct poll_ctx *ctx = NULL;

	if (vq == virtio_vsock_txq())
		ctx = virtio_vsock_txq_ctx();
	else if (vq == virtio_net_txq())
		ctx = virtio_net_txq_ctx();
	if (ctx)
		poll_schedule(ctx);
}

static uint64_t out_now(struct virtq *vq, uint64_t *completed)
{
	struct virtq_stats st;

	ask_reclaim(vq);
	virtq_get_stats(vq, &st);
	if (completed)
		*completed = st.completed;
	return st.added - st.completed;
}

void tx_watch_begin(struct tx_watch *w, struct virtq *vq, uint64_t now)
{
	memset(w, 0, sizeof(*w));
	if (vq)
		w->out0 = out_now(vq, &w->completed);
	w->progress_ns = now;
}

bool tx_watch_silent(struct tx_watch *w, struct virtq *vq, uint64_t now)
{
	uint64_t done = 0;

	if (vq)
		out_now(vq, &done);
	if (done != w->completed) {
		w->completed = done;
		w->progress_ns = now;
	}
	return now - w->progress_ns > HOSTILE_SILENCE_NS;
}

void tx_watch_settle(struct tx_watch *w, struct virtq *vq, uint64_t now)
{
	tx_watch_silent(w, vq, now);
	w->settle_ns = now;
	w->settle_completed = w->completed;
}

uint64_t tx_watch_kept(const struct tx_watch *w, struct virtq *vq)
{
	uint64_t out = vq ? out_now(vq, NULL) : 0;

	return out > w->out0 ? out - w->out0 : 0;
}

/*
 * Kept: completions went on, the probe's among them, but buffers of this
 * run never came back: the device dropped a chain without marking it
 * used (virtio 1.2 2.7.8) and holds it until a reset.
 */
enum tx_verdict tx_watch_verdict(struct tx_watch *w, struct virtq *vq, uint64_t now)
{
	bool silent, over;

	if (!vq)
		return TXW_NO_DEVICE;
	silent = tx_watch_silent(w, vq, now);
	if (!tx_watch_kept(w, vq))
		return TXW_ANSWERED;
	over = now - w->settle_ns > HOSTILE_SETTLE_MAX_NS;
	if ((silent || over) && w->completed != w->settle_completed)
		return TXW_KEPT;
	if (silent)
		return TXW_SILENT;
	return over ? TXW_BUSY : TXW_WAIT;
}
