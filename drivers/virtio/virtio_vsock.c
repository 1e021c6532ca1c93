// SPDX-License-Identifier: MIT
/*
 * virtio-vsock (virtio 1.2, 5.10): the transport under net/vsock/.
 *
 * Queues: rx (0) takes buffers of `rxbuf` bytes, header and payload in one
 * descriptor, refilled an eighth of the ring at a time (and topped up by
 * a pass that received nothing); a sent packet in such a buffer (an
 * echo's) is posted again as it comes back. tx (1) sends header and
 * payload in one descriptor too, or as two (chained, or indirect when
 * negotiated) when the payload is kept outside the packet. event (2)
 * reports transport resets.
 *
 * TX is polled by design: the device is asked for no TX interrupts, and
 * with txpoll=1 finished buffers are reclaimed only in the poll loop, never
 * on the send path (as virtio-net frees them only in NAPI). fastpath=1 puts
 * a packet into the virtqueue at once when nothing waits in the software
 * queue (Linux's efcd71af38be, "vsock/virtio: avoid queuing packets when
 * intermediate queue is empty").
 *
 * Every header from the device is checked before the socket layer sees it
 * (Linux's rules since its vsock sk_buff rework, 6.3): short buffers, a
 * payload length beyond the buffer, the wrong destination CID, unknown
 * types and ops are dropped, each with its own counter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "drivers/virtio/hostile.h"
#include "drivers/virtio/virtio_pci.h"
#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/printk.h"
#include "kernel/stats.h"
#include "net/vsock/vsock.h"

CONFIG_KEY(cfg_fastpath) = {
	.name = "fastpath",
	.help = "vsock: add a packet to the TX virtqueue directly when none is queued",
	.type = CONFIG_BOOL,
	.def = 1,
};

CONFIG_KEY(cfg_rxbuf) = {
	.name = "rxbuf",
	.help = "vsock RX buffer bytes, 44-byte header included",
	.type = CONFIG_UINT,
	.min = 256,
	.max = 65536 + 44,
	/*
	 * 64 KiB payloads (VIRTIO_VSOCK_MAX_PKT_BUF_SIZE since Linux 5.4): a
	 * host write of up to 64 KiB is one packet, not sixteen.
	 */
	.def = 65536 + 44,
};

#define VSOCK_RXQ 0
#define VSOCK_TXQ 1
#define VSOCK_EVQ 2
#define EVENT_TRANSPORT_RESET 0
#define N_EVENTS 8
/* Software TX queue bound: data waits here while the virtqueue is full. */
#define TXQ_MAX_BYTES (4u << 20)
#define TXQ_MAX_PKTS 4096u

struct vsock_drv_counters {
	uint64_t rx_pkts, tx_pkts, tx_queued, tx_fastpath, tx_reclaimed;
	uint64_t rx_refill_fail, rx_reposted;
	uint64_t rx_dropped[VSOCK_HDR_VERDICTS]; /* by vsock_hdr_check() verdict */
	uint64_t events, resets, event_unknown;
	uint64_t no_answer; /* times the device was reported not answering */
};

struct virtio_vsock {
	struct virtio_device *vdev;
	struct virtq *rx, *tx, *ev;
	uint64_t guest_cid;
	unsigned int rx_posted;
	unsigned int rx_batch; /* refill once this many buffers are missing */
	unsigned int rx_announce; /* reposts waiting for a kick decision: half the ring */
	unsigned int tx_size; /* the TX ring's entries: those in flight, with num_free */
	struct vsock_pkt *txq_head, *txq_tail;
	unsigned int txq_pkts;
	uint32_t txq_bytes;
	uint32_t events[N_EVENTS];
	/* vsock_check_device's last look: completions, and TX outstanding */
	uint64_t watch_completed;
	bool watch_tx_held;
	bool no_answer_reported; /* until the device completes something */
	struct vsock_drv_counters c;
};

static struct virtio_vsock *vsock_dev;

static const char *const vsock_feature_names[24] = {
	[VIRTIO_VSOCK_F_STREAM] = "VSOCK_STREAM",
	[VIRTIO_VSOCK_F_SEQPACKET] = "VSOCK_SEQPACKET",
};

/* ---- RX ---- */

static void rx_refill(struct virtio_vsock *d)
{
	uint32_t size = config_get(&cfg_rxbuf);

	while (virtq_free_slots(d->rx)) {
		struct vsock_pkt *pkt = vsock_pkt_alloc_rx(size - VSOCK_HDR_LEN);
		struct vbuf in;

		if (!pkt) {
			d->c.rx_refill_fail++;
			break;
		}
		in.addr = &pkt->hdr;
		in.len = size;
		if (virtq_add(d->rx, NULL, 0, &in, 1, pkt)) {
			vsock_pkt_free(pkt);
			break;
		}
		d->rx_posted++;
	}
	virtq_kick(d->rx); /* also for reposts waiting: nothing when none */
}

/*
 * An RX-sized buffer we are done with goes straight back onto the RX
 * ring, not through the packet pool and rx_refill: a received packet
 * nobody keeps (a control packet, a bad header), and a sent one (an echo
 * replies in the buffer it received). A free and an allocation less, and
 * the ring stays full without refills: those make kick decisions, and a
 * device that re-arms avail_event often (vhost-vsock, each time its send
 * queue empties) takes a kick from every one. virtq_add itself refuses
 * the buffer when the ring is full (counted in the queue's full). Inline
 * in both callers: a call would cost the echo's path about 15
 * instructions (./ringside cost).
 */
static inline __attribute__((always_inline)) bool rx_repost(struct virtio_vsock *d,
							    struct vsock_pkt *pkt)
{
	uint32_t size = config_get(&cfg_rxbuf);
	struct vbuf in = { &pkt->hdr, size };

	if (pkt->ext || pkt->cap != size - VSOCK_HDR_LEN || !virtq_free_slots(d->rx) ||
	    virtq_add(d->rx, NULL, 0, &in, 1, pkt))
		return false;
	d->rx_posted++;
	d->c.rx_reposted++;
	return true;
}

/*
 * Reposts are put back without a kick decision until half the ring waits
 * unannounced; rx_refill decides for them too. The device can be waiting
 * only once it has used every buffer it was told of, and those come back
 * to us as used entries. When the last of them is reaped every slot is
 * either added since the last decision (num_added) or free (kept by a
 * socket, or on its way back through TX), so half the ring waits
 * unannounced (decided here) or an eighth is free (rx_refill, in the
 * same pass), and either decides. A decision per repost would kick once
 * per round trip: vhost-vsock re-arms avail_event each time its send
 * queue empties.
 */
static inline void rx_announce(struct virtio_vsock *d)
{
	if (d->rx->num_added >= d->rx_announce)
		virtq_kick(d->rx);
}

/* Up to @budget received packets up to the socket layer; the packets taken. */
static unsigned int rx_reap(struct virtio_vsock *d, unsigned int budget)
{
	struct vsock_pkt *pkt;
	unsigned int n = 0;
	uint32_t len;

	while (n < budget && (pkt = virtq_get_used(d->rx, &len))) {
		enum vsock_hdr_verdict v;

		n++;
		d->rx_posted--;
		/* the ring bounds len by the buffer we posted (virtq_used_len) */
		v = vsock_hdr_check(&pkt->hdr, len, d->guest_cid);
		if (v != VSOCK_HDR_OK) {
			d->c.rx_dropped[v]++;
		} else {
			d->c.rx_pkts++;
			pkt = vsock_rx(pkt);
		}
		/* what nobody keeps goes straight back, its kick decided below */
		if (pkt && !rx_repost(d, pkt))
			vsock_pkt_free(pkt);
	}
	rx_announce(d);
	return n;
}

/* ---- TX ---- */

/*
 * Reposts are not kicked for while at least seven eighths of the RX ring
 * stay posted: the next reap's decision (rx_announce) or rx_refill's
 * covers them. Below that (refills that found no memory) they are; the
 * kick also covers reposts an earlier call left unkicked, and sends
 * nothing when there are none (virtq_kick). Few values live across the
 * loop's calls: each costs a register saved and restored per call.
 */
static unsigned int tx_reclaim(struct virtio_vsock *d, bool repost)
{
	struct vsock_pkt *pkt;
	unsigned int n = 0;

	while ((pkt = virtq_get_used(d->tx, NULL))) {
		d->c.tx_reclaimed++;
		n++;
		if (!repost || !rx_repost(d, pkt))
			vsock_pkt_free(pkt);
	}
	if (repost && virtq_free_slots(d->rx) >= d->rx_batch)
		virtq_kick(d->rx);
	return n;
}

/*
 * A payload in the packet's own buffer follows the header directly
 * (packet.h), so header and payload go out as one descriptor: the device
 * must not assume a descriptor layout (virtio 1.2, 2.6.4 Message
 * Framing), and one descriptor needs neither a second ring slot nor an
 * indirect table (an allocation and a free per packet). A payload kept
 * elsewhere (vsock_send_static) needs a descriptor of its own.
 */
static inline int tx_add(struct virtio_vsock *d, struct vsock_pkt *pkt)
{
	struct vbuf out[2];

	/* txpoll=0: reclaim on the send path too, as Linux did before TX NAPI; for A/B */
	if (!config_get(&cfg_txpoll))
		tx_reclaim(d, true);
	out[0].addr = &pkt->hdr;
	out[0].len = VSOCK_HDR_LEN;
	/* the usual packet, an echo's or a copy's: one descriptor, built alone */
	if (!pkt->ext) {
		out[0].len += pkt->hdr.len;
		return virtq_add(d->tx, out, 1, NULL, 0, pkt);
	}
	out[1].addr = (void *)pkt->ext;
	out[1].len = pkt->hdr.len;
	return virtq_add(d->tx, out, pkt->hdr.len ? 2 : 1, NULL, 0, pkt);
}

static struct poll_ctx vsock_dev_ctx;

/* Queued for the ring: the device's context moves it there (tx_flush). */
static void txq_append(struct virtio_vsock *d, struct vsock_pkt *pkt)
{
	if (!d->txq_head)
		poll_schedule(&vsock_dev_ctx);
	pkt->next = NULL;
	if (d->txq_tail)
		d->txq_tail->next = pkt;
	else
		d->txq_head = pkt;
	d->txq_tail = pkt;
	d->txq_pkts++;
	d->txq_bytes += pkt->hdr.len;
	d->c.tx_queued++;
}

/* Move queued packets into the virtqueue; one kick for the batch. */
static void tx_flush(struct virtio_vsock *d)
{
	bool added = false;

	while (d->txq_head) {
		struct vsock_pkt *pkt = d->txq_head;

		if (tx_add(d, pkt))
			break;
		d->txq_head = pkt->next;
		if (!d->txq_head)
			d->txq_tail = NULL;
		d->txq_pkts--;
		d->txq_bytes -= pkt->hdr.len;
		d->c.tx_pkts++;
		added = true;
	}
	if (added)
		virtq_kick(d->tx);
}

/* True: straight into the ring, nothing queued (struct vsock_transport). */
static bool vsock_send_pkt(struct vsock_pkt *pkt)
{
	struct virtio_vsock *d = vsock_dev;

	if (!d) {
		vsock_pkt_free(pkt); /* no device: like a wire without a peer */
		return false;
	}
	if (config_get(&cfg_fastpath) && !d->txq_head && !tx_add(d, pkt)) {
		d->c.tx_pkts++;
		d->c.tx_fastpath++;
		virtq_kick(d->tx);
		return true;
	}
	txq_append(d, pkt);
	return false;
}

static bool vsock_tx_full(void)
{
	struct virtio_vsock *d = vsock_dev;

	return !d || d->txq_bytes >= TXQ_MAX_BYTES || d->txq_pkts >= TXQ_MAX_PKTS;
}

static uint64_t vsock_guest_cid(void)
{
	return vsock_dev ? vsock_dev->guest_cid : VSOCK_CID_ANY;
}

static const char *const queue_names[3] = { "rxq", "txq", "evq" };

static void queue_stats(struct virtio_vsock *d, struct virtq_stats st[3])
{
	virtq_get_stats(d->rx, &st[0]);
	virtq_get_stats(d->tx, &st[1]);
	virtq_get_stats(d->ev, &st[2]);
}

/*
 * A connect or send waits (struct vsock_transport): the device is not
 * answering when TX held buffers at the last look and no queue completed
 * anything since; a device that merely has nothing to deliver still
 * takes what we send. Seen with packed=on against a vhost without packed
 * rings: the device is there, and RX, TX and events complete nothing.
 * Said once, until the device completes something again.
 */
static void vsock_check_device(bool first)
{
	struct virtio_vsock *d = vsock_dev;
	struct virtq_stats st[3];
	uint64_t completed;
	bool silent;

	if (!d)
		return;
	queue_stats(d, st);
	completed = st[0].completed + st[1].completed + st[2].completed;
	silent = !first && d->watch_tx_held && completed == d->watch_completed &&
		 !virtq_has_used(d->rx) && !virtq_has_used(d->tx) && !virtq_has_used(d->ev);
	if (silent && !d->no_answer_reported) {
		char line[256];
		int n = 0;

		d->no_answer_reported = true;
		d->c.no_answer++;
		for (int i = 0; i < 3; i++)
			n += snprintf(line + n, sizeof(line) - n, " %s added %llu completed %llu%s",
				      queue_names[i], (unsigned long long)st[i].added,
				      (unsigned long long)st[i].completed, i < 2 ? "," : "");
		pr_warn("virtio-vsock: device does not answer:%s; txq kicks %llu, nothing "
			"completed for a second\n",
			line, (unsigned long long)st[1].kicks);
	} else if (completed != d->watch_completed) {
		d->no_answer_reported = false;
	}
	d->watch_completed = completed;
	d->watch_tx_held = st[1].added > st[1].completed || d->txq_head;
}

/*
 * The device's context scheduled: a pass that finds nothing received
 * reclaims what TX finished and tops the RX ring up, work nothing
 * announces (vsock_dev_poll), for a quiet snapshot (`vsock`).
 */
static void vsock_dev_settle(void)
{
	poll_schedule(&vsock_dev_ctx);
}

static const struct vsock_transport virtio_vsock_transport = {
	.name = "virtio-vsock",
	.local_cid = vsock_guest_cid,
	.send_pkt = vsock_send_pkt,
	.tx_full = vsock_tx_full,
	.check_device = vsock_check_device,
	.settle = vsock_dev_settle,
	.dst_cid_checked = true, /* rx_reap: vsock_hdr_check against guest_cid */
};

/* ---- events (5.10.6.7) ---- */

static void read_cid(struct virtio_vsock *d)
{
	virtio_config_read(d->vdev, 0, &d->guest_cid, sizeof(d->guest_cid));
}

static void ev_post(struct virtio_vsock *d, uint32_t *ev)
{
	struct vbuf in = { ev, sizeof(*ev) };

	virtq_add(d->ev, NULL, 0, &in, 1, ev);
}

static void ev_reap(struct virtio_vsock *d)
{
	uint32_t *ev, len;
	bool reposted = false;

	while ((ev = virtq_get_used(d->ev, &len))) {
		d->c.events++;
		if (len >= sizeof(*ev) && *ev == EVENT_TRANSPORT_RESET) {
			d->c.resets++;
			read_cid(d);
			pr_info("vsock: transport reset, guest cid %llu\n",
				(unsigned long long)d->guest_cid);
			vsock_transport_reset();
		} else {
			d->c.event_unknown++;
		}
		ev_post(d, ev);
		reposted = true;
	}
	if (reposted)
		virtq_kick(d->ev);
}

/* RX or the event queue has no interrupt (irq=poll, a refused vector). */
static bool rings_polled;

/*
 * The driver's poll context, on CPU 0: RX and event interrupts schedule
 * it; a pass then takes up to the budget of received packets, reclaims
 * what TX finished (never on the send path while txpoll=1, and a
 * finished TX buffer alone schedules nothing: the next pass that comes
 * anyway reclaims it) and moves queued packets into the TX ring.
 *
 * Completing: RX and event notifications are never turned off; each
 * batch taken ends with used_event written after its last entry and a
 * full barrier before the next look at the index (ring_split.c,
 * 2.7.7.2; packed: per element, 2.8.10), and the loop below stops only
 * on that look finding nothing, or on the budget (then it runs again).
 * Packets waiting for ring room have no interrupt to announce room: the
 * context stays scheduled while they wait.
 */
static unsigned int vsock_dev_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct virtio_vsock *d = vsock_dev;
	unsigned int work = 0;
	bool received;

	if (!d)
		return 0;
	/* the inline look first: it takes the batch's index, reap reads no more */
	received = virtq_has_used(d->rx);
	if (received) {
		work = rx_reap(d, budget);
		if (virtq_free_slots(d->rx) >= d->rx_batch)
			rx_refill(d);
	}
	/* freed TX buffers count as one unit: a sender waiting for room goes on */
	if (virtq_has_used(d->tx) && tx_reclaim(d, true) && work < budget)
		work++;
	/*
	 * A pass with nothing received tops the ring up, whatever the batches
	 * left: a settled guest has every buffer posted (the soak compares
	 * buffers and heap between settled moments). Slots that packets still
	 * in flight on TX fill when they come back (rx_repost) are left to
	 * them: otherwise an echo's pass after its reply, when the device has
	 * not taken the reply yet, posts a fresh buffer, frees the reply's when
	 * it comes back to a full ring, and makes a kick decision, a kick
	 * whenever vhost-vsock has just re-armed avail_event.
	 */
	if (!received && virtq_free_slots(d->rx) > d->tx_size - virtq_free_slots(d->tx))
		rx_refill(d);
	if (d->txq_head) {
		tx_flush(d);
		if (d->txq_head)
			poll_schedule(ctx); /* no interrupt announces ring room */
	}
	if (virtq_has_used(d->ev))
		ev_reap(d);
	if (rings_polled)
		poll_schedule_polled(ctx);
	return work;
}

/* The watchdog's look: work on a queue that announces it, or TX waiting. */
static enum poll_verdict vsock_dev_check(struct poll_ctx *ctx, bool count, const char **what)
{
	struct virtio_vsock *d = vsock_dev;
	enum poll_verdict v;

	if (!d)
		return POLL_IDLE;
	*what = "virtio-vsock rxq";
	v = virtio_queue_check(d->rx, count);
	if (v != POLL_IDLE)
		return v;
	*what = "virtio-vsock evq";
	v = virtio_queue_check(d->ev, count);
	if (v != POLL_IDLE)
		return v;
	*what = "virtio-vsock txq (packets waiting for ring room)";
	return d->txq_head ? POLL_LOST : POLL_IDLE;
}

static struct poll_ctx vsock_dev_ctx = {
	.name = "virtio-vsock",
	.poll = vsock_dev_poll,
	.check = vsock_dev_check,
};

/* ---- probe ---- */

static int vsock_probe(struct virtio_device *vdev)
{
	struct virtio_vsock *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	d->vdev = vdev;
	read_cid(d);
	/* their interrupts schedule the context, which does the work */
	d->rx = virtio_setup_queue(vdev, VSOCK_RXQ, 0, &vsock_dev_ctx);
	d->tx = virtio_setup_queue(vdev, VSOCK_TXQ, 0, NULL); /* never interrupts */
	d->ev = virtio_setup_queue(vdev, VSOCK_EVQ, 0, &vsock_dev_ctx);
	if (!d->rx || !d->tx || !d->ev) {
		free(d);
		return -1;
	}
	rings_polled = !virtio_queue_interrupts(d->rx) || !virtio_queue_interrupts(d->ev);
	vdev->priv = d;
	vsock_dev = d;
	poll_schedule(&vsock_dev_ctx); /* a first look once the device runs */
	/*
	 * RX buffers go back an eighth of the ring at a time: the refill's
	 * fixed part (its loop, the kick decision with a full barrier) is
	 * paid once per batch instead of once per packet, and at least seven
	 * eighths of the ring stay posted. An eighth, not more: the echoed
	 * buffers waiting to be reposted sit in the packet pool, which keeps
	 * 2 MiB per size class (packet.c), 16 of 64 KiB with room to spare.
	 */
	d->rx_batch = virtq_size(d->rx) / 8 ? virtq_size(d->rx) / 8 : 1;
	d->rx_announce = virtq_size(d->rx) / 2 ? virtq_size(d->rx) / 2 : 1;
	d->tx_size = virtq_size(d->tx);
	rx_refill(d);
	for (int i = 0; i < N_EVENTS && virtq_free_slots(d->ev); i++)
		ev_post(d, &d->events[i]);
	virtq_kick(d->ev);
	pr_info("vsock: guest cid %llu\n", (unsigned long long)d->guest_cid);
	return 0;
}

/*
 * The device was reset (ring= changed, or a re-probe): what it held is
 * ours again. Connections cannot survive a new ring, so they end as after
 * a transport reset.
 */
static void vsock_remove(struct virtio_device *vdev)
{
	struct virtio_vsock *d = vdev->priv;
	struct vsock_pkt *pkt;

	vsock_dev = NULL;
	vsock_transport_reset();
	while ((pkt = d->txq_head)) {
		d->txq_head = pkt->next;
		vsock_pkt_free(pkt);
	}
	tx_reclaim(d, false); /* the device is reset: nothing goes back to it */
	/* the device is reset: what it still held comes back to us */
	while ((pkt = virtq_detach_unused(d->rx)))
		vsock_pkt_free(pkt);
	while ((pkt = virtq_detach_unused(d->tx)))
		vsock_pkt_free(pkt);
	free(d);
	vdev->priv = NULL;
}

static void print_counters(struct virtio_vsock *d)
{
	const struct vsock_drv_counters *c = &d->c;

	printf("  guest cid %llu, rx posted %u, txq %u pkts %u bytes\n",
	       (unsigned long long)d->guest_cid, d->rx_posted, d->txq_pkts, d->txq_bytes);
	printf("  rx_pkts %llu tx_pkts %llu tx_fastpath %llu tx_queued %llu tx_reclaimed %llu "
	       "rx_reposted %llu\n",
	       (unsigned long long)c->rx_pkts, (unsigned long long)c->tx_pkts,
	       (unsigned long long)c->tx_fastpath, (unsigned long long)c->tx_queued,
	       (unsigned long long)c->tx_reclaimed, (unsigned long long)c->rx_reposted);
	printf("  drop:");
	for (int v = VSOCK_HDR_OK + 1; v < VSOCK_HDR_VERDICTS; v++)
		printf(" %s %llu", vsock_hdr_verdict_names[v],
		       (unsigned long long)c->rx_dropped[v]);
	printf(" rx_refill_fail %llu\n", (unsigned long long)c->rx_refill_fail);
	printf("  events %llu transport_resets %llu unknown_events %llu no_answer %llu\n",
	       (unsigned long long)c->events, (unsigned long long)c->resets,
	       (unsigned long long)c->event_unknown, (unsigned long long)c->no_answer);
}

static void vsock_show(struct virtio_device *vdev)
{
	print_counters(vdev->priv);
}

static void vsock_driver_stats(void)
{
	struct virtq_stats st[3];

	if (!vsock_dev) {
		printf("  no virtio-vsock device\n");
		return;
	}
	print_counters(vsock_dev);
	queue_stats(vsock_dev, st);
	for (int i = 0; i < 3; i++)
		printf("  %s: added %llu completed %llu kicks %llu suppressed %llu "
		       "interrupts %llu bad %llu full %llu indirect %llu missed %llu wrong_cpu %llu\n",
		       queue_names[i], (unsigned long long)st[i].added,
		       (unsigned long long)st[i].completed, (unsigned long long)st[i].kicks,
		       (unsigned long long)st[i].kicks_suppressed,
		       (unsigned long long)st[i].interrupts,
		       (unsigned long long)st[i].bad_completions, (unsigned long long)st[i].full,
		       (unsigned long long)st[i].indirect,
		       (unsigned long long)st[i].missed_notifications,
		       (unsigned long long)st[i].wrong_cpu);
}

/*
 * The text's counters under its names; "drop" holds one member a header
 * verdict and rx_refill_fail, "queues" one object a queue ("rxq", "txq",
 * "evq"). "device" is false, and alone, without a device.
 */
static void vsock_driver_stats_json(struct json_writer *w)
{
	const struct virtio_vsock *d = vsock_dev;
	const struct vsock_drv_counters *c;
	struct virtq_stats st[3];

	json_put_bool(w, "device", d != NULL);
	if (!d)
		return;
	c = &d->c;
	json_put_u64(w, "guest_cid", d->guest_cid);
	json_put_u64(w, "rx_posted", d->rx_posted);
	json_put_u64(w, "txq_pkts", d->txq_pkts);
	json_put_u64(w, "txq_bytes", d->txq_bytes);
	json_put_u64(w, "rx_pkts", c->rx_pkts);
	json_put_u64(w, "tx_pkts", c->tx_pkts);
	json_put_u64(w, "tx_fastpath", c->tx_fastpath);
	json_put_u64(w, "tx_queued", c->tx_queued);
	json_put_u64(w, "tx_reclaimed", c->tx_reclaimed);
	json_put_u64(w, "rx_reposted", c->rx_reposted);
	json_open(w, "drop", '{');
	for (int v = VSOCK_HDR_OK + 1; v < VSOCK_HDR_VERDICTS; v++)
		json_put_u64(w, vsock_hdr_verdict_names[v], c->rx_dropped[v]);
	json_put_u64(w, "rx_refill_fail", c->rx_refill_fail);
	json_close(w, '}');
	json_put_u64(w, "events", c->events);
	json_put_u64(w, "transport_resets", c->resets);
	json_put_u64(w, "unknown_events", c->event_unknown);
	json_put_u64(w, "no_answer", c->no_answer);
	queue_stats(vsock_dev, st);
	json_open(w, "queues", '{');
	for (int i = 0; i < 3; i++) {
		json_open(w, queue_names[i], '{');
		json_put_u64(w, "added", st[i].added);
		json_put_u64(w, "completed", st[i].completed);
		json_put_u64(w, "kicks", st[i].kicks);
		json_put_u64(w, "suppressed", st[i].kicks_suppressed);
		json_put_u64(w, "interrupts", st[i].interrupts);
		json_put_u64(w, "bad", st[i].bad_completions);
		json_put_u64(w, "full", st[i].full);
		json_put_u64(w, "indirect", st[i].indirect);
		json_put_u64(w, "missed", st[i].missed_notifications);
		json_put_u64(w, "wrong_cpu", st[i].wrong_cpu);
		json_close(w, '}');
	}
	json_close(w, '}');
}

static const struct virtio_driver vsock_driver = {
	.name = "virtio-vsock",
	.device_type = VIRTIO_ID_VSOCK,
	.features = (1ULL << VIRTIO_VSOCK_F_STREAM) | (1ULL << VIRTIO_VSOCK_F_SEQPACKET),
	.feature_names = vsock_feature_names,
	.probe = vsock_probe,
	.remove = vsock_remove,
	.show = vsock_show,
};

/* The hostile driver writes into the live queue; it owns no state of ours. */
struct virtq *virtio_vsock_txq(void)
{
	return vsock_dev ? vsock_dev->tx : NULL;
}

/* The driver's context: where what virtio_vsock_txq sent is reclaimed. */
struct poll_ctx *virtio_vsock_txq_ctx(void)
{
	return vsock_dev ? &vsock_dev_ctx : NULL;
}

static int rx_posted(struct virtio_vsock *d, int ret)
{
	if (ret)
		return ret;
	d->rx_posted++;
	virtq_kick(d->rx);
	return 0;
}

/*
 * The hostile driver: @pkt posted on RX as @out and @in say. Device-
 * readable parts are what no driver may post there (5.10.6.3: RX buffers
 * are device-writable); the writable ones may split the buffer anywhere.
 * Counted in rx_posted like any RX buffer: rx_reap takes it back and
 * checks what the device wrote (a completion without a header is dropped).
 */
int virtio_vsock_post_rx(struct vsock_pkt *pkt, const struct vbuf *out, unsigned int n_out,
			 const struct vbuf *in, unsigned int n_in)
{
	struct virtio_vsock *d = vsock_dev;

	if (!d)
		return -ENODEV;
	return rx_posted(d, virtq_add(d->rx, out, n_out, in, n_in, pkt));
}

/*
 * The same as descriptors written as @tmpl says (virtq_add_forged): the
 * ring bounds nothing the device may write, so the completion's length
 * reads as 0 and rx_reap drops it.
 */
int virtio_vsock_post_rx_forged(struct vsock_pkt *pkt, const struct virtq_desc *tmpl,
				unsigned int n)
{
	struct virtio_vsock *d = vsock_dev;

	if (!d)
		return -ENODEV;
	return rx_posted(d, virtq_add_forged(d->rx, tmpl, n, pkt));
}

void virtio_vsock_init(void)
{
	vsock_init(&virtio_vsock_transport);
	poll_ctx_add(&vsock_dev_ctx);
	virtio_register_driver(&vsock_driver);
	stats_register("virtio-vsock", vsock_driver_stats, vsock_driver_stats_json);
}
