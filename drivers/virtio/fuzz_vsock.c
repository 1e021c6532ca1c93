// SPDX-License-Identifier: MIT
/*
 * The fuzzer's vsock steps (virtio 1.2 5.10.6): headers on live
 * connections, in well-formed descriptors, and the shapes of RX buffers.
 * The connections lied about are the victims: the stream connection on
 * local port fuzz_port (the sink's by default) and any SEQPACKET one;
 * without one a lie names unused ports. No step names any other
 * connection: the host's bystander (an echo connection) must keep every
 * byte whatever the victims suffer.
 *
 *   hd  one header, every field in turn: op (also out of the connection's
 *       state order), type, len against the buffer, buf_alloc, fwd_cnt,
 *       source and destination CIDs, ports, flags; in one descriptor, as
 *       header and payload apart, split inside the header (2.6.4: no
 *       device may assume a layout), or through an indirect table; up to
 *       32 in a burst
 *   cr  2..17 credit updates walking buf_alloc and fwd_cnt: up, down,
 *       across 2^32, a huge buf_alloc with fwd_cnt jumping, alternating
 *   sq  SEQPACKET pieces with EOM and EOR where they belong or not
 *   rx  an RX buffer: split inside the header (legal), tiny, read-only,
 *       of length 0, past RAM, through an indirect table; skipped when
 *       the RX ring is full (the driver keeps it so: room comes as the
 *       device fills buffers)
 */
#include <errno.h>
#include <string.h>

#include "drivers/virtio/fuzz.h"
#include "drivers/virtio/hostile.h"
#include "kernel/config.h"
#include "kernel/dma.h"

#define TABLE_ROOM 256 /* after a forged chain's content: an indirect table */

CONFIG_KEY(cfg_fuzz_port) = {
	.name = "fuzz_port",
	.help = "fuzzer: the vsock stream connection on this local port is the one lied about",
	.type = CONFIG_UINT,
	.min = 1,
	.max = 0xffffffff,
	.def = 1235,
};

static void victim(enum vsock_type type, struct hostile_victim *v)
{
	hostile_victim(type, config_get(&cfg_fuzz_port), v);
}

/* ---- the vsock device for the ring steps ---- */

static int vsock_content(struct fuzz_buf *b)
{
	struct hostile_victim v;
	struct vsock_pkt *pkt = vsock_pkt_alloc(TABLE_ROOM);

	if (!pkt)
		return -ENOMEM;
	victim(VSOCK_TYPE_STREAM, &v);
	hostile_hdr(&v, VSOCK_OP_CREDIT_UPDATE, &pkt->hdr);
	b->token = pkt;
	b->data = (uint8_t *)&pkt->hdr;
	b->len = VSOCK_HDR_LEN;
	b->cap = VSOCK_HDR_LEN + TABLE_ROOM;
	return 0;
}

static void vsock_drop(struct fuzz_buf *b)
{
	vsock_pkt_free(b->token);
}

static int vsock_forge(struct fuzz_buf *b, const struct virtq_desc *tmpl, unsigned int n)
{
	struct virtq *vq = virtio_vsock_txq();
	int ret = vq ? virtq_add_forged(vq, tmpl, n, b->token) : -ENODEV;

	if (ret)
		vsock_drop(b);
	return ret;
}

static int vsock_honest(void)
{
	struct hostile_victim v;
	struct virtio_vsock_hdr h;

	victim(VSOCK_TYPE_STREAM, &v);
	hostile_hdr(&v, VSOCK_OP_CREDIT_UPDATE, &h);
	return hostile_queue_pkt(&h, 0, VSOCK_HDR_LEN);
}

static const struct fuzz_dev vsock_dev = {
	.txq = virtio_vsock_txq,
	.content = vsock_content,
	.forge = vsock_forge,
	.drop = vsock_drop,
	.honest = vsock_honest,
};

/* ---- hd ---- */

static const uint16_t ops[16] = {
	VSOCK_OP_CREDIT_UPDATE,
	VSOCK_OP_RW,
	VSOCK_OP_CREDIT_REQUEST,
	VSOCK_OP_REQUEST,
	VSOCK_OP_RESPONSE,
	VSOCK_OP_RST,
	VSOCK_OP_SHUTDOWN,
	0,
	VSOCK_OP_CREDIT_UPDATE,
	VSOCK_OP_RW,
	8,
	42,
	0xffff,
	VSOCK_OP_RW,
	VSOCK_OP_RW,
	VSOCK_OP_CREDIT_UPDATE,
};
static const uint32_t payloads[16] = {
	16, 1, 0, 44, 100, 512, 1024, 4096, 8192, 16384, 32768, 65536, 65537, 3, 7, 64,
};

/* A field of 3 bits picked from @w at @shift: entries 0 and past @n are the honest value. */
static uint64_t pick(uint64_t w, unsigned int shift, const uint64_t *choices, unsigned int n,
		     uint64_t honest)
{
	unsigned int i = fuzz_field(w, shift, 3);

	return i && i <= n ? choices[i - 1] : honest;
}

/*
 * The header of an hd step on victim @v: op bits 0-3, type 4-6, buf_alloc
 * 10-12, fwd_cnt 13-15, src_cid 16-18, dst_cid 19-21, ports 22-24, flags
 * 25-27 (len, bits 7-9, is the caller's).
 */
static void hd_header(const struct hostile_victim *v, uint64_t w, struct virtio_vsock_hdr *h)
{
	uint64_t cid = vsock_local_cid();
	uint32_t other = v->type == VSOCK_TYPE_STREAM ? VSOCK_TYPE_SEQPACKET : VSOCK_TYPE_STREAM;
	uint32_t rand_port = (uint32_t)fuzz_field(w, 48, 16) + 40000;
	const uint64_t types[] = { other, 0, 9, 0xffff };
	const uint64_t bufs[] = { 0, 0xffffffffu, v->buf_alloc >> (1 + fuzz_field(w, 40, 4)), 1,
				  0x80000000u };
	const uint64_t fwds[] = { v->fwd_cnt - 65536, v->fwd_cnt + 0x40000000u,
				  0xffffffffu - fuzz_field(w, 40, 4), v->fwd_cnt + 1, 0 };
	const uint64_t srcs[] = { VSOCK_CID_HOST, cid + 1, 0, 0xffffffffu, cid | 1ULL << 32, ~0ULL };
	const uint64_t dsts[] = { cid, cid + 1, 0, VSOCK_CID_ANY, 1, ~0ULL };
	const uint64_t flags[] = { VSOCK_SHUTDOWN_RCV,
				   VSOCK_SHUTDOWN_SEND,
				   VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND,
				   VSOCK_SEQ_EOM | VSOCK_SEQ_EOR,
				   ~3u,
				   0xffffffffu };

	hostile_hdr(v, ops[fuzz_field(w, 0, 4)], h);
	h->type = (uint16_t)pick(w, 4, types, 4, v->type);
	h->buf_alloc = (uint32_t)pick(w, 10, bufs, 5, v->buf_alloc);
	h->fwd_cnt = (uint32_t)pick(w, 13, fwds, 5, v->fwd_cnt);
	h->src_cid = pick(w, 16, srcs, 6, cid);
	h->dst_cid = pick(w, 19, dsts, 6, VSOCK_CID_HOST);
	switch (fuzz_field(w, 22, 3)) {
	case 1:
		h->src_port = rand_port;
		break;
	case 2:
		h->dst_port = rand_port;
		break;
	case 3:
		h->src_port = v->peer_port, h->dst_port = v->local_port;
		break;
	case 4:
		h->src_port = h->dst_port = 0;
		break;
	case 5:
		h->src_port = h->dst_port = 0xffffffffu;
		break;
	}
	h->flags = (uint32_t)pick(
		w, 25, flags, 6,
		h->type == VSOCK_TYPE_SEQPACKET && h->op == VSOCK_OP_RW ? VSOCK_SEQ_EOM : 0);
}

/*
 * One packet with header @h and @payload bytes (a pattern from @w) as
 * @shape says: 0 one descriptor, 1 header and payload apart, 2 the header
 * split after 20 bytes, 3 through the ring's own chain or indirect table.
 */
static int send_shaped(const struct virtio_vsock_hdr *h, uint32_t payload, unsigned int shape,
		       uint64_t w)
{
	struct virtq *vq = virtio_vsock_txq();
	struct vsock_pkt *pkt;
	struct virtq_desc t[3];
	struct vbuf out[2];
	uint64_t pa;
	unsigned int n = 0;
	int ret;

	if (!vq)
		return -ENODEV;
	if (virtq_free_slots(vq) < 3)
		return -ENOSPC;
	pkt = vsock_pkt_alloc(payload);
	if (!pkt)
		return -ENOMEM;
	pkt->hdr = *h;
	for (uint32_t i = 0; i < payload; i++)
		pkt->data[i] = (uint8_t)(w + i);
	pa = virt_to_phys(&pkt->hdr);
	switch (shape) {
	case 0:
		t[n++] = (struct virtq_desc){ pa, VSOCK_HDR_LEN + payload, 0, 0 };
		break;
	case 1:
	case 2:
		if (shape == 2)
			t[n++] = (struct virtq_desc){ pa, 20, VIRTQ_DESC_F_NEXT, 1 };
		t[n] = (struct virtq_desc){ pa + 20 * n, VSOCK_HDR_LEN - 20 * n, 0, 0 };
		if (payload) {
			t[n].flags = VIRTQ_DESC_F_NEXT;
			t[n].next = (uint16_t)(n + 1);
			t[++n] = (struct virtq_desc){ pa + VSOCK_HDR_LEN, payload, 0, 0 };
		}
		n++;
		break;
	default:
		out[0] = (struct vbuf){ &pkt->hdr, VSOCK_HDR_LEN };
		out[1] = (struct vbuf){ pkt->data, payload };
		ret = virtq_add(vq, out, payload ? 2 : 1, NULL, 0, pkt);
		goto added;
	}
	ret = virtq_add_forged(vq, t, n, pkt);
added:
	if (ret)
		vsock_pkt_free(pkt);
	return ret;
}

/*
 * hd: the header (hd_header); len bits 7-9 (0 honest; 1 past the buffer;
 * 2 negative as s32; 3 4 GiB - 1; 4 over 64 KiB with a buffer as large;
 * 5 0 with a payload); payload bits 40-43 for RW; burst bits 28-29 (1, 2,
 * 8, 32); shape bits 30-31 (send_shaped).
 */
static int hd_step(uint64_t w, struct fuzz_outcome *o)
{
	static const unsigned int bursts[] = { 1, 2, 8, 32 };
	unsigned int burst = bursts[fuzz_field(w, 28, 2)], i;
	struct virtio_vsock_hdr h;
	struct hostile_victim v;
	uint32_t payload = 0;
	int ret = 0;

	victim(VSOCK_TYPE_STREAM, &v);
	hd_header(&v, w, &h);
	if (h.op == VSOCK_OP_RW)
		payload = payloads[fuzz_field(w, 40, 4)];
	h.len = payload;
	switch (fuzz_field(w, 7, 3)) {
	case 1:
		h.len = payload + 4096;
		break;
	case 2:
		h.len = 0x80000000u + payload;
		break;
	case 3:
		h.len = 0xffffffffu;
		break;
	case 4:
		h.len = payload = VSOCK_MAX_PKT_PAYLOAD + 1;
		break;
	case 5:
		h.len = 0;
		payload = payload ? payload : 16;
		break;
	}
	o->well_formed = true;
	for (i = 0; i < burst && !ret; i++)
		ret = send_shaped(&h, payload, fuzz_field(w, 30, 2), w);
	/* a burst that found the ring full part way still went out */
	return i > 1 ? 0 : ret;
}

/* ---- cr ---- */

/*
 * cr: 2 + bits 0-3 CREDIT_UPDATEs on the stream victim; bits 4-6 how
 * they walk: 0 honest, 1 fwd_cnt up by bits 8-23, 2 down, 3 across 2^32,
 * 4 buf_alloc 4 GiB - 1 with fwd_cnt jumping 2^31, 5 buf_alloc 0 and
 * 4 GiB - 1 in turn, 6 buf_alloc halving, 7 credit requests between.
 */
static int cr_step(uint64_t w, struct fuzz_outcome *o)
{
	unsigned int n = 2 + fuzz_field(w, 0, 4), walk = fuzz_field(w, 4, 3), i;
	uint32_t step = fuzz_field(w, 8, 16) + 1;
	struct virtio_vsock_hdr h;
	struct hostile_victim v;
	struct virtq *vq = virtio_vsock_txq();
	int ret = 0;

	if (!vq)
		return -ENODEV;
	if (virtq_free_slots(vq) < n)
		return -ENOSPC;
	victim(VSOCK_TYPE_STREAM, &v);
	o->well_formed = true;
	for (i = 0; i < n && !ret; i++) {
		hostile_hdr(&v, VSOCK_OP_CREDIT_UPDATE, &h);
		switch (walk) {
		case 1:
			h.fwd_cnt = v.fwd_cnt + step * i;
			break;
		case 2:
			h.fwd_cnt = v.fwd_cnt - step * i;
			break;
		case 3:
			h.fwd_cnt = 0xffffffffu - step * (n / 2) + step * i;
			break;
		case 4:
			h.buf_alloc = 0xffffffffu;
			h.fwd_cnt = v.fwd_cnt + (i & 1) * 0x80000000u;
			break;
		case 5:
			h.buf_alloc = i & 1 ? 0xffffffffu : 0;
			break;
		case 6:
			h.buf_alloc = v.buf_alloc >> (i % 32);
			break;
		case 7:
			if (i & 1)
				h.op = VSOCK_OP_CREDIT_REQUEST;
			break;
		}
		ret = hostile_queue_pkt(&h, 0, VSOCK_HDR_LEN);
	}
	return i > 1 ? 0 : ret;
}

/* ---- sq ---- */

/*
 * sq: 1 + bits 0-2 RW pieces on a SEQPACKET victim of payloads[bits 3-6];
 * EOM/EOR bits 7-9 (0 EOM on the last, 1 none, 2 EOM on each, 3 EOR
 * alone on the last, 4 EOM|EOR on the last, 5 undefined bits, 6 EOM on
 * the first only); len bits 10-11 (1 past the payload, 2 0 with EOM).
 */
static int sq_step(uint64_t w, struct fuzz_outcome *o)
{
	unsigned int n = 1 + fuzz_field(w, 0, 3), marks = fuzz_field(w, 7, 3), i;
	uint32_t payload = payloads[fuzz_field(w, 3, 4)];
	struct virtio_vsock_hdr h;
	struct hostile_victim v;
	int ret = 0;

	victim(VSOCK_TYPE_SEQPACKET, &v);
	o->well_formed = true;
	for (i = 0; i < n && !ret; i++) {
		bool last = i + 1 == n;

		hostile_hdr(&v, VSOCK_OP_RW, &h);
		h.len = payload;
		switch (marks) {
		case 1:
			break;
		case 2:
			h.flags = VSOCK_SEQ_EOM;
			break;
		case 3:
			h.flags = last ? VSOCK_SEQ_EOR : 0;
			break;
		case 4:
			h.flags = last ? VSOCK_SEQ_EOM | VSOCK_SEQ_EOR : 0;
			break;
		case 5:
			h.flags = ~3u;
			break;
		case 6:
			h.flags = i ? 0 : VSOCK_SEQ_EOM;
			break;
		default:
			h.flags = last ? VSOCK_SEQ_EOM : 0;
			break;
		}
		if (fuzz_field(w, 10, 2) == 1)
			h.len = payload + 1;
		else if (fuzz_field(w, 10, 2) == 2 && last)
			h.len = 0, h.flags = VSOCK_SEQ_EOM;
		ret = send_shaped(&h, payload, 0, w);
	}
	return i > 1 ? 0 : ret;
}

/* ---- rx ---- */

/*
 * rx: bits 0-2: 0 an honest RX buffer of 4 KiB; 1 split after 20 bytes
 * (legal, 2.6.4); 2 tiny (bits 3-7 bytes: shorter than a header);
 * 3 device-readable (5.10.6.3: RX buffers are writable); 4 a readable
 * part before the writable one; 5 of length 0; 6 past RAM; 7 through an
 * indirect table of 2..4 pieces (legal when negotiated).
 */
static int rx_step(uint64_t w, struct fuzz_outcome *o)
{
	struct virtq *vq = virtio_vsock_txq();
	uint32_t size = 4096, tiny = 1 + fuzz_field(w, 3, 5);
	unsigned int shape = fuzz_field(w, 0, 3);
	struct vsock_pkt *pkt;
	struct virtq_desc t[1];
	struct vbuf b[4];
	int ret;

	if (!vq)
		return -ENODEV;
	pkt = vsock_pkt_alloc_rx(size);
	if (!pkt)
		return -ENOMEM;
	o->well_formed = shape <= 2 || shape == 7;
	b[0] = (struct vbuf){ &pkt->hdr, VSOCK_HDR_LEN + size };
	switch (shape) {
	case 1:
		b[0].len = 20;
		b[1] = (struct vbuf){ (uint8_t *)&pkt->hdr + 20, VSOCK_HDR_LEN - 20 + size };
		ret = virtio_vsock_post_rx(pkt, NULL, 0, b, 2);
		break;
	case 2:
		b[0].len = tiny < VSOCK_HDR_LEN ? tiny : VSOCK_HDR_LEN - 1;
		ret = virtio_vsock_post_rx(pkt, NULL, 0, b, 1);
		break;
	case 3:
		ret = virtio_vsock_post_rx(pkt, b, 1, NULL, 0);
		break;
	case 4:
		b[1] = b[0];
		b[0].len = 16;
		ret = virtio_vsock_post_rx(pkt, b, 1, b + 1, 1);
		break;
	case 5:
	case 6:
		t[0] = (struct virtq_desc){ shape == 5 ? virt_to_phys(&pkt->hdr) : 1ULL << 46,
					    shape == 5 ? 0 : size, VIRTQ_DESC_F_WRITE, 0 };
		ret = virtio_vsock_post_rx_forged(pkt, t, 1);
		break;
	case 7: {
		unsigned int n = 2 + fuzz_field(w, 3, 2) % 3;

		for (unsigned int k = 0; k < n; k++) {
			uint32_t from = (VSOCK_HDR_LEN + size) * k / n;
			uint32_t to = (VSOCK_HDR_LEN + size) * (k + 1) / n;

			b[k] = (struct vbuf){ (uint8_t *)&pkt->hdr + from, to - from };
		}
		ret = virtio_vsock_post_rx(pkt, NULL, 0, b, n);
		break;
	}
	default:
		ret = virtio_vsock_post_rx(pkt, NULL, 0, b, 1);
		break;
	}
	if (ret)
		vsock_pkt_free(pkt);
	/* the driver keeps RX full: room comes only as the device fills buffers */
	return ret == -ENOSPC ? -EOPNOTSUPP : ret;
}

int fuzz_vsock_step(const struct fuzz_step *s, struct fuzz_outcome *o)
{
	if (!virtio_vsock_txq())
		return -ENODEV;
	switch (s->kind) {
	case FK_HDR:
		return hd_step(s->word, o);
	case FK_CREDIT:
		return cr_step(s->word, o);
	case FK_SEQ:
		return sq_step(s->word, o);
	case FK_RXBUF:
		return rx_step(s->word, o);
	default:
		return fuzz_ring_step(&vsock_dev, s, o);
	}
}
