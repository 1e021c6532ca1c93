// SPDX-License-Identifier: MIT
/*
 * virtio-net (virtio 1.2, 5.1): net_queues receive/transmit queue pairs
 * (one by default), a control queue only for more than one, no offloads.
 * Frames go up to net/ through net_rx() and come down through the ops in
 * struct net_dev (xmit_burst, xmit_queue, poll).
 *
 * Multiqueue (5.1.6.5.5): with VIRTIO_NET_F_MQ and net_queues=N > 1, N
 * pairs are set up (receiveqK at 2(K-1), transmitqK at 2(K-1)+1, the
 * control queue at 2 * max_virtqueue_pairs, 5.1.2), each with its own
 * MSI-X entry, and VQ_PAIRS_SET asks the device to steer among N. Until
 * it acks, only the first pair sends; every pair set up is polled, as a
 * device may deliver on any of them.
 *
 * Ownership: each pair is one poll context, added at probe to its
 * owner's loop (net_pair_cpu=spread: pair q on the q-th online CPU,
 * wrapping; cpu0: all on CPU 0; on another CPU through an xcpu request),
 * and the pair's rings are handed to that CPU (virtq_set_owner): only
 * its loop touches them, the same code on every CPU. Its queues'
 * interrupts schedule it (net_irq=other: through the CPU that takes
 * them); it receives, hands the frames up (net/ then answers on the same
 * pair, from the same CPU) and reclaims; a send on a pair from any other
 * CPU is refused. The device's own context, on CPU 0, sends the
 * multiqueue command and hands the pairs over once after DRIVER_OK
 * (3.1.1: a pair's first poll kicks its receive queue). Teardown takes
 * the pairs out on their CPUs before anything is freed.
 *
 * RX (5.1.6.3, 5.1.6.4): the queue is kept full of device-writable buffers
 * of `net_rxbuf` bytes. With VIRTIO_NET_F_MRG_RXBUF a frame may span
 * num_buffers of them; the first starts with the 12-byte header. Lengths
 * and num_buffers come from the device and are checked before use.
 *
 * TX (5.1.6.2): each frame is one descriptor, header and frame together
 * (VERSION_1 implies any layout, 2.6.4). The TX queue has a fixed layout
 * (virtqueue.h): slot i is buffer id i, its descriptor points at the
 * slot's buffer for good, so a burst is its ids added in one batch (one
 * publish, one kick) and reclaiming is ids coming back. With txpoll=1
 * sent buffers are reclaimed only in the poll path (as Linux's
 * virtio-net frees them in NAPI) and the device is asked for no TX
 * interrupts; with txpoll=0 the transmit path also reclaims before adding.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/hostile.h"
#include "drivers/virtio/virtio_net.h"
#include "drivers/virtio/virtio_net_ctrl.h"
#include "drivers/virtio/virtio_pci.h"
#include "kernel/barrier.h"
#include "kernel/config.h"
#include "kernel/dma.h"
#include "kernel/io.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"
#include "net/net.h"

CONFIG_KEY(cfg_net_rxbuf) = {
	.name = "net_rxbuf",
	.help = "virtio-net RX buffer bytes, 12-byte header included (small: frames span buffers)",
	.type = CONFIG_UINT,
	.min = 64,
	.max = 4096,
	.def = 2048,
};

CONFIG_KEY(cfg_net_queues) = {
	.name = "net_queues",
	.help = "virtio-net queue pairs wanted (capped by the device's max_virtqueue_pairs)",
	.type = CONFIG_UINT,
	.min = 1,
	.max = 3, /* NET_MAX_QUEUES: host/config-doc reads literals only */
	.def = 1,
};
_Static_assert(NET_MAX_QUEUES == 3, "net_queues' max is NET_MAX_QUEUES");

enum net_irq_choice { NET_IRQ_OWN, NET_IRQ_OTHER, NET_IRQ_CHOICES };
static const char *const net_irq_choices[NET_IRQ_CHOICES + 1] = {
	[NET_IRQ_OWN] = "own",
	[NET_IRQ_OTHER] = "other",
};
CONFIG_KEY(cfg_net_irq) = {
	.name = "net_irq",
	.help = "irq=msix: the CPU a virtio-net queue's vector is sent to: own (the CPU whose loop "
		"owns the queue) or other (the next online CPU, which only forwards it to the owner "
		"as an IPI; with one CPU online the owner); setting it probes the device again",
	.type = CONFIG_ENUM,
	.choices = net_irq_choices,
	.def = NET_IRQ_OWN,
};

enum net_pair_cpu_choice { NET_PAIRS_SPREAD, NET_PAIRS_CPU0, NET_PAIRS_CHOICES };
static const char *const net_pair_cpu_choices[NET_PAIRS_CHOICES + 1] = {
	[NET_PAIRS_SPREAD] = "spread",
	[NET_PAIRS_CPU0] = "cpu0",
};
CONFIG_KEY(cfg_net_pair_cpu) = {
	.name = "net_pair_cpu",
	.help = "the CPU whose loop owns virtio-net queue pair q: spread (the q-th online CPU, "
		"wrapping) or cpu0 (every pair on CPU 0); setting it probes the device again",
	.type = CONFIG_ENUM,
	.choices = net_pair_cpu_choices,
	.def = NET_PAIRS_SPREAD,
};

/* The owner of pair @pair (net_pair_cpu). */
static unsigned int pair_owner(unsigned int pair)
{
	unsigned int cpu = 0;

	if (config_get(&cfg_net_pair_cpu) == NET_PAIRS_SPREAD)
		while (pair--)
			cpu = smp_next_online(cpu);
	return cpu;
}

/* Where the vectors of a pair owned by @owner go (net_irq). */
static unsigned int queue_irq_cpu(unsigned int owner)
{
	return config_get(&cfg_net_irq) == NET_IRQ_OTHER ? smp_next_online(owner) : owner;
}

/* 5.1.3 Feature bits */
#define VIRTIO_NET_F_CSUM 0
#define VIRTIO_NET_F_GUEST_CSUM 1
#define VIRTIO_NET_F_MTU 3
#define VIRTIO_NET_F_MAC 5
#define VIRTIO_NET_F_MRG_RXBUF 15
#define VIRTIO_NET_F_STATUS 16
#define VIRTIO_NET_F_CTRL_VQ 17
#define VIRTIO_NET_F_MQ 22

/* 5.1.4 Device configuration layout */
#define VIRTIO_NET_CFG_MAC 0
#define VIRTIO_NET_CFG_STATUS 6
#define VIRTIO_NET_S_LINK_UP 1
#define VIRTIO_NET_CFG_MAX_PAIRS 8 /* le16 max_virtqueue_pairs, with MQ */

#define RING_MAX 1024
#define TX_BUF_SIZE 2048
/* Largest frame we accept: Ethernet + one VLAN tag, no GSO negotiated. */
#define RX_MAX_FRAME (ETH_FRAME_LEN + 4)
#define STATUS_PERIOD_NS 1000000000ULL
/* QEMU answers control commands at once; TCG on a busy host can be slow */
#define MQ_ACK_NS 2000000000ULL

static const char *const net_feature_names[24] = {
	[VIRTIO_NET_F_CSUM] = "CSUM",
	[VIRTIO_NET_F_GUEST_CSUM] = "GUEST_CSUM",
	[VIRTIO_NET_F_MTU] = "MTU",
	[VIRTIO_NET_F_MAC] = "MAC",
	[VIRTIO_NET_F_MRG_RXBUF] = "MRG_RXBUF",
	[VIRTIO_NET_F_STATUS] = "STATUS",
	[VIRTIO_NET_F_CTRL_VQ] = "CTRL_VQ",
	[VIRTIO_NET_F_MQ] = "MQ",
};

struct tx_slot {
	uint8_t *buf;
	uint32_t len, tag; /* the frame buf holds (tag 0: none), laid out as in net_frame */
};

/* One receive queue (receiveqN, 5.1.2) and what its buffers hold. */
struct vnet_rxq {
	struct virtio_net *vn;
	struct virtq *vq;
	struct net_dev_stats *stats; /* its pair's counters: receiveqN's are pair[N - 1] */
	bool kick_pending; /* buffers added before DRIVER_OK (3.1.1) */
	uint8_t *mem; /* count buffers of vn->rx_buf_size */
	bool *posted;
	uint32_t count;

	/* a frame spanning buffers is gathered here (MRG_RXBUF) */
	uint8_t merge[RX_MAX_FRAME];
	uint32_t merge_len;
	uint16_t merge_left; /* buffers still to come; 0: not merging */
	bool merge_bad;
};

/* One transmit queue (transmitqN) with its fixed slots. */
struct vnet_txq {
	struct virtq *vq;
	struct net_dev_stats *stats; /* its pair's counters */
	bool txpoll; /* the txpoll value it is set up for */
	struct tx_slot *tx;
	struct virtq_fixed_buf *bufs; /* what each slot's descriptor holds */
	uint16_t *free; /* stack of free slot indices: the ring's ids */
	uint32_t count, nfree;
};

/*
 * The control queue, for VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET only (5.1.6.5.5).
 * The command goes out from the first poll (the device is live only
 * after DRIVER_OK) and its ack is looked for in later ones, so a device
 * that never answers costs a timeout, not a hang.
 */
enum mq_state { MQ_OFF, MQ_TO_SEND, MQ_WAITING, MQ_DONE };

struct vnet_ctrl {
	struct virtq *vq;
	uint8_t *buf; /* the command, then the ack byte the device writes */
	enum mq_state state;
	uint16_t want; /* pairs asked for */
	uint64_t sent_ns;
};

/*
 * A queue pair's poll context, owned by one CPU (the only record of the
 * pair's owner: ctx.cpu once added). @ready: handed over after
 * DRIVER_OK, its rings its CPU's; until then its poll does nothing.
 */
struct vnet_pair {
	struct poll_ctx ctx;
	struct virtio_net *vn;
	unsigned int q;
	volatile bool ready;
	bool added; /* its CPU added it (the request's answer) */
	bool late; /* its CPU never answered the request: it may still run there */
	char name[24];
};

struct virtio_net {
	struct net_dev dev;
	struct virtio_device *vdev;
	struct vnet_rxq rxq[NET_MAX_QUEUES];
	struct vnet_txq txq[NET_MAX_QUEUES];
	struct vnet_pair pairs[NET_MAX_QUEUES];
	struct poll_ctx dev_ctx; /* CPU 0: the control queue, the handover */
	uint16_t npairs; /* set up; dev.nqueues are in use */
	uint16_t max_pairs; /* the device's max_virtqueue_pairs, 1 without MQ */
	struct vnet_ctrl ctrl;
	bool mrg_rxbuf;
	bool handover_pending; /* the pairs wait for the first poll after DRIVER_OK */
	uint32_t rx_buf_size;
};

/* The device net_attack.c writes into: the last one probed. */
static struct virtio_net *attack_dev;

/* ---- RX ---- */

static int rx_post(struct vnet_rxq *rq, uint32_t i)
{
	uint32_t size = rq->vn->rx_buf_size;
	struct vbuf in = { rq->mem + (size_t)i * size, size };
	int ret = virtq_add(rq->vq, NULL, 0, &in, 1, in.addr);

	if (ret)
		rq->stats->rx_refill_fail++;
	else
		rq->posted[i] = true;
	return ret;
}

static void rx_kick(struct vnet_rxq *rq)
{
	if (virtq_kick(rq->vq))
		rq->stats->rx_kicks++;
}

/* The buffer index of a token the device handed back, or -1 if it is not ours. */
static long rx_index(struct vnet_rxq *rq, void *token)
{
	uint32_t size = rq->vn->rx_buf_size;
	uintptr_t off = (uintptr_t)token - (uintptr_t)rq->mem;

	if ((uintptr_t)token < (uintptr_t)rq->mem || off % size || off / size >= rq->count ||
	    !rq->posted[off / size])
		return -1;
	return (long)(off / size);
}

/* A whole frame up to net/, counted for its pair. */
static void rx_deliver(struct vnet_rxq *rq, const uint8_t *frame, uint32_t len)
{
	rq->stats->rx_packets++;
	rq->stats->rx_bytes += len;
	net_rx(&rq->vn->dev, frame, len);
}

/* A frame that started in an earlier buffer: append, deliver when whole. */
static void rx_merge(struct vnet_rxq *rq, const uint8_t *buf, uint32_t len)
{
	if (!rq->merge_bad && len > sizeof(rq->merge) - rq->merge_len) {
		rq->stats->rx_drop_long++;
		rq->merge_bad = true;
	}
	if (!rq->merge_bad) {
		memcpy(rq->merge + rq->merge_len, buf, len);
		rq->merge_len += len;
	}
	if (--rq->merge_left == 0 && !rq->merge_bad)
		rx_deliver(rq, rq->merge, rq->merge_len);
}

/* The first buffer of a frame: header, then data (5.1.6.4). */
static void rx_head(struct vnet_rxq *rq, const uint8_t *buf, uint32_t len)
{
	struct virtio_net *vn = rq->vn;
	uint16_t num_buffers = 1;

	if (len < VIRTIO_NET_HDR_LEN) {
		rq->stats->rx_drop_short++;
		return;
	}
	/* 5.1.6.4.1: num_buffers is set only with MRG_RXBUF; without it, 1. */
	if (vn->mrg_rxbuf)
		num_buffers = (uint16_t)(buf[10] | buf[11] << 8);
	/*
	 * 0, or more buffers than the ring holds, is impossible: drop this
	 * one; what follows is parsed as new frames and fails the checks if
	 * it is not. A plausible count is trusted for framing only: a frame
	 * longer than we accept is gathered, counted and dropped whole.
	 */
	if (num_buffers == 0 || num_buffers > rq->count) {
		rq->stats->rx_drop_num_buffers++;
		return;
	}
	buf += VIRTIO_NET_HDR_LEN;
	len -= VIRTIO_NET_HDR_LEN;
	if (num_buffers == 1) {
		if (len > RX_MAX_FRAME) {
			rq->stats->rx_drop_long++;
			return;
		}
		rx_deliver(rq, buf, len); /* straight from the ring buffer */
		return;
	}
	rq->merge_len = 0;
	rq->merge_bad = false;
	rq->merge_left = num_buffers;
	rx_merge(rq, buf, len);
}

static unsigned int rx_poll(struct vnet_rxq *rq, unsigned int budget)
{
	unsigned int frames = 0, reposted = 0;
	uint32_t len;
	void *token;

	while (frames < budget && (token = virtq_get_used(rq->vq, &len))) {
		long i = rx_index(rq, token);

		if (i < 0) {
			rq->stats->rx_drop_bad_token++;
			continue;
		}
		/* len <= rx_buf_size: the ring bounds it by what we offered */
		rq->posted[i] = false;
		if (rq->merge_left)
			rx_merge(rq, token, len);
		else
			rx_head(rq, token, len);
		if (!rq->merge_left)
			frames++;
		if (!rx_post(rq, (uint32_t)i))
			reposted++;
	}
	if (reposted || rq->kick_pending) {
		rq->kick_pending = false;
		rx_kick(rq);
	}
	return frames;
}

/* ---- TX ---- */

/*
 * Returns the buffers taken back: work for the poll loop (a sender waits
 * on it). The ring checks each id the device names (in range, in flight)
 * and writes the good ones straight onto the free stack: at most the
 * slots in flight come back, so the stack cannot overflow.
 */
static unsigned int tx_reclaim(struct vnet_txq *tq, bool in_xmit)
{
	unsigned int n, bad;

	n = virtq_fixed_reclaim(tq->vq, &tq->free[tq->nfree], tq->count - tq->nfree, &bad);
	tq->nfree += n;
	tq->stats->tx_bad_token += bad;
	tq->stats->tx_reclaimed += n;
	if (in_xmit)
		tq->stats->tx_reclaim_in_xmit += n;
	return n;
}

/*
 * Apply txpoll to TX queue @tq, on its owner: no used-buffer notifications when sent
 * buffers are reclaimed by polling; with txpoll=0 and MSI-X the device
 * interrupts for TX completions as in Linux's TX NAPI mode.
 */
static void tx_apply_txpoll(struct vnet_txq *tq, bool force)
{
	bool txpoll = config_get(&cfg_txpoll);

	if (txpoll == tq->txpoll && !force)
		return;
	tq->txpoll = txpoll;
	if (txpoll || !virtio_queue_interrupts(tq->vq))
		virtq_disable_cb(tq->vq);
	else
		virtq_enable_cb(tq->vq);
}

/*
 * The frame into a slot's buffer, after the header that stays zero (set
 * once at probe), and the slot's descriptor to its length. The device
 * only reads TX buffers (2.7.4); one that writes them anyway garbles only
 * what it is sent itself.
 */
static void tx_fill(struct vnet_txq *tq, uint16_t slot, const struct net_frame *f)
{
	struct tx_slot *s = &tq->tx[slot];
	struct vbuf b = { s->buf, VIRTIO_NET_HDR_LEN + f->len };

	memcpy(s->buf + VIRTIO_NET_HDR_LEN, f->data, f->len);
	s->tag = f->tag;
	s->len = f->len;
	/* the slot is free (on the stack), so the ring takes it */
	virtq_fixed_set(tq->vq, tq->bufs, slot, &b);
}

/*
 * A tagged frame the slot already holds need not be copied again: the
 * tag promises the same bytes (struct net_frame). Its length was checked
 * when it was copied.
 */
static bool tx_holds(const struct tx_slot *s, const struct net_frame *f)
{
	uint64_t have, want;

	/* len and tag side by side in both: one compare; tag 0 promises nothing */
	__builtin_memcpy(&have, &s->len, sizeof(have));
	__builtin_memcpy(&want, &f->len, sizeof(want));
	return have == want && want >> 32;
}

static bool tx_frame_ok(struct vnet_txq *tq, const struct net_frame *f)
{
	if (f->len <= TX_BUF_SIZE - VIRTIO_NET_HDR_LEN && f->len >= ETH_HLEN)
		return true;
	tq->stats->tx_too_long++; /* taken and dropped: resending would not help */
	return false;
}

/*
 * The ring took fewer than were filled (it broke): the frames that went
 * are the first @added good ones; returns how many frames that consumed.
 */
static unsigned int tx_consumed(const struct net_frame *frames, unsigned int added, uint64_t *bytes)
{
	unsigned int i, good = 0;

	*bytes = 0;
	for (i = 0; good < added; i++) {
		if (frames[i].len > TX_BUF_SIZE - VIRTIO_NET_HDR_LEN || frames[i].len < ETH_HLEN)
			continue;
		*bytes += frames[i].len;
		good++;
	}
	return i;
}

/*
 * The common case (pktgen) alone, with no call in the loop so everything
 * stays in registers: from @f on, frames the slots from *@idp on already
 * hold. Returns where it stopped; *@idp and *@sum move on.
 */
static const struct net_frame *tx_take_held(const struct tx_slot *tx, const struct net_frame *f,
					    const struct net_frame *end, const uint16_t **idp,
					    const uint16_t *id_end, uint64_t *sum)
{
	const uint16_t *id = *idp;
	size_t k, n = (size_t)(end - f) < (size_t)(id_end - id) ? (size_t)(end - f) :
								  (size_t)(id_end - id);
	uint64_t bytes = 0;

	for (k = 0; k < n && tx_holds(&tx[id[k]], &f[k]); k++)
		bytes += f[k].len;
	*idp = id + k;
	*sum += bytes;
	return f + k;
}

/*
 * Frames into the slots ids[0..m-1] in order, frame k into ids[k]
 * (dropped frames take none). Returns the frames consumed; *taken the
 * slots filled, *bytes their frame bytes.
 */
static unsigned int tx_take(struct vnet_txq *tq, const struct net_frame *frames, unsigned int n,
			    const uint16_t *ids, unsigned int m, unsigned int *taken,
			    uint64_t *bytes)
{
	const struct net_frame *f = frames, *end = frames + n;
	const uint16_t *id = ids, *id_end = ids + m;
	uint64_t sum = 0;

	for (;;) {
		f = tx_take_held(tq->tx, f, end, &id, id_end, &sum);
		if (f == end)
			break;
		if (tx_frame_ok(tq, f)) {
			if (id == id_end) {
				tq->stats->tx_ring_full++;
				break;
			}
			tx_fill(tq, *id++, f);
			sum += f->len;
		}
		f++;
	}
	*taken = (unsigned int)(id - ids);
	*bytes = sum;
	return (unsigned int)(f - frames);
}

/*
 * The burst takes the top @m ids of the free stack, and the ring gets
 * them in one batch. Ids the ring did not take stay on the stack.
 */
static unsigned int tx_burst(struct virtio_net *vn, unsigned int q, const struct net_frame *frames,
			     unsigned int n)
{
	struct vnet_txq *tq = &vn->txq[q];
	unsigned int i, m, taken, added;
	uint64_t bytes;
	uint16_t *ids;

	/*
	 * Another loop's ring, or a pair the device does not move frames on
	 * yet (before the multiqueue ack, 5.1.6.5.5): dropped, counted once
	 * here, and taken (net_xmit counts what a driver did not take).
	 */
	if (!virtq_owned(tq->vq)) {
		net_stat_add(tx_wrong_cpu, n);
		return n;
	}
	if (q >= (vn->dev.nqueues ? vn->dev.nqueues : 1u)) {
		net_stat_add(tx_pair_unused, n);
		return n;
	}
	tx_apply_txpoll(tq, false);
	if (!tq->txpoll)
		tx_reclaim(tq, true);
	m = n < tq->nfree ? n : tq->nfree;
	ids = &tq->free[tq->nfree - m];
	i = tx_take(tq, frames, n, ids, m, &taken, &bytes);
	added = virtq_fixed_add(tq->vq, tq->bufs, ids, taken);
	if (added < m)
		memmove(ids, ids + added, (m - added) * sizeof(*ids));
	tq->nfree -= added;
	if (added < taken) {
		tq->stats->tx_ring_full++;
		i = tx_consumed(frames, added, &bytes);
	}
	tq->stats->tx_packets += added;
	tq->stats->tx_bytes += bytes;
	/* one notification for the whole burst, if the device wants one */
	if (added && virtq_kick(tq->vq))
		tq->stats->tx_kicks++;
	/* full: sent buffers come back in the poll path, the pair's context */
	if (i < n)
		poll_schedule(&vn->pairs[q].ctx);
	return i;
}

static unsigned int vnet_xmit_burst(struct net_dev *dev, const struct net_frame *frames,
				    unsigned int n)
{
	return tx_burst(dev->priv, 0, frames, n);
}

static unsigned int vnet_xmit_queue(struct net_dev *dev, unsigned int q,
				    const struct net_frame *frames, unsigned int n)
{
	return q < NET_MAX_QUEUES ? tx_burst(dev->priv, q, frames, n) : 0;
}

struct virtq *virtio_net_txq(void)
{
	return attack_dev ? attack_dev->txq[0].vq : NULL;
}

/* Its first pair's context: where what virtio_net_txq sent is reclaimed. */
struct poll_ctx *virtio_net_txq_ctx(void)
{
	return attack_dev ? &attack_dev->pairs[0].ctx : NULL;
}

/*
 * Hostile-driver support (hostile.h), never on the data path: a free
 * slot of the first TX queue for a buffer the caller keeps. The slot
 * forgets what it held, so the next frame through it is copied into its
 * own buffer again, behind its own all-zero header.
 */
static struct vnet_txq *raw_slot(uint16_t *id)
{
	struct vnet_txq *tq;
	struct tx_slot *s;

	if (!attack_dev)
		return NULL;
	tq = &attack_dev->txq[0];
	if (virtq_is_broken(tq->vq))
		return NULL;
	tx_reclaim(tq, false);
	if (!tq->nfree)
		return NULL;
	*id = tq->free[tq->nfree - 1];
	s = &tq->tx[*id];
	s->len = 0;
	s->tag = 0;
	return tq;
}

static int raw_error(void)
{
	if (!attack_dev)
		return -ENODEV;
	return virtq_is_broken(attack_dev->txq[0].vq) ? -EIO : -ENOSPC;
}

/* @len bytes at @bytes, the virtio-net header included, as one descriptor. */
int virtio_net_tx_raw(const void *bytes, uint32_t len)
{
	struct vbuf b = { (void *)bytes, len };
	struct vnet_txq *tq;
	uint16_t id;

	tq = raw_slot(&id);
	if (!tq)
		return raw_error();
	if (virtq_fixed_set(tq->vq, tq->bufs, id, &b))
		return -EINVAL;
	if (!virtq_fixed_add(tq->vq, tq->bufs, &id, 1))
		return -ENOSPC;
	tq->nfree--;
	return 0;
}

/* One descriptor exactly as @d says: any address, length and flags. */
int virtio_net_tx_forged(const struct virtq_desc *d)
{
	struct vnet_txq *tq;
	uint16_t id;
	int ret;

	tq = raw_slot(&id);
	if (!tq)
		return raw_error();
	ret = virtq_fixed_add_forged(tq->vq, tq->bufs, id, d);
	if (ret)
		return ret;
	tq->nfree--;
	return 0;
}

/* Read when shown: nothing in the guest acts on it. */
static bool vnet_link_up(struct net_dev *dev)
{
	struct virtio_net *vn = dev->priv;
	uint16_t status;

	if (!virtio_has_feature(vn->vdev, VIRTIO_NET_F_STATUS))
		return true; /* 5.1.4: without STATUS assume the link is up */
	virtio_config_read(vn->vdev, VIRTIO_NET_CFG_STATUS, &status, sizeof(status));
	return status & VIRTIO_NET_S_LINK_UP;
}

/* ---- the control queue: multiqueue (5.1.6.5.5) ---- */

/* No ack, a wrong one, or none in time: one pair, as before the command. */
static void mq_fallback(struct virtio_net *vn, uint64_t *counter, const char *why)
{
	(*counter)++;
	vn->ctrl.state = MQ_DONE;
	vn->dev.nqueues = 1;
	printf("virtio-net: %u queue pairs not taken (%s), using 1\n", vn->ctrl.want, why);
}

static void mq_send(struct virtio_net *vn)
{
	struct vnet_ctrl *c = &vn->ctrl;
	struct vbuf out = { c->buf, VIRTIO_NET_CTRL_MQ_LEN };
	struct vbuf in = { c->buf + VIRTIO_NET_CTRL_MQ_LEN, 1 };

	virtio_net_ctrl_mq_encode(c->buf, c->want); /* want is 2..NET_MAX_QUEUES */
	/* a value no answer has, so a device that writes nothing is seen */
	c->buf[VIRTIO_NET_CTRL_MQ_LEN] = 0xff;
	c->sent_ns = now_ns();
	if (virtq_add(c->vq, &out, 1, &in, 1, c->buf)) {
		mq_fallback(vn, &vn->dev.stats.mq_ack_bad, "control queue refused it");
		return;
	}
	c->state = MQ_WAITING;
	virtq_kick(c->vq);
}

static void mq_answer(struct virtio_net *vn, void *token, uint32_t len)
{
	struct vnet_ctrl *c = &vn->ctrl;
	int ret = virtio_net_ctrl_ack(len, c->buf[VIRTIO_NET_CTRL_MQ_LEN]);

	if (token != c->buf) {
		mq_fallback(vn, &vn->dev.stats.mq_ack_bad, "completion not ours");
	} else if (ret == -EIO) {
		mq_fallback(vn, &vn->dev.stats.mq_ack_err, "VIRTIO_NET_ERR");
	} else if (ret) {
		mq_fallback(vn, &vn->dev.stats.mq_ack_bad, "malformed ack");
	} else {
		c->state = MQ_DONE;
		vn->dev.nqueues = c->want;
		printf("virtio-net: %u queue pairs in use\n", c->want);
	}
}

static void mq_poll(struct virtio_net *vn)
{
	struct vnet_ctrl *c = &vn->ctrl;
	uint32_t len;
	void *token;

	if (c->state == MQ_TO_SEND) {
		mq_send(vn);
		return;
	}
	token = virtq_get_used(c->vq, &len);
	if (token)
		mq_answer(vn, token, len);
	else if (now_ns() - c->sent_ns > MQ_ACK_NS)
		mq_fallback(vn, &vn->dev.stats.mq_timeout, "no answer");
}

/* ---- the poll contexts ---- */

/*
 * A pair, on its CPU: sent buffers back, received frames up (what net/
 * sends meanwhile leaves on this pair, net_set_rx_queue), at most
 * @budget frames. Freed TX buffers count as one unit of work: a sender
 * waiting for room goes on. Its RX notifications are never turned off:
 * rx_poll stops on a look after used_event and its barrier (2.7.7.2),
 * or on the budget.
 */
static unsigned int pair_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct vnet_pair *p = (struct vnet_pair *)ctx;
	struct virtio_net *vn = p->vn;
	unsigned int frames, reclaimed;

	if (!__atomic_load_n(&p->ready, __ATOMIC_ACQUIRE))
		return 0;
	tx_apply_txpoll(&vn->txq[p->q], false);
	reclaimed = tx_reclaim(&vn->txq[p->q], false);
	net_set_rx_queue(p->q);
	frames = rx_poll(&vn->rxq[p->q], budget);
	net_set_rx_queue(net_this_cpu()->home_queue);
	if (!virtio_queue_interrupts(vn->rxq[p->q].vq))
		poll_schedule_polled(ctx);
	/*
	 * With TX interrupts (txpoll=0) completing re-armed them: a buffer
	 * sent back after the reclaim's look and before its used_event is
	 * not announced, so look once more.
	 */
	if (!vn->txq[p->q].txpoll && virtq_has_used(vn->txq[p->q].vq))
		poll_schedule(ctx);
	return frames + (frames < budget && reclaimed);
}

/* The watchdog's look: frames its receive queue holds, sent buffers its TX interrupts owe. */
static enum poll_verdict pair_check(struct poll_ctx *ctx, bool count, const char **what)
{
	struct vnet_pair *p = (struct vnet_pair *)ctx;
	struct vnet_txq *tq = &p->vn->txq[p->q];
	enum poll_verdict v;

	*what = p->name;
	if (!p->ready)
		return POLL_IDLE;
	v = virtio_queue_check(p->vn->rxq[p->q].vq, count);
	if (v == POLL_IDLE && !tq->txpoll && virtio_queue_interrupts(tq->vq))
		v = virtio_queue_check(tq->vq, count);
	return v;
}

/* On the pair's CPU (a request, or CPU 0 itself): the pair joins its loop. */
static void pair_add_here(struct vnet_pair *p)
{
	struct net_cpu *nc = net_this_cpu();

	/* -EBUSY: a late request, after CPU 0 took the pair over */
	if (poll_ctx_add(&p->ctx))
		return;
	p->added = true;
	nc->dev = &p->vn->dev;
	if (!nc->pairs++ || p->q < nc->home_queue)
		nc->home_queue = (uint16_t)p->q;
}

static void pair_add_request(const struct spsc_msg *m, unsigned int cpu)
{
	pair_add_here((struct vnet_pair *)(uintptr_t)m->arg[0]);
}

/* On the pair's CPU: out of its loop; a sender there (pktgen) sees the device go. */
static void pair_del_here(struct vnet_pair *p)
{
	struct net_cpu *nc = net_this_cpu();

	__atomic_store_n(&p->ready, false, __ATOMIC_RELEASE);
	poll_ctx_del(&p->ctx);
	if (p->added && !--nc->pairs)
		nc->dev = NULL;
	p->added = false;
}

static void pair_del_request(const struct spsc_msg *m, unsigned int cpu)
{
	pair_del_here((struct vnet_pair *)(uintptr_t)m->arg[0]);
}

/*
 * Requests to another CPU wait by spinning, not in the loop (probe and
 * remove may run inside a context): a CPU takes one within microseconds,
 * and one that does not answer in PAIR_SYNC_NS is not waited for again.
 */
#define PAIR_SYNC_NS 2000000000ULL

/* Pair @p into CPU @cpu's loop, on CPU 0 when @cpu cannot be asked; false: in none. */
static bool pair_add(struct vnet_pair *p, unsigned int cpu)
{
	snprintf(p->name, sizeof(p->name), "virtio-net pair %u", p->q);
	p->ctx.name = p->name;
	p->ctx.poll = pair_poll;
	p->ctx.check = pair_check;
	if (cpu && !xcpu_sync(cpu, pair_add_request, (uintptr_t)p, PAIR_SYNC_NS)) {
		/* the request may run later: it finds the pair claimed, or not ready */
		p->late = true;
		printf("virtio-net: cpu %u cannot be asked to poll pair %u: cpu 0 does\n", cpu,
		       p->q);
	}
	if (!p->added)
		pair_add_here(p);
	if (!p->added)
		printf("virtio-net: no poll context slot for pair %u: fewer pairs\n", p->q);
	return p->added;
}

/* Out of its CPU's loop; false when that CPU did not answer (keep its memory). */
static bool pair_del(struct vnet_pair *p)
{
	struct percpu *cpu = p->ctx.cpu;

	if (!p->added)
		return true;
	if (cpu == this_cpu()) {
		pair_del_here(p);
		return true;
	}
	if (xcpu_sync(cpu->index, pair_del_request, (uintptr_t)p, PAIR_SYNC_NS))
		return true;
	printf("virtio-net: cpu %u did not stop polling pair %u: its memory stays allocated\n",
	       cpu->index, p->q);
	return false;
}

/*
 * After DRIVER_OK (3.1.1): each pair's rings to its CPU, then the pair
 * ready and scheduled there; its first poll kicks its receive queue.
 */
static void pairs_hand_over(struct virtio_net *vn)
{
	vn->handover_pending = false;
	for (unsigned int q = 0; q < vn->npairs; q++) {
		struct vnet_pair *p = &vn->pairs[q];

		if (!p->added)
			continue;
		virtq_set_owner(vn->rxq[q].vq, p->ctx.cpu);
		virtq_set_owner(vn->txq[q].vq, p->ctx.cpu);
		__atomic_store_n(&p->ready, true, __ATOMIC_RELEASE);
		poll_schedule(&p->ctx);
	}
}

/* QEMU answers control commands at once; the ack is looked for this often. */
#define MQ_POLL_NS 1000000ULL

/* CPU 0: the handover, then the control queue until it answered. */
static unsigned int vnet_dev_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct virtio_net *vn =
		(struct virtio_net *)((char *)ctx - offsetof(struct virtio_net, dev_ctx));

	if (vn->handover_pending)
		pairs_hand_over(vn);
	if (vn->ctrl.state == MQ_TO_SEND || vn->ctrl.state == MQ_WAITING)
		mq_poll(vn);
	if (vn->ctrl.state == MQ_WAITING)
		poll_schedule_at(ctx, now_ns() + MQ_POLL_NS);
	return 0;
}

/* What the rings counted where the interrupts were taken (isr.S, virtio_pci.c). */
static void vnet_interrupts(const struct net_dev *dev, uint64_t *rx, uint64_t *tx)
{
	const struct virtio_net *vn = dev->priv;
	struct virtq_stats st;

	*rx = *tx = 0;
	for (unsigned int q = 0; q < vn->npairs; q++) {
		virtq_get_stats(vn->rxq[q].vq, &st);
		*rx += st.interrupts;
		virtq_get_stats(vn->txq[q].vq, &st);
		*tx += st.interrupts;
	}
}

/* The pair's CPU, for net/ (pktgen, the counters): where its context is. */
static unsigned int vnet_pair_cpu(const struct net_dev *dev, unsigned int q)
{
	const struct virtio_net *vn = dev->priv;
	const struct percpu *cpu = q < vn->npairs ? vn->pairs[q].ctx.cpu : NULL;

	return cpu ? cpu->index : 0;
}

static void vnet_show_queues(struct virtio_net *vn)
{
	const struct vnet_ctrl *c = &vn->ctrl;

	printf("virtio-net: queue pairs %u in use, %u set up, device max %u, net_queues=%llu%s\n",
	       vn->dev.nqueues, vn->npairs, vn->max_pairs,
	       (unsigned long long)config_get(&cfg_net_queues),
	       c->state == MQ_WAITING || c->state == MQ_TO_SEND ? " (asking the device)" : "");
	if (vn->npairs < 2)
		return;
	for (unsigned int q = 0; q < vn->npairs; q++) {
		const struct net_dev_stats *st = &vn->dev.pair[q];

		printf("virtio-net: pair %u cpu %u rx %llu packets %llu bytes, tx %llu packets "
		       "%llu bytes, tx free %u\n",
		       q, vnet_pair_cpu(&vn->dev, q), (unsigned long long)st->rx_packets,
		       (unsigned long long)st->rx_bytes, (unsigned long long)st->tx_packets,
		       (unsigned long long)st->tx_bytes, vn->txq[q].nfree);
	}
}

static void vnet_show(struct net_dev *dev)
{
	struct virtio_net *vn = dev->priv;
	struct virtq_stats rx, tx;

	virtq_get_stats(vn->rxq[0].vq, &rx);
	virtq_get_stats(vn->txq[0].vq, &tx);
	printf("virtio-net: %s rings rx %u tx %u, rx buffers %u x %u B%s, txpoll=%d, "
	       "tx free %u\n",
	       virtq_layout(vn->rxq[0].vq) == VIRTQ_PACKED ? "packed" : "split",
	       virtq_size(vn->rxq[0].vq), virtq_size(vn->txq[0].vq), vn->rxq[0].count,
	       vn->rx_buf_size, vn->mrg_rxbuf ? " mergeable" : "", vn->txq[0].txpoll,
	       vn->txq[0].nfree);
	printf("virtio-net: rxq bad completions %llu, txq bad completions %llu, "
	       "tx kicks suppressed %llu\n",
	       (unsigned long long)rx.bad_completions, (unsigned long long)tx.bad_completions,
	       (unsigned long long)tx.kicks_suppressed);
	vnet_show_queues(vn);
}

static const struct net_dev_ops vnet_ops = {
	.xmit_burst = vnet_xmit_burst,
	.xmit_queue = vnet_xmit_queue,
	.pair_cpu = vnet_pair_cpu,
	.link_up = vnet_link_up,
	.interrupts = vnet_interrupts,
	.show = vnet_show,
};

/* ---- probe ---- */

static void rxq_free(struct vnet_rxq *rq)
{
	dma_free(rq->mem);
	free(rq->posted);
}

static void txq_free(struct vnet_txq *tq)
{
	if (tq->tx)
		for (uint32_t i = 0; i < tq->count; i++)
			dma_free(tq->tx[i].buf);
	free(tq->tx);
	free(tq->bufs);
	free(tq->free);
}

static void vnet_free(struct virtio_net *vn);

/* Every pair and the device's context out of their loops, then freed. */
static void vnet_release(struct virtio_net *vn)
{
	bool all = true;

	poll_ctx_del(&vn->dev_ctx);
	for (unsigned int q = 0; q < NET_MAX_QUEUES; q++) {
		all &= q >= vn->npairs || pair_del(&vn->pairs[q]);
		if (vn->pairs[q].late) {
			printf("virtio-net: pair %u's request may still run: its memory stays "
			       "allocated\n",
			       q);
			all = false;
		}
	}
	if (all)
		vnet_free(vn);
}

static void vnet_free(struct virtio_net *vn)
{
	for (unsigned int q = 0; q < NET_MAX_QUEUES; q++) {
		rxq_free(&vn->rxq[q]);
		txq_free(&vn->txq[q]);
	}
	dma_free(vn->ctrl.buf);
	free(vn);
}

static void read_mac(struct virtio_net *vn)
{
	uint64_t t = now_ns();

	if (virtio_has_feature(vn->vdev, VIRTIO_NET_F_MAC)) {
		virtio_config_read(vn->vdev, VIRTIO_NET_CFG_MAC, vn->dev.mac, ETH_ALEN);
		return;
	}
	/* 5.1.5: without VIRTIO_NET_F_MAC, make one up: locally administered, unicast */
	vn->dev.mac[0] = 0x02;
	for (int i = 1; i < ETH_ALEN; i++)
		vn->dev.mac[i] = (uint8_t)(t >> (8 * i));
}

/* 5.1.2: receiveqN is queue 2(N-1), transmitqN 2(N-1)+1. */
static int rxq_setup(struct virtio_net *vn, uint16_t pair)
{
	struct vnet_rxq *rq = &vn->rxq[pair];
	struct poll_ctx *ctx = &vn->pairs[pair].ctx;

	rq->vn = vn;
	rq->stats = &vn->dev.pair[pair];
	rq->vq = virtio_setup_queue_steered(vn->vdev, 2 * pair, RING_MAX, ctx,
					    queue_irq_cpu(ctx->cpu ? ctx->cpu->index : 0));
	if (!rq->vq)
		return -1;
	/* every chain is one descriptor: indirect tables would only cost */
	virtq_set_indirect_min(rq->vq, 0);
	rq->count = virtq_size(rq->vq);
	rq->mem = dma_alloc((size_t)rq->count * vn->rx_buf_size, 64);
	rq->posted = calloc(rq->count, sizeof(*rq->posted));
	if (!rq->mem || !rq->posted)
		return -1;
	/* 3.1.1: buffers may be added now; the kick waits for DRIVER_OK */
	for (uint32_t i = 0; i < rq->count; i++)
		if (rx_post(rq, i))
			break;
	rq->kick_pending = true;
	return 0;
}

/* Its interrupts (txpoll=0 only, tx_apply_txpoll) schedule the pair too. */
static int txq_setup(struct virtio_net *vn, uint16_t pair)
{
	struct vnet_txq *tq = &vn->txq[pair];
	struct poll_ctx *ctx = &vn->pairs[pair].ctx;

	tq->stats = &vn->dev.pair[pair];
	tq->vq = virtio_setup_queue_steered(vn->vdev, 2 * pair + 1, RING_MAX, ctx,
					    queue_irq_cpu(ctx->cpu ? ctx->cpu->index : 0));
	if (!tq->vq)
		return -1;
	virtq_set_indirect_min(tq->vq, 0);
	tq->count = virtq_size(tq->vq);
	tq->tx = calloc(tq->count, sizeof(*tq->tx));
	tq->bufs = calloc(tq->count, sizeof(*tq->bufs));
	tq->free = calloc(tq->count, sizeof(*tq->free));
	if (!tq->tx || !tq->bufs || !tq->free)
		return -1;
	for (uint32_t i = 0; i < tq->count; i++) {
		tq->tx[i].buf = dma_alloc(TX_BUF_SIZE, 64);
		if (!tq->tx[i].buf)
			return -1;
		/* 5.1.6.2: no offloads asked for, so every header is all zeroes */
		memset(tq->tx[i].buf, 0, VIRTIO_NET_HDR_LEN);
		tq->free[tq->nfree++] = (uint16_t)(tq->count - 1 - i);
	}
	return 0;
}

/*
 * How many pairs to set up: net_queues, capped by the device's
 * max_virtqueue_pairs (5.1.4: valid only with MQ, and 1..0x8000) and by
 * what the transport's queue table holds.
 */
static uint16_t pairs_wanted(struct virtio_net *vn)
{
	uint64_t want = config_get(&cfg_net_queues);
	uint16_t max = 1;

	if (virtio_has_feature(vn->vdev, VIRTIO_NET_F_MQ) &&
	    virtio_has_feature(vn->vdev, VIRTIO_NET_F_CTRL_VQ)) {
		virtio_config_read(vn->vdev, VIRTIO_NET_CFG_MAX_PAIRS, &max, sizeof(max));
		if (max < VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN ||
		    max > VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MAX) {
			printf("virtio-net: max_virtqueue_pairs %u out of range, using 1\n", max);
			max = 1;
		}
	} else if (want > 1) {
		printf("virtio-net: net_queues=%llu but the device has no multiqueue "
		       "(VIRTIO_NET_F_MQ), using 1 queue pair\n",
		       (unsigned long long)want);
	}
	vn->max_pairs = max;
	/* the control queue's index is 2 * max (5.1.2): the table must hold it */
	if (want > 1 && 2 * max >= VIRTIO_MAX_QUEUES) {
		printf("virtio-net: control queue %u beyond the transport's %d queues, "
		       "using 1 queue pair\n",
		       2 * max, VIRTIO_MAX_QUEUES);
		want = 1;
	}
	if (want > max)
		want = max;
	return (uint16_t)want;
}

/* The control queue follows the last pair the device has (5.1.2). */
static int ctrl_setup(struct virtio_net *vn)
{
	struct vnet_ctrl *c = &vn->ctrl;

	c->vq = virtio_setup_queue(vn->vdev, 2 * vn->max_pairs, 0, NULL); /* looked at by time */
	c->buf = dma_alloc(VIRTIO_NET_CTRL_MQ_LEN + 1, 64);
	if (!c->vq || !c->buf)
		return -1;
	c->want = vn->npairs;
	c->state = MQ_TO_SEND;
	return 0;
}

static int queues_setup(struct virtio_net *vn)
{
	uint16_t want = pairs_wanted(vn);

	for (vn->npairs = 0; vn->npairs < want; vn->npairs++) {
		struct vnet_pair *p = &vn->pairs[vn->npairs];

		p->vn = vn;
		p->q = vn->npairs;
		if (!pair_add(p, pair_owner(vn->npairs))) {
			if (!vn->npairs)
				return -1;
			break; /* the device is asked for the pairs polled (5.1.6.5.5) */
		}
		if (rxq_setup(vn, vn->npairs) || txq_setup(vn, vn->npairs)) {
			vn->npairs++; /* taken out again with the others */
			return -1;
		}
	}
	vn->dev.queues_set_up = vn->npairs;
	vn->dev.nqueues = 1; /* 5.1.6.5.5: only the first pair until the device acks */
	if (vn->npairs > 1 && ctrl_setup(vn))
		return -1;
	return 0;
}

static int vnet_probe(struct virtio_device *vdev)
{
	struct virtio_net *vn = calloc(1, sizeof(*vn));
	uint32_t min_buf;

	if (!vn)
		return -1;
	vn->vdev = vdev;
	vn->mrg_rxbuf = virtio_has_feature(vdev, VIRTIO_NET_F_MRG_RXBUF);
	/* 5.1.6.3.1: without MRG_RXBUF (and no GSO) each buffer holds 1526 bytes */
	min_buf = vn->mrg_rxbuf ? VIRTIO_NET_HDR_LEN + 1 : VIRTIO_NET_HDR_LEN + RX_MAX_FRAME;
	vn->rx_buf_size = (uint32_t)config_get(&cfg_net_rxbuf);
	if (vn->rx_buf_size < min_buf)
		vn->rx_buf_size = min_buf;
	vn->dev.priv = vn;
	if (queues_setup(vn))
		goto fail;

	/* with MSI-X the transport enabled TX interrupts: txpoll=1 turns them off */
	for (unsigned int q = 0; q < vn->npairs; q++)
		tx_apply_txpoll(&vn->txq[q], true);

	vn->dev.name = "virtio-net";
	vn->dev.ops = &vnet_ops;
	vn->dev.mtu = ETH_DATA_LEN;
	read_mac(vn);
	vn->dev_ctx.name = "virtio-net";
	vn->dev_ctx.poll = vnet_dev_poll;
	if (poll_ctx_add(&vn->dev_ctx))
		goto fail;
	/* 3.1.1: its first poll comes after DRIVER_OK, and hands the pairs over */
	vn->handover_pending = true;
	vdev->priv = vn;
	net_register(&vn->dev);
	attack_dev = vn;
	return 0;
fail:
	/* the vectors point at the pairs' contexts: gone before the pairs are */
	virtio_quiesce(vdev);
	vnet_release(vn);
	return -1;
}

/*
 * The device is reset and its vectors gone (virtio_pci.c, device_stop):
 * nothing reaches @vn through it any more. Then out of every loop, then
 * freed, unless a CPU never let go of a pair.
 */
static void vnet_remove(struct virtio_device *vdev)
{
	struct virtio_net *vn = vdev->priv;

	vdev->priv = NULL;
	net_unregister(&vn->dev);
	if (attack_dev == vn)
		attack_dev = NULL;
	vnet_release(vn);
}

static void vnet_show_virtio(struct virtio_device *vdev)
{
	struct virtio_net *vn = vdev->priv;
	struct net_dev_stats sum;
	char mac[18];

	net_dev_stats_sum(&vn->dev, &sum);
	printf("  net: mac %s link %s, rx %llu tx %llu packets\n", net_mac_str(vn->dev.mac, mac),
	       vnet_link_up(&vn->dev) ? "up" : "down", (unsigned long long)sum.rx_packets,
	       (unsigned long long)sum.tx_packets);
}

/*
 * The control queue and multiqueue only when more than one pair is
 * wanted: with one, the device is driven exactly as without them.
 */
static uint64_t vnet_config_features(void)
{
	if (config_get(&cfg_net_queues) < 2)
		return 0;
	return (1ULL << VIRTIO_NET_F_CTRL_VQ) | (1ULL << VIRTIO_NET_F_MQ);
}

static const struct virtio_driver vnet_driver = {
	.name = "virtio-net",
	.device_type = VIRTIO_ID_NET,
	.features = (1ULL << VIRTIO_NET_F_MAC) | (1ULL << VIRTIO_NET_F_STATUS) |
		    (1ULL << VIRTIO_NET_F_MRG_RXBUF),
	.config_features = vnet_config_features,
	.feature_names = net_feature_names,
	.probe = vnet_probe,
	.remove = vnet_remove,
	.show = vnet_show_virtio,
};

/* Buffer sizes, queue pairs and vector routing are all set up at probe. */
static void reprobe_hook(struct config_key *key)
{
	virtio_reprobe_all();
}

void virtio_net_init(void)
{
	static struct config_hook rxbuf_hook = { .fn = reprobe_hook };
	static struct config_hook queues_hook = { .fn = reprobe_hook };
	static struct config_hook irq_hook = { .fn = reprobe_hook };
	static struct config_hook pair_cpu_hook = { .fn = reprobe_hook };

	virtio_register_driver(&vnet_driver);
	config_on_change(&cfg_net_rxbuf, &rxbuf_hook);
	config_on_change(&cfg_net_queues, &queues_hook);
	config_on_change(&cfg_net_irq, &irq_hook);
	config_on_change(&cfg_net_pair_cpu, &pair_cpu_hook);
}
