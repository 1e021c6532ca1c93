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

void inject_list_modes(void)
{
	for (unsigned m = 0; m < INJ_NMODES; m++)
		printf("%s\n", mode_names[m]);
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
		e->id = bogus_id(d, VQ_RX);
		return len;
	default:
		return 0;
	}
}

uint32_t inject_rx_packet(struct vsock_dev *d, struct vq_elem *e, uint32_t len)
{
	struct virtio_vsock_hdr h;
	enum inject_mode m;
	uint32_t r;

	tick();
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
	h = &inj.extra[--inj.n_extra];
	h->dst_cid = d->guest_cid;
	h->buf_alloc = d->buf_alloc;
	*len = buf_to_iov(e->in, e->n_in, 0, h, sizeof(*h));
	return true;
}

void inject_tx_id(struct vsock_dev *d, struct vq_elem *e)
{
	if (inj.armed != INJ_bogus_tx_id)
		return;
	e->id = bogus_id(d, VQ_TX);
	consumed(INJ_bogus_tx_id);
}

uint64_t inject_rx_room(uint64_t room)
{
	if (inj.armed != INJ_split || room < 2)
		return room;
	consumed(INJ_split);
	return 1;
}
