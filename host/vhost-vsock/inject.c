// SPDX-License-Identifier: MIT
/*
 * Fault injection: see inject.h. One fault is armed every N real RX
 * packets; the next hook it fits consumes it. Faults on a real packet
 * rewrite its header (virtio 1.2, 5.10.6) or its used entry (2.7.8 split,
 * 2.8.9 packed); extra packets go out ahead of the real work.
 */
#include <stdio.h>
#include <string.h>

#include "host/vring/iov.h"
#include "inject.h"

#define INJ_NONE INJ_NMODES
#define EXTRA_MAX 32

#define INJECT_NAME(name, str) str,
static const char *const mode_names[] = { INJECT_LIST(INJECT_NAME) };
#undef INJECT_NAME

static struct {
	uint32_t enabled; /* bit per mode */
	unsigned every, since;
	uint64_t rng;
	bool stopped;
	enum inject_mode armed;
	/*
	 * A stale RX id drawn when none was to be had: owed, tried again on
	 * every later RX packet (when no other fault is armed) until one is.
	 * A guest that posts every RX buffer again in the pass that reaped it
	 * leaves the device such an id only now and then.
	 */
	bool stale_rx_owed;
	uint64_t done[INJ_NMODES];
	struct virtio_vsock_hdr extra[EXTRA_MAX];
	unsigned n_extra;
} inj = { .armed = INJ_NONE };

bool inject_parse_modes(const char *arg)
{
	char buf[512], *tok, *save;

	if (strlen(arg) >= sizeof(buf))
		return false;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned m;

		if (!strcmp(tok, "all")) {
			inj.enabled = (1u << INJ_NMODES) - 1;
			continue;
		}
		for (m = 0; m < INJ_NMODES && strcmp(tok, mode_names[m]); m++)
			;
		if (m == INJ_NMODES)
			return false;
		inj.enabled |= 1u << m;
	}
	return true;
}

void inject_list(FILE *f)
{
	for (unsigned m = 0; m < INJ_NMODES; m++)
		fprintf(f, "%s\n", mode_names[m]);
}

void inject_configure(unsigned every, uint64_t seed)
{
	inj.every = every ? every : 1;
	inj.rng = seed * 0x9e3779b97f4a7c15ull + 1; /* never 0 */
}

void inject_stop(void)
{
	if (inj.enabled && !inj.stopped)
		fprintf(stderr, "ringside-vhost-vsock: inject: stopped\n");
	inj.stopped = true;
	inj.armed = INJ_NONE;
	inj.stale_rx_owed = false;
	inj.n_extra = 0;
}

void inject_dump(void)
{
	if (!inj.enabled)
		return;
	fprintf(stderr, "ringside-vhost-vsock inject counters:\n");
	for (unsigned m = 0; m < INJ_NMODES; m++)
		if (inj.enabled & (1u << m))
			fprintf(stderr, "  inject_%-14s %llu\n", mode_names[m],
				(unsigned long long)inj.done[m]);
	fflush(stderr);
}

size_t inject_json(char *buf, size_t cap)
{
	size_t n = snprintf(buf, cap, "{\"enabled\":%s,\"stopped\":%s,\"done\":{",
			    inj.enabled ? "true" : "false", inj.stopped ? "true" : "false");
	bool first = true;

	for (unsigned m = 0; m < INJ_NMODES && n < cap; m++) {
		if (!(inj.enabled & (1u << m)))
			continue;
		n += snprintf(buf + n, cap - n, "%s\"%s\":%llu", first ? "" : ",", mode_names[m],
			      (unsigned long long)inj.done[m]);
		first = false;
	}
	if (n < cap)
		n += snprintf(buf + n, cap - n, "}}");
	return n;
}

/* xorshift64*: deterministic for a given --inject-seed */
static uint32_t rnd(void)
{
	inj.rng ^= inj.rng >> 12;
	inj.rng ^= inj.rng << 25;
	inj.rng ^= inj.rng >> 27;
	return (inj.rng * 0x2545f4914f6cdd1dull) >> 32;
}

/* Count one real packet; every N, arm a mode drawn from the enabled ones. */
static void tick(void)
{
	unsigned n = 0, pick;

	if (!inj.enabled || inj.stopped || inj.armed != INJ_NONE || ++inj.since < inj.every)
		return;
	inj.since = 0;
	for (unsigned m = 0; m < INJ_NMODES; m++)
		n += !!(inj.enabled & (1u << m));
	pick = rnd() % n;
	for (unsigned m = 0; m < INJ_NMODES; m++) {
		if (!(inj.enabled & (1u << m)))
			continue;
		if (pick-- == 0) {
			inj.armed = m;
			return;
		}
	}
}

static void consumed(enum inject_mode m)
{
	inj.done[m]++;
	inj.armed = INJ_NONE;
	if (inj.done[m] <= 3) /* tests wait for these lines */
		fprintf(stderr, "ringside-vhost-vsock: inject: %s\n", mode_names[m]);
}

/* An id no chain of this ring has: past the ring (and past any buffer id). */
static uint16_t bogus_id(struct vsock_dev *d, unsigned q)
{
	return d->vq[q].num + 1 + rnd() % 64;
}

/*
 * What the device knows of each ring's buffer ids (split: head indexes,
 * 2.7.8; packed: buffer ids, 2.8.6), for stale ids: when it last completed
 * each one (a sequence number, 0: never), and which chains it completed
 * under a wrong id. The guest never gets those back and keeps them
 * outstanding for good: naming one later would complete it for real.
 */
static struct {
	uint32_t seq[VRING_MAX_SIZE];
	bool lost[VRING_MAX_SIZE];
	uint32_t now;
} ids[2];

static void note_done(unsigned q, uint16_t id)
{
	if (id < VRING_MAX_SIZE)
		ids[q].seq[id] = ++ids[q].now;
}

static void note_lost(unsigned q, uint16_t id)
{
	if (id < VRING_MAX_SIZE)
		ids[q].lost[id] = true;
}

void inject_ring_stopped(unsigned q)
{
	memset(&ids[q], 0, sizeof(ids[q]));
}

/* Heads the driver made available that we have not popped yet (2.7.6). */
static void mark_avail_split(const struct device_ring *vr, bool *busy)
{
	const uint16_t *avail = vr->avail; /* flags, idx, ring[num] */
	uint16_t end = __atomic_load_n(&avail[1], __ATOMIC_ACQUIRE);

	for (uint16_t i = vr->last_avail; i != end && (uint16_t)(i - vr->last_avail) < vr->num;
	     i++) {
		uint16_t id = avail[2 + (i & (vr->num - 1))];

		if (id < vr->num)
			busy[id] = true;
	}
}

/* The same on a packed ring: the ids of the descriptors still available (2.8.1). */
static void mark_avail_packed(const struct device_ring *vr, bool *busy)
{
	const struct vring_packed_desc *ring = vr->desc;
	uint16_t slot = vr->last_avail;
	bool wrap = vr->avail_wrap;

	for (unsigned n = 0; n < vr->num; n++) {
		uint16_t f = __atomic_load_n(&ring[slot].flags, __ATOMIC_ACQUIRE);

		if (!!(f & (1 << VRING_PACKED_DESC_F_AVAIL)) != wrap ||
		    !!(f & (1 << VRING_PACKED_DESC_F_USED)) == wrap)
			return;
		if (ring[slot].id < vr->num)
			busy[ring[slot].id] = true;
		if (++slot == vr->num) {
			slot = 0;
			wrap = !wrap;
		}
	}
}

/*
 * An id in range that names no buffer the guest has outstanding, as far
 * as the device can see: not the chain being completed, not one still
 * available, not one we lost; of the rest, the one completed longest ago
 * (a driver hands ids out again most recently freed first, so that one
 * is the least likely to be back in the ring; ringside and Linux do). On a TX ring, where a
 * driver keeps few buffers in flight, that is a free id; on an RX ring
 * the driver keeps full, only a buffer completed and not yet posted
 * again. A driver that posts it again before reading this completion
 * takes a buffer the device never wrote for the completed one: it cannot
 * tell, only guard against the contents. -1: none now.
 */
static int stale_id(struct vsock_dev *d, unsigned q, const struct vq_elem *e)
{
	static bool busy[VRING_MAX_SIZE];
	const struct device_ring *vr = &d->vq[q];
	int best = -1;

	if (!vr->num || vr->num > VRING_MAX_SIZE || e->id >= vr->num)
		return -1;
	memset(busy, 0, vr->num);
	busy[e->id] = true;
	if (vr->packed)
		mark_avail_packed(vr, busy);
	else
		mark_avail_split(vr, busy);
	for (unsigned id = 0; id < vr->num; id++) {
		if (busy[id] || ids[q].lost[id])
			continue;
		/* ties (never completed) go to the highest id: a driver's
		 * free list starts at 0, so it reaches those last */
		if (best < 0 || ids[q].seq[id] <= ids[q].seq[best])
			best = id;
	}
	return best;
}

/*
 * Complete e under a wrong id: the chain is lost to the guest. With no
 * stale id to be had now, the fault is not held (other modes go on): an
 * RX ring the guest keeps full may not offer one for a long time; a stale
 * RX id is owed instead and tried on the next RX packets.
 */
static bool garble_id(struct vsock_dev *d, unsigned q, struct vq_elem *e, bool stale)
{
	int id = stale ? stale_id(d, q, e) : bogus_id(d, q);

	if (stale && q == VQ_RX)
		inj.stale_rx_owed = id < 0;
	if (id < 0) {
		inj.armed = INJ_NONE;
		return false;
	}
	note_lost(q, e->id);
	e->id = id;
	return true;
}

static uint32_t rewrite(struct vsock_dev *d, struct vq_elem *e, struct virtio_vsock_hdr *h,
			uint32_t len)
{
	switch (inj.armed) {
	case INJ_short_len: /* header says len, used entry says less */
		if (h->op != VSOCK_OP_RW || h->len < 2)
			return 0;
		return VSOCK_HDR_LEN + h->len / 2;
	case INJ_len_overflow:
		if (h->op != VSOCK_OP_RW)
			return 0;
		h->len = 0x10000 + rnd() % 0x10000;
		return len;
	case INJ_len_beyond:
		return e->in_len + 4096;
	case INJ_credit_lie: /* 5.10.6.3: less buffer than we have, never more */
		if (!h->buf_alloc)
			return 0;
		h->buf_alloc = h->buf_alloc / 2 + rnd() % (h->buf_alloc / 2);
		return len;
	case INJ_wrong_dst:
		h->dst_cid = d->guest_cid + 1 + rnd() % 100;
		return len;
	case INJ_bogus_rx_id:
	case INJ_stale_rx_id:
		return garble_id(d, VQ_RX, e, inj.armed == INJ_stale_rx_id) ? len : 0;
	default:
		return 0;
	}
}

uint32_t inject_rx_packet(struct vsock_dev *d, struct vq_elem *e, uint32_t len)
{
	struct virtio_vsock_hdr h;
	enum inject_mode m;
	uint32_t r;

	note_done(VQ_RX, e->id);
	tick();
	if (inj.armed == INJ_NONE && inj.stale_rx_owed && !inj.stopped)
		inj.armed = INJ_stale_rx_id;
	m = inj.armed;
	if (m == INJ_NONE || len < VSOCK_HDR_LEN ||
	    iov_to_buf(e->in, e->n_in, 0, &h, sizeof(h)) != sizeof(h))
		return len;
	r = rewrite(d, e, &h, len);
	if (!r)
		return len;
	buf_to_iov(e->in, e->n_in, 0, &h, sizeof(h));
	consumed(m);
	return r;
}

static uint32_t extra_fwd_cnt; /* the connection's true fwd_cnt: no credit lie */

static void extra(uint32_t src, uint32_t dst, uint16_t type, uint16_t op, uint32_t len)
{
	if (inj.n_extra < EXTRA_MAX)
		inj.extra[inj.n_extra++] = (struct virtio_vsock_hdr){
			.src_cid = VSOCK_CID_HOST,
			.src_port = src,
			.dst_port = dst,
			.type = type,
			.op = op,
			.len = len,
			.fwd_cnt = extra_fwd_cnt,
		};
}

void inject_rx_extra(uint32_t host_port, uint32_t guest_port, uint16_t type, uint16_t op,
		     uint32_t fwd_cnt)
{
	enum inject_mode m = inj.armed;

	extra_fwd_cnt = fwd_cnt;

	switch (m) {
	case INJ_rw_unknown: /* a payload-less header: the chain may be short */
		extra(host_port ^ 0x40000000, guest_port, type, VSOCK_OP_RW, 0);
		break;
	case INJ_bad_op:
		extra(host_port, guest_port, type, 100 + rnd() % 100, 0);
		break;
	case INJ_bad_type:
		extra(host_port, guest_port, 3 + rnd() % 100, VSOCK_OP_CREDIT_UPDATE, 0);
		break;
	case INJ_zero_rw:
		if (op == VSOCK_OP_RST)
			return;
		extra(host_port, guest_port, type, VSOCK_OP_RW, 0);
		break;
	case INJ_rst_storm:
		for (unsigned i = 0; i < EXTRA_MAX; i++)
			extra(0x50000000 + rnd() % 0x1000, 0x50000000 + rnd() % 0x1000, type,
			      VSOCK_OP_RST, 0);
		break;
	case INJ_dup_response:
		if (op == VSOCK_OP_RST || op == VSOCK_OP_SHUTDOWN)
			return;
		extra(host_port, guest_port, type, VSOCK_OP_RESPONSE, 0);
		break;
	default:
		return;
	}
	consumed(m);
}

bool inject_rx_waiting(void)
{
	return inj.n_extra > 0;
}

bool inject_rx_pending(struct vsock_dev *d, const struct vq_elem *e, uint32_t *len)
{
	struct virtio_vsock_hdr *h;

	if (!inj.n_extra)
		return false;
	note_done(VQ_RX, e->id);
	h = &inj.extra[--inj.n_extra];
	h->dst_cid = d->guest_cid;
	h->buf_alloc = d->buf_alloc;
	*len = buf_to_iov(e->in, e->n_in, 0, h, sizeof(*h));
	return true;
}

void inject_tx_id(struct vsock_dev *d, struct vq_elem *e)
{
	enum inject_mode m = inj.armed;

	note_done(VQ_TX, e->id);
	if ((m == INJ_bogus_tx_id || m == INJ_stale_tx_id) &&
	    garble_id(d, VQ_TX, e, m == INJ_stale_tx_id))
		consumed(m);
}

uint64_t inject_rx_room(uint64_t room)
{
	if (inj.armed != INJ_split || room < 2)
		return room;
	consumed(INJ_split);
	return 1;
}
