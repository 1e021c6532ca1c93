// SPDX-License-Identifier: MIT
/*
 * virtio-net (virtio 1.2, 5.1): one receive and one transmit queue, no
 * control queue, no offloads. Frames go up to net/ through net_rx() and
 * come down through the ops in struct net_dev (xmit_burst, poll).
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
 * (as virtio-net frees them only in NAPI) sent buffers are reclaimed only in the poll path and the
 * device is asked for no TX interrupts; with txpoll=0 the transmit path
 * also reclaims before adding, as Linux did before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/net_attack.h"
#include "drivers/virtio/virtio_net.h"
#include "drivers/virtio/virtio_pci.h"
#include "kernel/config.h"
#include "kernel/dma.h"
#include "kernel/time.h"
#include "net/net.h"

CONFIG_KEY(cfg_net_rxbuf) = {
	.name = "net_rxbuf",
	.help = "virtio-net RX buffer bytes, 12-byte header included (small: frames span buffers)",
	.type = CONFIG_UINT,
	.min = 64,
	.max = 4096,
	.def = 2048,
};

/* 5.1.3 Feature bits */
#define VIRTIO_NET_F_CSUM 0
#define VIRTIO_NET_F_GUEST_CSUM 1
#define VIRTIO_NET_F_MTU 3
#define VIRTIO_NET_F_MAC 5
#define VIRTIO_NET_F_MRG_RXBUF 15
#define VIRTIO_NET_F_STATUS 16
#define VIRTIO_NET_F_CTRL_VQ 17

/* 5.1.4 Device configuration layout */
#define VIRTIO_NET_CFG_MAC 0
#define VIRTIO_NET_CFG_STATUS 6
#define VIRTIO_NET_S_LINK_UP 1

/* 5.1.2 Virtqueues */
#define RX_QUEUE 0
#define TX_QUEUE 1

#define RING_MAX 1024
#define TX_BUF_SIZE 2048
/* Largest frame we accept: Ethernet + one VLAN tag, no GSO negotiated. */
#define RX_MAX_FRAME (ETH_FRAME_LEN + 4)
#define STATUS_PERIOD_NS 1000000000ULL

static const char *const net_feature_names[24] = {
	[VIRTIO_NET_F_CSUM] = "CSUM",
	[VIRTIO_NET_F_GUEST_CSUM] = "GUEST_CSUM",
	[VIRTIO_NET_F_MTU] = "MTU",
	[VIRTIO_NET_F_MAC] = "MAC",
	[VIRTIO_NET_F_MRG_RXBUF] = "MRG_RXBUF",
	[VIRTIO_NET_F_STATUS] = "STATUS",
	[VIRTIO_NET_F_CTRL_VQ] = "CTRL_VQ",
};

struct tx_slot {
	uint8_t *buf;
	uint32_t len, tag; /* the frame buf holds (tag 0: none), laid out as in net_frame */
};

struct virtio_net {
	struct net_dev dev;
	struct virtio_device *vdev;
	struct virtq *rxq, *txq;
	bool mrg_rxbuf;
	bool txpoll; /* the txpoll value the TX queue is set up for */
	bool rx_kick_pending; /* buffers added before DRIVER_OK (3.1.1) */
	uint64_t status_checked;

	uint8_t *rx_mem; /* rx_count buffers of rx_buf_size */
	bool *rx_posted;
	uint32_t rx_buf_size, rx_count;

	/* a frame spanning buffers is gathered here (MRG_RXBUF) */
	uint8_t merge[RX_MAX_FRAME];
	uint32_t merge_len;
	uint16_t merge_left; /* buffers still to come; 0: not merging */
	bool merge_bad;

	struct tx_slot *tx;
	struct virtq_fixed_buf *tx_bufs; /* what each slot's descriptor holds */
	uint16_t *tx_free; /* stack of free slot indices: the ring's ids */
	uint32_t tx_count, tx_nfree;
};

/* The device net_attack.c writes into: the last one probed. */
static struct virtio_net *attack_dev;

/* ---- RX ---- */

static int rx_post(struct virtio_net *vn, uint32_t i)
{
	struct vbuf in = { vn->rx_mem + (size_t)i * vn->rx_buf_size, vn->rx_buf_size };
	int ret = virtq_add(vn->rxq, NULL, 0, &in, 1, in.addr);

	if (ret)
		vn->dev.stats.rx_refill_fail++;
	else
		vn->rx_posted[i] = true;
	return ret;
}

static void rx_kick(struct virtio_net *vn)
{
	if (virtq_kick(vn->rxq))
		vn->dev.stats.rx_kicks++;
}

/* The buffer index of a token the device handed back, or -1 if it is not ours. */
static long rx_index(struct virtio_net *vn, void *token)
{
	uintptr_t off = (uintptr_t)token - (uintptr_t)vn->rx_mem;

	if ((uintptr_t)token < (uintptr_t)vn->rx_mem || off % vn->rx_buf_size ||
	    off / vn->rx_buf_size >= vn->rx_count || !vn->rx_posted[off / vn->rx_buf_size])
		return -1;
	return (long)(off / vn->rx_buf_size);
}

/* A frame that started in an earlier buffer: append, deliver when whole. */
static void rx_merge(struct virtio_net *vn, const uint8_t *buf, uint32_t len)
{
	if (!vn->merge_bad && len > sizeof(vn->merge) - vn->merge_len) {
		vn->dev.stats.rx_drop_long++;
		vn->merge_bad = true;
	}
	if (!vn->merge_bad) {
		memcpy(vn->merge + vn->merge_len, buf, len);
		vn->merge_len += len;
	}
	if (--vn->merge_left == 0 && !vn->merge_bad) {
		vn->dev.stats.rx_packets++;
		vn->dev.stats.rx_bytes += vn->merge_len;
		net_rx(&vn->dev, vn->merge, vn->merge_len);
	}
}

/* The first buffer of a frame: header, then data (5.1.6.4). */
static void rx_head(struct virtio_net *vn, const uint8_t *buf, uint32_t len)
{
	uint16_t num_buffers = 1;

	if (len < VIRTIO_NET_HDR_LEN) {
		vn->dev.stats.rx_drop_short++;
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
	if (num_buffers == 0 || num_buffers > vn->rx_count) {
		vn->dev.stats.rx_drop_num_buffers++;
		return;
	}
	buf += VIRTIO_NET_HDR_LEN;
	len -= VIRTIO_NET_HDR_LEN;
	if (num_buffers == 1) {
		if (len > RX_MAX_FRAME) {
			vn->dev.stats.rx_drop_long++;
			return;
		}
		vn->dev.stats.rx_packets++;
		vn->dev.stats.rx_bytes += len;
		net_rx(&vn->dev, buf, len); /* straight from the ring buffer */
		return;
	}
	vn->merge_len = 0;
	vn->merge_bad = false;
	vn->merge_left = num_buffers;
	rx_merge(vn, buf, len);
}

static unsigned int rx_poll(struct virtio_net *vn, unsigned int budget)
{
	unsigned int frames = 0, reposted = 0;
	uint32_t len;
	void *token;

	while (frames < budget && (token = virtq_get_used(vn->rxq, &len))) {
		long i = rx_index(vn, token);

		if (i < 0) {
			vn->dev.stats.rx_drop_bad_token++;
			continue;
		}
		/* len <= rx_buf_size: the ring bounds it by what we offered */
		vn->rx_posted[i] = false;
		if (vn->merge_left)
			rx_merge(vn, token, len);
		else
			rx_head(vn, token, len);
		if (!vn->merge_left)
			frames++;
		if (!rx_post(vn, (uint32_t)i))
			reposted++;
	}
	if (reposted || vn->rx_kick_pending) {
		vn->rx_kick_pending = false;
		rx_kick(vn);
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
static unsigned int tx_reclaim(struct virtio_net *vn, bool in_xmit)
{
	unsigned int n, bad;

	n = virtq_fixed_reclaim(vn->txq, &vn->tx_free[vn->tx_nfree], vn->tx_count - vn->tx_nfree,
				&bad);
	vn->tx_nfree += n;
	vn->dev.stats.tx_bad_token += bad;
	vn->dev.stats.tx_reclaimed += n;
	if (in_xmit)
		vn->dev.stats.tx_reclaim_in_xmit += n;
	return n;
}

/*
 * Apply txpoll to the TX queue: no used-buffer notifications when sent
 * buffers are reclaimed by polling; with txpoll=0 and MSI-X the device
 * interrupts for TX completions as in Linux's TX NAPI mode.
 */
static void tx_apply_txpoll(struct virtio_net *vn, bool force)
{
	bool txpoll = config_get(&cfg_txpoll);

	if (txpoll == vn->txpoll && !force)
		return;
	vn->txpoll = txpoll;
	if (txpoll || vn->vdev->queues[TX_QUEUE].vector < 0)
		virtq_disable_cb(vn->txq);
	else
		virtq_enable_cb(vn->txq);
}

/*
 * The frame into a slot's buffer, after the header that stays zero (set
 * once at probe), and the slot's descriptor to its length. The device
 * only reads TX buffers (2.7.4); one that writes them anyway garbles only
 * what it is sent itself.
 */
static void tx_fill(struct virtio_net *vn, uint16_t slot, const struct net_frame *f)
{
	struct tx_slot *s = &vn->tx[slot];
	struct vbuf b = { s->buf, VIRTIO_NET_HDR_LEN + f->len };

	memcpy(s->buf + VIRTIO_NET_HDR_LEN, f->data, f->len);
	s->tag = f->tag;
	s->len = f->len;
	/* the slot is free (on the stack), so the ring takes it */
	virtq_fixed_set(vn->txq, vn->tx_bufs, slot, &b);
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

static bool tx_frame_ok(struct virtio_net *vn, const struct net_frame *f)
{
	if (f->len <= TX_BUF_SIZE - VIRTIO_NET_HDR_LEN && f->len >= ETH_HLEN)
		return true;
	vn->dev.stats.tx_too_long++; /* taken and dropped: resending would not help */
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
static unsigned int tx_take(struct virtio_net *vn, const struct net_frame *frames, unsigned int n,
			    const uint16_t *ids, unsigned int m, unsigned int *taken,
			    uint64_t *bytes)
{
	const struct net_frame *f = frames, *end = frames + n;
	const uint16_t *id = ids, *id_end = ids + m;
	uint64_t sum = 0;

	for (;;) {
		f = tx_take_held(vn->tx, f, end, &id, id_end, &sum);
		if (f == end)
			break;
		if (tx_frame_ok(vn, f)) {
			if (id == id_end) {
				vn->dev.stats.tx_ring_full++;
				break;
			}
			tx_fill(vn, *id++, f);
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
static unsigned int vnet_xmit_burst(struct net_dev *dev, const struct net_frame *frames,
				    unsigned int n)
{
	struct virtio_net *vn = dev->priv;
	unsigned int i, m, taken, added;
	uint64_t bytes;
	uint16_t *ids;

	tx_apply_txpoll(vn, false);
	if (!vn->txpoll)
		tx_reclaim(vn, true);
	m = n < vn->tx_nfree ? n : vn->tx_nfree;
	ids = &vn->tx_free[vn->tx_nfree - m];
	i = tx_take(vn, frames, n, ids, m, &taken, &bytes);
	added = virtq_fixed_add(vn->txq, vn->tx_bufs, ids, taken);
	if (added < m)
		memmove(ids, ids + added, (m - added) * sizeof(*ids));
	vn->tx_nfree -= added;
	if (added < taken) {
		dev->stats.tx_ring_full++;
		i = tx_consumed(frames, added, &bytes);
	}
	dev->stats.tx_packets += added;
	dev->stats.tx_bytes += bytes;
	/* one notification for the whole burst, if the device wants one */
	if (added && virtq_kick(vn->txq))
		dev->stats.tx_kicks++;
	return i;
}

struct virtq *virtio_net_txq(void)
{
	return attack_dev ? attack_dev->txq : NULL;
}

/*
 * Hostile-driver support (net_attack.c), never on the data path: a free
 * slot's descriptor pointed at @bytes (@len of them, the virtio-net
 * header included, as the caller wrote it) and made available. The slot
 * forgets what it held, so the next frame through it is copied into its
 * own buffer again, behind its own all-zero header.
 */
int virtio_net_tx_raw(const void *bytes, uint32_t len)
{
	struct virtio_net *vn = attack_dev;
	struct vbuf b = { (void *)bytes, len };
	struct tx_slot *s;
	uint16_t id;

	if (!vn)
		return -ENODEV;
	if (virtq_is_broken(vn->txq))
		return -EIO;
	tx_reclaim(vn, false);
	if (!vn->tx_nfree)
		return -ENOSPC;
	id = vn->tx_free[vn->tx_nfree - 1];
	s = &vn->tx[id];
	s->len = 0;
	s->tag = 0;
	if (virtq_fixed_set(vn->txq, vn->tx_bufs, id, &b))
		return -EINVAL;
	if (!virtq_fixed_add(vn->txq, vn->tx_bufs, &id, 1))
		return -ENOSPC;
	vn->tx_nfree--;
	return 0;
}

static void check_link(struct virtio_net *vn)
{
	uint16_t status;

	vn->status_checked = now_ns();
	if (!virtio_has_feature(vn->vdev, VIRTIO_NET_F_STATUS)) {
		vn->dev.link_up = true; /* 5.1.4: without STATUS assume the link is up */
		return;
	}
	virtio_config_read(vn->vdev, VIRTIO_NET_CFG_STATUS, &status, sizeof(status));
	vn->dev.link_up = status & VIRTIO_NET_S_LINK_UP;
}

static unsigned int vnet_poll(struct net_dev *dev, unsigned int budget)
{
	struct virtio_net *vn = dev->priv;

	unsigned int reclaimed;

	tx_apply_txpoll(vn, false);
	reclaimed = tx_reclaim(vn, false);
	if (now_ns() - vn->status_checked > STATUS_PERIOD_NS)
		check_link(vn);
	/* freed TX buffers count as one unit: a sender waiting for room goes on */
	return rx_poll(vn, budget) + (reclaimed != 0);
}

/* Received frames wait; sent buffers are reclaimed when a pass comes anyway. */
static bool vnet_pending(struct net_dev *dev)
{
	struct virtio_net *vn = dev->priv;

	return virtq_has_used(vn->rxq);
}

static void vnet_show(struct net_dev *dev)
{
	struct virtio_net *vn = dev->priv;
	struct virtq_stats rx, tx;

	virtq_get_stats(vn->rxq, &rx);
	virtq_get_stats(vn->txq, &tx);
	printf("virtio-net: %s rings rx %u tx %u, rx buffers %u x %u B%s, txpoll=%d, "
	       "tx free %u\n",
	       virtq_layout(vn->rxq) == VIRTQ_PACKED ? "packed" : "split", virtq_size(vn->rxq),
	       virtq_size(vn->txq), vn->rx_count, vn->rx_buf_size,
	       vn->mrg_rxbuf ? " mergeable" : "", vn->txpoll, vn->tx_nfree);
	printf("virtio-net: rxq bad completions %llu, txq bad completions %llu, "
	       "tx kicks suppressed %llu\n",
	       (unsigned long long)rx.bad_completions, (unsigned long long)tx.bad_completions,
	       (unsigned long long)tx.kicks_suppressed);
}

static const struct net_dev_ops vnet_ops = {
	.xmit_burst = vnet_xmit_burst,
	.poll = vnet_poll,
	.pending = vnet_pending,
	.show = vnet_show,
};

/* ---- probe ---- */

/* The driver state behind a queue's interrupt; NULL while probing. */
static struct virtio_net *irq_owner(struct virtq *vq)
{
	struct virtio_queue *q = virtq_priv(vq);

	return q && q->vdev ? q->vdev->priv : NULL;
}

static void rx_irq(struct virtq *vq)
{
	struct virtio_net *vn = irq_owner(vq);

	/* the poll loop does the work; interrupts are counted for A/B runs */
	if (vn)
		vn->dev.stats.rx_interrupts++;
}

static void tx_irq(struct virtq *vq)
{
	struct virtio_net *vn = irq_owner(vq);

	if (vn)
		vn->dev.stats.tx_interrupts++;
}

static void vnet_free(struct virtio_net *vn)
{
	if (vn->tx)
		for (uint32_t i = 0; i < vn->tx_count; i++)
			dma_free(vn->tx[i].buf);
	free(vn->tx);
	free(vn->tx_bufs);
	free(vn->tx_free);
	dma_free(vn->rx_mem);
	free(vn->rx_posted);
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
	vn->rxq = virtio_setup_queue(vdev, RX_QUEUE, RING_MAX, rx_irq);
	vn->txq = virtio_setup_queue(vdev, TX_QUEUE, RING_MAX, tx_irq);
	if (!vn->rxq || !vn->txq)
		goto fail;
	/* every chain is one descriptor: indirect tables would only cost */
	virtq_set_indirect_min(vn->rxq, 0);
	virtq_set_indirect_min(vn->txq, 0);

	vn->rx_count = virtq_size(vn->rxq);
	vn->rx_mem = dma_alloc((size_t)vn->rx_count * vn->rx_buf_size, 64);
	vn->rx_posted = calloc(vn->rx_count, sizeof(*vn->rx_posted));
	vn->tx_count = virtq_size(vn->txq);
	vn->tx = calloc(vn->tx_count, sizeof(*vn->tx));
	vn->tx_bufs = calloc(vn->tx_count, sizeof(*vn->tx_bufs));
	vn->tx_free = calloc(vn->tx_count, sizeof(*vn->tx_free));
	if (!vn->rx_mem || !vn->rx_posted || !vn->tx || !vn->tx_bufs || !vn->tx_free)
		goto fail;
	for (uint32_t i = 0; i < vn->tx_count; i++) {
		vn->tx[i].buf = dma_alloc(TX_BUF_SIZE, 64);
		if (!vn->tx[i].buf)
			goto fail;
		/* 5.1.6.2: no offloads asked for, so every header is all zeroes */
		memset(vn->tx[i].buf, 0, VIRTIO_NET_HDR_LEN);
		vn->tx_free[vn->tx_nfree++] = (uint16_t)(vn->tx_count - 1 - i);
	}
	/* 3.1.1: buffers may be added now; the kick waits for DRIVER_OK */
	for (uint32_t i = 0; i < vn->rx_count; i++)
		if (rx_post(vn, i))
			break;
	vn->rx_kick_pending = true;

	/* with MSI-X the transport enabled TX interrupts: txpoll=1 turns them off */
	tx_apply_txpoll(vn, true);

	vn->dev.name = "virtio-net";
	vn->dev.ops = &vnet_ops;
	vn->dev.priv = vn;
	vn->dev.mtu = ETH_DATA_LEN;
	read_mac(vn);
	check_link(vn);
	vdev->priv = vn;
	net_register(&vn->dev);
	attack_dev = vn;
	return 0;
fail:
	vnet_free(vn);
	return -1;
}

static void vnet_remove(struct virtio_device *vdev)
{
	struct virtio_net *vn = vdev->priv;

	net_unregister(&vn->dev);
	if (attack_dev == vn)
		attack_dev = NULL;
	vnet_free(vn);
	vdev->priv = NULL;
}

static void vnet_show_virtio(struct virtio_device *vdev)
{
	struct virtio_net *vn = vdev->priv;
	char mac[18];

	printf("  net: mac %s link %s, rx %llu tx %llu packets\n", net_mac_str(vn->dev.mac, mac),
	       vn->dev.link_up ? "up" : "down", (unsigned long long)vn->dev.stats.rx_packets,
	       (unsigned long long)vn->dev.stats.tx_packets);
}

static const struct virtio_driver vnet_driver = {
	.name = "virtio-net",
	.device_type = VIRTIO_ID_NET,
	.features = (1ULL << VIRTIO_NET_F_MAC) | (1ULL << VIRTIO_NET_F_STATUS) |
		    (1ULL << VIRTIO_NET_F_MRG_RXBUF),
	.feature_names = net_feature_names,
	.probe = vnet_probe,
	.remove = vnet_remove,
	.show = vnet_show_virtio,
};

static void rxbuf_hook(struct config_key *key)
{
	virtio_reprobe_all();
}

void virtio_net_init(void)
{
	virtio_register_driver(&vnet_driver);
	static struct config_hook hook = { .fn = rxbuf_hook };

	config_on_change(&cfg_net_rxbuf, &hook);
}
