// SPDX-License-Identifier: MIT
/*
 * Both virtqueue layouts through the one interface, against the device
 * model: traffic at volume (split indices and packed wrap counters wrap
 * many times), chains of every length, indirect tables, completion in any
 * order, notification suppression in both directions, and a device that
 * writes nonsense. Every test runs for split 256, packed 256 and packed
 * 100 (not a power of two). Random choices come from a fixed-seed LCG.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/virtqueue.h"
#include "ring_model.h"

struct param {
	enum virtq_layout layout;
	uint16_t size;
};

static const struct param split256 = { VIRTQ_SPLIT, 256 };
static const struct param packed256 = { VIRTQ_PACKED, 256 };
static const struct param packed100 = { VIRTQ_PACKED, 100 };

static uint32_t rnd_state;

static void rnd_seed(uint32_t s)
{
	rnd_state = s;
}

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

#define SEG_MAX 16

static uint8_t out_pattern(unsigned int req, size_t k)
{
	return (uint8_t)(req * 31 + k * 7 + 1);
}

static uint8_t in_pattern(unsigned int req, size_t k)
{
	return (uint8_t)(req * 17 + k * 3 + 0x55);
}

/* ---- a workload with every byte checked ---- */

struct req {
	unsigned int idx;
	bool in_flight;
	unsigned int n_out, n_in;
	struct vbuf *v; /* out parts, then in parts */
	uint8_t *data;
	uint32_t expect_len;
};

struct traffic {
	struct ring_fixture *fx;
	const struct param *p;
	unsigned int max_chain;
	bool ooo; /* complete in random order */
	enum model_kick_mode kick_mode;
	struct req *reqs;
	unsigned int n_reqs;
	uint8_t *pool;
	size_t stride;
	unsigned int *free_list;
	unsigned int n_free;
	uint64_t added, completed, publishes, adds_since_kick;
};

static void traffic_init(struct traffic *t, const struct param *p, uint64_t features,
			 unsigned int max_chain)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->p = p;
	t->fx = ring_fixture_new(p->layout, p->size, features);
	assert_non_null(t->fx);
	t->max_chain = max_chain;
	t->ooo = true;
	t->kick_mode = (features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX)) ? MODEL_KICK_EVENT :
								     MODEL_KICK_ALWAYS;
	ring_model_set_kick_mode(&t->fx->m, t->kick_mode);
	t->n_reqs = p->size;
	t->stride = (size_t)max_chain * SEG_MAX;
	t->pool = calloc(t->n_reqs, t->stride);
	t->reqs = calloc(t->n_reqs, sizeof(*t->reqs));
	t->free_list = calloc(t->n_reqs, sizeof(*t->free_list));
	assert_non_null(t->pool);
	for (i = 0; i < t->n_reqs; i++) {
		t->reqs[i].idx = i;
		t->reqs[i].data = t->pool + i * t->stride;
		t->reqs[i].v = calloc(max_chain, sizeof(struct vbuf));
		t->free_list[t->n_free++] = t->n_reqs - 1 - i;
	}
}

static void traffic_fini(struct traffic *t)
{
	unsigned int i;

	for (i = 0; i < t->n_reqs; i++)
		free(t->reqs[i].v);
	free(t->reqs);
	free(t->pool);
	free(t->free_list);
	ring_fixture_free(t->fx);
}

static void req_fill(struct req *r, unsigned int n_out, unsigned int n_in)
{
	unsigned int j, total = n_out + n_in;
	size_t k = 0, b;

	r->n_out = n_out;
	r->n_in = n_in;
	for (j = 0; j < total; j++) {
		uint8_t *p = r->data + j * SEG_MAX;

		r->v[j].addr = p;
		r->v[j].len = 1 + rnd() % SEG_MAX;
		for (b = 0; b < r->v[j].len; b++)
			p[b] = j < n_out ? out_pattern(r->idx, k++) : 0xee;
	}
}

/* Add one buffer with a random chain; false if the ring is full. */
static bool traffic_add_one(struct traffic *t, unsigned int len)
{
	struct req *r;
	unsigned int n_out;
	int err;

	if (!t->n_free)
		return false;
	r = &t->reqs[t->free_list[t->n_free - 1]];
	n_out = rnd() % (len + 1);
	req_fill(r, n_out, len - n_out);
	err = virtq_add(t->fx->vq, r->v, n_out, r->v + n_out, len - n_out, r);
	if (err == -ENOSPC)
		return false;
	assert_int_equal(err, 0);
	t->n_free--;
	r->in_flight = true;
	t->added++;
	t->adds_since_kick++;
	return true;
}

static struct req *traffic_req_of(struct traffic *t, const struct model_buf *b)
{
	size_t off;

	assert_true(b->nseg > 0);
	off = (uint8_t *)b->seg[0].addr - t->pool;
	assert_true(off < t->n_reqs * t->stride);
	assert_int_equal(off % t->stride, 0);
	return &t->reqs[off / t->stride];
}

/*
 * The device's side: check what it got and write a reply, random length
 * or (@full) every writable byte. Returns the length.
 */
static uint32_t traffic_device_reply(struct traffic *t, unsigned int i, bool full)
{
	struct model_buf *b = &t->fx->m.held[i];
	struct req *r = traffic_req_of(t, b);
	uint8_t buf[SEG_MAX * 512], reply[SEG_MAX * 512];
	unsigned int j;
	size_t n, k;
	uint32_t len;

	assert_true(r->in_flight);
	assert_int_equal(b->nseg, r->n_out + r->n_in);
	for (j = 0; j < b->nseg; j++) {
		assert_ptr_equal(b->seg[j].addr, r->v[j].addr);
		assert_int_equal(b->seg[j].len, r->v[j].len);
		assert_int_equal(b->seg[j].write, j >= r->n_out);
	}
	n = model_buf_read(b, buf, sizeof(buf));
	assert_int_equal(n, b->out_len);
	for (k = 0; k < n; k++)
		assert_int_equal(buf[k], out_pattern(r->idx, k));
	len = b->in_len ? rnd() % (b->in_len + 1) : 0;
	if (full)
		len = b->in_len;
	for (k = 0; k < len; k++)
		reply[k] = in_pattern(r->idx, k);
	assert_int_equal(model_buf_write(b, reply, len), len);
	r->expect_len = len;
	return len;
}

static void traffic_device_use(struct traffic *t, unsigned int i)
{
	ring_model_use(&t->fx->m, i, traffic_device_reply(t, i, false));
}

static void traffic_reap(struct traffic *t)
{
	struct req *r;
	uint32_t len;
	size_t k, seg_off;
	unsigned int j;

	while ((r = virtq_get_used(t->fx->vq, &len))) {
		assert_true(r >= t->reqs && r < t->reqs + t->n_reqs);
		assert_true(r->in_flight);
		assert_int_equal(len, r->expect_len);
		/* The reply sits across the writable parts in order. */
		for (j = r->n_out, k = 0; j < r->n_out + r->n_in && k < len; j++)
			for (seg_off = 0; seg_off < r->v[j].len && k < len; seg_off++, k++)
				assert_int_equal(((uint8_t *)r->v[j].addr)[seg_off],
						 in_pattern(r->idx, k));
		r->in_flight = false;
		t->free_list[t->n_free++] = r->idx;
		t->completed++;
	}
}

static void traffic_kick(struct traffic *t)
{
	bool kicked = virtq_kick(t->fx->vq);

	/* ALWAYS and EVENT (device drained, wants the next): kick iff new. */
	if (t->kick_mode == MODEL_KICK_NEVER)
		assert_false(kicked);
	else
		assert_int_equal(kicked, t->adds_since_kick > 0);
	t->adds_since_kick = 0;
}

static void traffic_device_round(struct traffic *t)
{
	struct ring_model *m = &t->fx->m;
	unsigned int n;

	ring_model_fetch_all(m);
	n = !m->n_held ? 0 : rnd() % (m->n_held + 1);
	while (n--) {
		traffic_device_use(t, t->ooo ? rnd() % m->n_held : 0);
		/* Sometimes publish mid-batch, so batches vary. */
		if (rnd() % 4 == 0) {
			t->publishes++;
			if (ring_model_publish(m))
				virtq_interrupt(t->fx->vq);
		}
	}
	t->publishes++;
	if (ring_model_publish(m))
		virtq_interrupt(t->fx->vq);
}

static void traffic_run(struct traffic *t, uint64_t total)
{
	struct virtq_stats st;
	unsigned int n, len, stuck = 0;
	uint64_t before;

	while (t->completed < total) {
		before = t->completed;
		n = 1 + rnd() % 8;
		while (n-- && t->added < total) {
			len = 1 + rnd() % t->max_chain;
			if (!traffic_add_one(t, len))
				break;
		}
		traffic_kick(t);
		traffic_device_round(t);
		traffic_reap(t);
		stuck = t->completed == before ? stuck + 1 : 0;
		if (stuck > 1000)
			fail_msg("no completion in 1000 rounds");
	}
	virtq_get_stats(t->fx->vq, &st);
	assert_int_equal(st.added, total);
	assert_int_equal(st.completed, total);
	assert_int_equal(st.bad_completions, 0);
	assert_int_equal(st.kicks, t->fx->kicks);
	assert_int_equal(st.interrupts, t->fx->m.interrupts);
	assert_int_equal(virtq_free_slots(t->fx->vq), t->p->size);
	assert_int_equal(t->fx->m.errors, 0);
	assert_int_equal(t->fx->m.n_held, 0);
}

static void run_traffic(const struct param *p, uint64_t features, unsigned int max_chain,
			uint64_t total, uint32_t seed)
{
	struct traffic t;
	struct virtq_stats st;
	long live = stub_dma_live;

	rnd_seed(seed);
	traffic_init(&t, p, features, max_chain);
	traffic_run(&t, total);
	virtq_get_stats(t.fx->vq, &st);
	if (features & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC))
		assert_true(st.indirect > 0);
	else
		assert_int_equal(st.indirect, 0);
	/* Interrupt mode throughout: the device must have signalled. */
	assert_true(st.interrupts > 0);
	traffic_fini(&t);
	assert_int_equal(stub_dma_live, live);
}

static unsigned int held_index(const struct ring_model *m, const void *addr)
{
	unsigned int i;

	for (i = 0; i < m->n_held; i++)
		if (m->held[i].seg[0].addr == addr)
			return i;
	fail_msg("buffer %p not held by the device", addr);
	return 0;
}

static uint64_t bad_count(struct ring_fixture *fx)
{
	struct virtq_stats st;

	virtq_get_stats(fx->vq, &st);
	return st.bad_completions;
}

/* 200000 buffers: split's 16-bit indices wrap 3 times, packed 100 wraps
 * its counters thousands of times. */
static void test_traffic_plain(void **state)
{
	run_traffic(*state, 0, 4, 200000, 1);
}

static void test_traffic_event_idx(void **state)
{
	run_traffic(*state, VIRTIO_BIT(VIRTIO_F_EVENT_IDX), 4, 200000, 2);
}

static void test_traffic_indirect(void **state)
{
	run_traffic(*state, VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX), 6,
		    100000, 3);
}

/* Long chains, so packed chains keep straddling the ring's end. */
static void test_traffic_long_chains(void **state)
{
	run_traffic(*state, VIRTIO_BIT(VIRTIO_F_EVENT_IDX), 37, 30000, 4);
}

/* Device polls and asked for no kicks: none sent, all suppressed. */
static void test_traffic_kick_never(void **state)
{
	const struct param *p = *state;
	struct virtq_stats st;
	uint64_t features[2] = { 0, VIRTIO_BIT(VIRTIO_F_EVENT_IDX) };
	struct traffic t;
	int f;

	for (f = 0; f < 2; f++) {
		rnd_seed(5);
		traffic_init(&t, p, features[f], 3);
		t.kick_mode = MODEL_KICK_NEVER;
		ring_model_set_kick_mode(&t.fx->m, MODEL_KICK_NEVER);
		traffic_run(&t, 20000);
		virtq_get_stats(t.fx->vq, &st);
		assert_int_equal(st.kicks, 0);
		assert_true(st.kicks_suppressed > 0);
		traffic_fini(&t);
	}
}

/* Polling mode: callbacks off for good, the device never interrupts. */
static void test_traffic_polling(void **state)
{
	const struct param *p = *state;
	uint64_t features[2] = { 0, VIRTIO_BIT(VIRTIO_F_EVENT_IDX) };
	struct virtq_stats st;
	struct traffic t;
	int f;

	for (f = 0; f < 2; f++) {
		rnd_seed(6);
		traffic_init(&t, p, features[f], 3);
		virtq_disable_cb(t.fx->vq);
		/* Over 65536 completions: no used_event wrap-around either. */
		traffic_run(&t, 140000);
		virtq_get_stats(t.fx->vq, &st);
		assert_int_equal(st.interrupts, 0);
		assert_int_equal(t.fx->m.interrupts, 0);
		assert_true(t.publishes > 0);
		traffic_fini(&t);
	}
}

/* ---- chains ---- */

static void chain_every_length(const struct param *p, uint64_t features)
{
	struct traffic t;
	struct virtq_stats st;
	unsigned int len, slots;

	rnd_seed(7);
	traffic_init(&t, p, features, p->size);
	t.ooo = false;
	for (len = 1; len <= p->size; len++) {
		/* Start each chain at a different ring offset. */
		assert_int_equal(ring_fixture_cycle(t.fx, len % 7), len % 7);
		assert_true(traffic_add_one(&t, len));
		slots = (features & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC)) && len >= 2 ? 1 : len;
		assert_int_equal(virtq_free_slots(t.fx->vq), p->size - slots);
		traffic_kick(&t);
		assert_int_equal(ring_model_fetch_all(&t.fx->m), 1);
		assert_int_equal(t.fx->m.held[0].indirect, slots == 1 && len > 1);
		assert_int_equal(t.fx->m.held[0].ndescs, slots);
		traffic_device_use(&t, 0);
		if (ring_model_publish(&t.fx->m))
			virtq_interrupt(t.fx->vq);
		traffic_reap(&t);
		assert_int_equal(t.completed, len);
		assert_int_equal(virtq_free_slots(t.fx->vq), p->size);
	}
	virtq_get_stats(t.fx->vq, &st);
	assert_int_equal(st.bad_completions, 0);
	assert_int_equal(t.fx->m.errors, 0);
	traffic_fini(&t);
}

static void test_chain_every_length(void **state)
{
	chain_every_length(*state, 0);
}

static void test_chain_every_length_indirect(void **state)
{
	chain_every_length(*state, VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC));
}

/* A full ring of chains: exactly size descriptors fit, then -ENOSPC. */
static void test_full_ring_and_errors(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx = ring_fixture_new(p->layout, p->size, 0);
	static uint8_t byte[VIRTQ_MAX_SIZE];
	struct vbuf b[3] = { { byte, 1 }, { byte + 1, 1 }, { byte + 2, 1 } };
	struct virtq_stats st;
	unsigned int n = 0;

	assert_non_null(fx);
	assert_int_equal(virtq_add(fx->vq, b, 0, b, 0, byte), -EINVAL);
	assert_int_equal(virtq_add(fx->vq, b, 1, NULL, 0, NULL), -EINVAL);
	while (virtq_free_slots(fx->vq) >= 3) {
		assert_int_equal(virtq_add(fx->vq, b, 1, b + 1, 2, byte + n), 0);
		n++;
	}
	assert_int_equal(virtq_add(fx->vq, b, 1, b + 1, 2, byte), -ENOSPC);
	virtq_get_stats(fx->vq, &st);
	assert_int_equal(st.full, 1);
	assert_int_equal(st.added, n);
	/* Whatever is left still takes short chains. */
	while (virtq_free_slots(fx->vq))
		assert_int_equal(virtq_add(fx->vq, b, 1, NULL, 0, byte), 0);
	assert_int_equal(virtq_add(fx->vq, b, 1, NULL, 0, byte), -ENOSPC);
	ring_fixture_free(fx);
}

/*
 * A queue belongs to one CPU (virtq_set_owner): from any other the
 * producer's side, an add (one descriptor or a chain) or a kick, is
 * refused, counted in stats.wrong_cpu, and leaves the ring as it was; on
 * the owner the same calls go on where they were.
 */
static void test_owner_check(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx = ring_fixture_new(p->layout, p->size, 0);
	static struct percpu owner, other;
	static uint8_t byte[4];
	struct vbuf one = { byte, 1 }, two[2] = { { byte + 1, 1 }, { byte + 2, 1 } };
	struct virtq_stats st;
	unsigned int free_slots;
	uint32_t len = 0;

	assert_non_null(fx);
	assert_null(virtq_test_cpu); /* created with no CPU state: the test's own */
	virtq_set_owner(fx->vq, &owner);
	virtq_test_cpu = &owner;
	assert_int_equal(virtq_add(fx->vq, NULL, 0, &one, 1, byte), 0);
	free_slots = virtq_free_slots(fx->vq);

	virtq_test_cpu = &other;
	assert_int_equal(virtq_add(fx->vq, NULL, 0, &one, 1, byte + 3), -EPERM);
	assert_int_equal(virtq_add(fx->vq, two, 1, two + 1, 1, byte + 1), -EPERM);
	assert_false(virtq_kick(fx->vq));
	assert_int_equal(fx->kicks, 0);
	assert_int_equal(virtq_free_slots(fx->vq), free_slots);
	virtq_get_stats(fx->vq, &st);
	assert_int_equal(st.wrong_cpu, 3);
	assert_int_equal(st.added, 1);
	assert_int_equal(st.full, 0); /* refused, not full */

	/* the owner: its kick goes out, the device takes its one buffer */
	virtq_test_cpu = &owner;
	assert_true(virtq_kick(fx->vq));
	assert_int_equal(fx->kicks, 1);
	assert_int_equal(ring_model_fetch_all(&fx->m), 1);
	assert_int_equal(model_buf_write(&fx->m.held[0], "x", 1), 1);
	ring_model_complete(&fx->m, 0, 1);

	assert_ptr_equal(virtq_get_used(fx->vq, &len), byte);
	assert_int_equal(len, 1);
	assert_int_equal(byte[0], 'x');
	assert_null(virtq_get_used(fx->vq, &len));
	virtq_get_stats(fx->vq, &st);
	assert_int_equal(st.wrong_cpu, 3);
	assert_int_equal(st.completed, 1);
	assert_int_equal(st.bad_completions, 0);
	assert_int_equal(fx->m.errors, 0);
	virtq_test_cpu = NULL;
	ring_fixture_free(fx);
}

/* A chain longer than the queue is refused even with indirect tables
 * (2.7.5.3.1, 2.8.19). */
static void test_chain_too_long(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx =
		ring_fixture_new(p->layout, p->size, VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC));
	struct vbuf *v = calloc(p->size + 1u, sizeof(*v));
	static uint8_t byte;
	unsigned int i;

	assert_non_null(fx);
	for (i = 0; i <= p->size; i++)
		v[i] = (struct vbuf){ &byte, 1 };
	assert_int_equal(virtq_add(fx->vq, v, p->size + 1u, NULL, 0, &byte), -EINVAL);
	assert_int_equal(virtq_add(fx->vq, v, p->size, NULL, 0, &byte), 0);
	assert_int_equal(virtq_free_slots(fx->vq), p->size - 1);
	free(v);
	ring_fixture_free(fx);
}

/* No memory for an indirect table: fall back to a direct chain. */
static void test_indirect_fallback(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx =
		ring_fixture_new(p->layout, p->size, VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC));
	static uint8_t data[4];
	struct vbuf v[4] = { { data, 1 }, { data + 1, 1 }, { data + 2, 1 }, { data + 3, 1 } };
	struct virtq_stats st;
	uint32_t len;

	assert_non_null(fx);
	/*
	 * The queue's table block came with it; turned off and on, indirect
	 * needs memory for a new one at the next table.
	 */
	virtq_set_indirect_min(fx->vq, 0);
	virtq_set_indirect_min(fx->vq, 2);
	stub_dma_fail_next = 1;
	assert_int_equal(virtq_add(fx->vq, v, 2, v + 2, 2, data), 0);
	assert_int_equal(virtq_free_slots(fx->vq), p->size - 4);
	assert_int_equal(virtq_add(fx->vq, v, 2, v + 2, 2, data + 1), 0);
	assert_int_equal(virtq_free_slots(fx->vq), p->size - 5);
	/* Threshold: chains of 3+ only. */
	virtq_set_indirect_min(fx->vq, 3);
	assert_int_equal(virtq_add(fx->vq, v, 1, v + 1, 1, data + 2), 0);
	assert_int_equal(virtq_free_slots(fx->vq), p->size - 7);
	virtq_set_indirect_min(fx->vq, 0);
	assert_int_equal(virtq_add(fx->vq, v, 2, v + 2, 2, data + 3), 0);
	assert_int_equal(virtq_free_slots(fx->vq), p->size - 11);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), 4);
	assert_false(fx->m.held[0].indirect);
	assert_true(fx->m.held[1].indirect);
	assert_false(fx->m.held[2].indirect);
	assert_false(fx->m.held[3].indirect);
	while (fx->m.n_held)
		ring_model_use(&fx->m, fx->m.n_held - 1, 1);
	ring_model_publish(&fx->m);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 3);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 2);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 1);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
	assert_int_equal(len, 1);
	assert_null(virtq_get_used(fx->vq, &len));
	virtq_get_stats(fx->vq, &st);
	assert_int_equal(st.indirect, 1);
	assert_int_equal(st.bad_completions, 0);
	assert_int_equal(virtq_free_slots(fx->vq), p->size);
	ring_fixture_free(fx);
}

/* Fill the ring, complete in reverse and in a shuffled order. */
static void test_out_of_order(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx = ring_fixture_new(p->layout, p->size, 0);
	uint8_t *data = calloc(p->size, 4);
	unsigned int *order = calloc(p->size, sizeof(*order));
	unsigned int i, j, tmp, round;
	uint32_t len;
	void *tok;

	assert_non_null(fx);
	rnd_seed(8);
	for (round = 0; round < 6; round++) {
		for (i = 0; i < p->size; i++) {
			struct vbuf in = { data + 4 * i, 4 };

			assert_int_equal(virtq_add(fx->vq, NULL, 0, &in, 1, data + 4 * i), 0);
		}
		virtq_kick(fx->vq);
		assert_int_equal(ring_model_fetch_all(&fx->m), p->size);
		for (i = 0; i < p->size; i++)
			order[i] = i;
		for (i = p->size - 1; round && i > 0; i--) {
			j = rnd() % (i + 1);
			tmp = order[i];
			order[i] = order[j];
			order[j] = tmp;
		}
		/* held[] reorders as it shrinks: find each by address. */
		for (i = 0; i < p->size; i++) {
			uint8_t *want = data + 4 * (round ? order[i] : p->size - 1 - i);

			for (j = 0; fx->m.held[j].seg[0].addr != want; j++)
				;
			ring_model_use(&fx->m, j, (uint32_t)(want - data) % 5);
		}
		ring_model_publish(&fx->m);
		for (i = 0; i < p->size; i++) {
			uint8_t *want = data + 4 * (round ? order[i] : p->size - 1 - i);

			tok = virtq_get_used(fx->vq, &len);
			assert_ptr_equal(tok, want);
			assert_int_equal(len, (uint32_t)(want - data) % 5);
		}
		assert_null(virtq_get_used(fx->vq, &len));
		assert_int_equal(virtq_free_slots(fx->vq), p->size);
	}
	free(order);
	free(data);
	ring_fixture_free(fx);
}

/*
 * After a device reset the driver takes back every buffer it still has
 * posted, completed or not, each exactly once, indirect tables freed.
 */
static void test_detach_unused(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx =
		ring_fixture_new(p->layout, p->size, VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC));
	uint8_t *data = calloc(p->size, 8);
	uint8_t *seen = calloc(p->size, 1);
	unsigned int i, n, added = 0;
	uint32_t len;
	void *tok;

	assert_non_null(fx);
	/* a mix of direct and indirect (two-part) buffers */
	for (i = 0; i < p->size; i++) {
		struct vbuf in[2] = { { data + 8 * i, 4 }, { data + 8 * i + 4, 4 } };

		if (virtq_add(fx->vq, NULL, 0, in, i % 2 ? 2 : 1, data + 8 * i))
			break;
		added++;
	}
	virtq_kick(fx->vq);
	n = ring_model_fetch_all(&fx->m);
	assert_int_equal(n, added);
	/* the device completes a few; the driver reaps one of them */
	ring_model_use(&fx->m, 0, 4);
	ring_model_use(&fx->m, 0, 4);
	ring_model_publish(&fx->m);
	tok = virtq_get_used(fx->vq, &len);
	assert_non_null(tok);
	seen[((uint8_t *)tok - data) / 8]++;

	while ((tok = virtq_detach_unused(fx->vq)))
		seen[((uint8_t *)tok - data) / 8]++;
	for (i = 0; i < added; i++)
		assert_int_equal(seen[i], 1);
	assert_null(virtq_detach_unused(fx->vq));
	free(seen);
	free(data);
	ring_fixture_free(fx);
	assert_int_equal(stub_dma_live, 0);
}

/* ---- available buffer notifications (kicks) ---- */

static void test_kick_flags(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx = ring_fixture_new(p->layout, p->size, 0);
	static uint8_t byte;
	struct vbuf b = { &byte, 1 };
	struct virtq_stats st;

	assert_non_null(fx);
	assert_false(virtq_kick(fx->vq)); /* nothing added */
	assert_int_equal(virtq_add(fx->vq, &b, 1, NULL, 0, &byte), 0);
	assert_true(virtq_kick(fx->vq));
	ring_model_set_kick_mode(&fx->m, MODEL_KICK_NEVER);
	assert_int_equal(virtq_add(fx->vq, &b, 1, NULL, 0, &byte), 0);
	assert_false(virtq_kick_prepare(fx->vq));
	assert_int_equal(virtq_add(fx->vq, &b, 1, NULL, 0, &byte), 0);
	ring_model_set_kick_mode(&fx->m, MODEL_KICK_ALWAYS);
	assert_true(virtq_kick_prepare(fx->vq));
	virtq_notify(fx->vq);
	virtq_get_stats(fx->vq, &st);
	assert_int_equal(st.kicks, 2);
	assert_int_equal(st.kicks_suppressed, 1);
	assert_int_equal(fx->kicks, 2);
	ring_fixture_free(fx);
}

/*
 * EVENT_IDX kicks around index wrap, checked against brute force: the
 * driver must kick iff one of the positions it just filled is the one the
 * device named. Split: avail indices near 65535; packed: slots and wrap
 * counters around the ring's end, events in either lap.
 */
static void test_kick_event_idx_brute(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx =
		ring_fixture_new(p->layout, p->size, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
	struct ring_model *m;
	static uint8_t data[64];
	struct vbuf v[3] = { { data, 1 }, { data + 1, 1 }, { data + 2, 1 } };
	unsigned int iter, k, nbuf, chain, filled, hits = 0, i;
	uint16_t pos0, off, pos;
	bool wrap0, wrap, expect, w;
	int delta;

	assert_non_null(fx);
	m = &fx->m;
	rnd_seed(9);
	ring_model_set_kick_mode(m, MODEL_KICK_EVENT);
	/* Bring split's avail index to just below the 16-bit wrap. */
	if (p->layout == VIRTQ_SPLIT)
		assert_int_equal(ring_fixture_cycle(fx, 65536 - 300), 65536 - 300);
	for (iter = 0; iter < 4000; iter++) {
		pos0 = p->layout == VIRTQ_SPLIT ? m->last_avail : m->avail_pos;
		wrap0 = m->avail_wrap;
		nbuf = 1 + rnd() % 5;
		filled = 0;
		for (k = 0; k < nbuf; k++) {
			chain = 1 + rnd() % 3;
			assert_int_equal(virtq_add(fx->vq, v, chain, NULL, 0, data + 3 + k), 0);
			/* split counts buffers, packed counts slots */
			filled += p->layout == VIRTQ_SPLIT ? 1 : chain;
		}
		delta = (int)(rnd() % (filled + 7)) - 3;
		if (p->layout == VIRTQ_SPLIT) {
			off = (uint16_t)(pos0 + delta);
			ring_model_set_avail_event(m, off, false);
			expect = delta >= 0 && (unsigned int)delta < filled;
		} else {
			/* Event slot and wrap; sometimes the other lap. */
			int s = ((int)pos0 + delta) % p->size;
			bool flip = rnd() % 4 == 0;

			w = wrap0;
			if ((int)pos0 + delta < 0)
				s += p->size, w = !w;
			else if ((int)pos0 + delta >= p->size)
				w = !w;
			if (flip)
				w = !w;
			off = (uint16_t)s;
			ring_model_set_avail_event(m, off, w);
			/* Brute force: walk the slots just filled. */
			expect = false;
			pos = pos0;
			wrap = wrap0;
			for (i = 0; i < filled; i++) {
				if (pos == off && wrap == w)
					expect = true;
				if (++pos == p->size) {
					pos = 0;
					wrap = !wrap;
				}
			}
		}
		assert_int_equal(virtq_kick_prepare(fx->vq), expect);
		hits += expect;
		ring_model_fetch_all(m);
		while (m->n_held)
			ring_model_use(m, rnd() % m->n_held, 0);
		ring_model_publish(m);
		while (virtq_get_used(fx->vq, NULL))
			;
		assert_int_equal(virtq_free_slots(fx->vq), p->size);
	}
	/* Both outcomes were exercised many times. */
	assert_true(hits > 500 && hits < 3500);
	if (p->layout == VIRTQ_SPLIT)
		assert_true(m->last_avail > 1000 && m->last_avail < 30000);
	assert_int_equal(m->errors, 0);
	ring_fixture_free(fx);
}

/* ---- used buffer notifications (interrupts) ---- */

/*
 * EVENT_IDX interrupts: with callbacks on and everything reaped, the next
 * used buffer interrupts and a second one before the driver looks does
 * not. 70000 rounds cross split's used index wrap and packed's wrap
 * counter flips many times.
 */
static void test_interrupt_event_idx(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx =
		ring_fixture_new(p->layout, p->size, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
	static uint8_t data[8];
	struct vbuf in[2] = { { data, 4 }, { data + 4, 4 } };
	struct ring_model *m;
	struct virtq_stats st;
	unsigned int iter;
	uint32_t len;

	assert_non_null(fx);
	m = &fx->m;
	for (iter = 0; iter < 70000; iter++) {
		unsigned int chain = 1 + iter % 2;

		assert_int_equal(virtq_add(fx->vq, NULL, 0, in, chain, data), 0);
		assert_int_equal(virtq_add(fx->vq, NULL, 0, in, 1, data + 1), 0);
		virtq_kick(fx->vq);
		assert_int_equal(ring_model_fetch_all(m), 2);
		assert_true(ring_model_complete(m, 0, 3));
		assert_false(ring_model_complete(m, 0, 2));
		virtq_interrupt(fx->vq);
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
		assert_int_equal(len, 3);
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 1);
		assert_int_equal(len, 2);
		assert_null(virtq_get_used(fx->vq, &len));
	}
	virtq_get_stats(fx->vq, &st);
	assert_int_equal(st.interrupts, 70000);
	assert_int_equal(m->interrupts, 70000);
	assert_int_equal(st.completed, 140000);
	ring_fixture_free(fx);
}

/* Interrupt mode vs polling mode and the enable_cb re-check. */
static void interrupt_modes(const struct param *p, uint64_t features)
{
	struct ring_fixture *fx = ring_fixture_new(p->layout, p->size, features);
	static uint8_t data[4];
	struct vbuf in = { data, 4 };
	struct ring_model *m;
	uint32_t len;
	int i;

	assert_non_null(fx);
	m = &fx->m;
	/* Run the re-check across split's 16-bit index wrap too. */
	assert_int_equal(ring_fixture_cycle(fx, 65536 - p->size), 65536 - p->size);
	for (i = 0; i < 3 * p->size; i++) {
		/* Polling mode: no interrupt for a used buffer. */
		virtq_disable_cb(fx->vq);
		assert_int_equal(virtq_add(fx->vq, NULL, 0, &in, 1, data), 0);
		virtq_kick(fx->vq);
		assert_int_equal(ring_model_fetch_all(m), 1);
		assert_false(ring_model_complete(m, 0, 1));
		/* Raced in while disabled: enable_cb says poll again. */
		assert_true(virtq_has_used(fx->vq));
		assert_false(virtq_enable_cb(fx->vq));
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
		assert_int_equal(len, 1);
		assert_true(virtq_enable_cb(fx->vq));
		assert_false(virtq_has_used(fx->vq));
		/* Interrupt mode: the next one interrupts. */
		assert_int_equal(virtq_add(fx->vq, NULL, 0, &in, 1, data + 1), 0);
		virtq_kick(fx->vq);
		assert_int_equal(ring_model_fetch_all(m), 1);
		assert_true(ring_model_complete(m, 0, 4));
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 1);
		assert_int_equal(len, 4);
	}
	assert_int_equal(m->errors, 0);
	ring_fixture_free(fx);
}

static void test_interrupt_modes(void **state)
{
	interrupt_modes(*state, 0);
}

static void test_interrupt_modes_event_idx(void **state)
{
	interrupt_modes(*state, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
}

/* ---- a device that writes nonsense ---- */

static struct ring_fixture *bad_setup(const struct param *p, uint8_t *data, unsigned int n)
{
	struct ring_fixture *fx = ring_fixture_new(p->layout, p->size, 0);
	unsigned int i;

	assert_non_null(fx);
	for (i = 0; i < n; i++) {
		struct vbuf in = { data + 8 * i, 8 };

		assert_int_equal(virtq_add(fx->vq, NULL, 0, &in, 1, data + 8 * i), 0);
	}
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), n);
	return fx;
}

/* The queue still moves buffers (minus what the device garbled). */
static void assert_still_works(struct ring_fixture *fx)
{
	assert_int_equal(ring_fixture_cycle(fx, 3 * virtq_size(fx->vq)), 3 * virtq_size(fx->vq));
	assert_int_equal(fx->m.errors, 0);
}

static void test_bad_id(void **state)
{
	const struct param *p = *state;
	static uint8_t data[8 * 4];
	struct ring_fixture *fx = bad_setup(p, data, 4);
	uint32_t len;

	/* Used: buffer 0, an out-of-range id, id 0 again (no longer in
	 * flight), buffer 3. Buffers 1 and 2 are lost to the garbling. */
	ring_model_use(&fx->m, held_index(&fx->m, data), 5);
	ring_model_use_raw(&fx->m, p->size + 7, 1, 1);
	ring_model_use_raw(&fx->m, 0, 1, 1);
	ring_model_drop(&fx->m, held_index(&fx->m, data + 8));
	ring_model_drop(&fx->m, held_index(&fx->m, data + 16));
	ring_model_use(&fx->m, held_index(&fx->m, data + 24), 6);
	ring_model_publish(&fx->m);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
	assert_int_equal(len, 5);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 24);
	assert_int_equal(len, 6);
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), 2);
	/* The two garbled buffers are never reused: we cannot know the
	 * device is done with them. */
	assert_int_equal(virtq_free_slots(fx->vq), p->size - 2);
	assert_still_works(fx);
	assert_int_equal(bad_count(fx), 2);
	ring_fixture_free(fx);
}

/*
 * A device that keeps completing buffers under ids no buffer in flight
 * has (in range and already completed, or out of range) loses the driver
 * one buffer each time. Until half the ring is lost the queue works on;
 * at half it is marked broken, so the driver resets the device instead
 * of draining the ring to a stall no completion ends.
 */
static unsigned int broken_calls;

static void count_broken(void)
{
	broken_calls++;
}

static void test_lost_half_breaks(void **state)
{
	const struct param *p = *state;
	static uint8_t data[8 * 256];
	struct ring_fixture *fx = bad_setup(p, data, p->size);
	struct virtq_stats st;
	unsigned int i;
	uint32_t len;

	/* the transport's recovery is told once, when the queue breaks */
	broken_calls = 0;
	virtq_on_broken(count_broken);

	/* buffer 0 comes back properly: id 0 is now stale */
	ring_model_complete(&fx->m, held_index(&fx->m, data), 8);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
	for (i = 1; i <= p->size / 2; i++) {
		ring_model_use_raw(&fx->m, i % 2 ? 0 : p->size + i, 1, 1);
		ring_model_drop(&fx->m, held_index(&fx->m, data + 8 * i));
		ring_model_publish(&fx->m);
		assert_null(virtq_get_used(fx->vq, &len));
		assert_int_equal(virtq_is_broken(fx->vq), i == p->size / 2);
		assert_int_equal(broken_calls, i == p->size / 2);
	}
	virtq_get_stats(fx->vq, &st);
	assert_int_equal(st.broken, 1);
	assert_int_equal(st.bad_completions, p->size / 2);
	assert_int_equal(virtq_add(fx->vq, NULL, 0, &(struct vbuf){ data, 8 }, 1, data), -EIO);
	assert_int_equal(virtq_add(fx->vq, NULL, 0, (struct vbuf[]){ { data, 4 }, { data + 4, 4 } },
				   2, data),
			 -EIO);
	assert_false(virtq_has_used(fx->vq));
	assert_int_equal(broken_calls, 1);
	virtq_on_broken(NULL);
	ring_fixture_free(fx);
}

/*
 * Half the ring lost within one batch the driver read at once (split: one
 * used->idx read): the completions after the one that broke the queue
 * are never handed out, by get_used or has_used.
 */
static void test_broken_mid_batch(void **state)
{
	const struct param *p = *state;
	static uint8_t data[8 * 256];
	struct ring_fixture *fx = bad_setup(p, data, p->size);
	unsigned int i, half = p->size / 2;
	uint32_t len;

	/* buffer 0 comes back properly: id 0 is now stale */
	ring_model_complete(&fx->m, held_index(&fx->m, data), 8);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
	for (i = 1; i <= half; i++) {
		ring_model_use_raw(&fx->m, 0, 1, 1);
		ring_model_drop(&fx->m, held_index(&fx->m, data + 8 * i));
	}
	ring_model_use(&fx->m, held_index(&fx->m, data + 8 * (half + 1)), 8);
	ring_model_use(&fx->m, held_index(&fx->m, data + 8 * (half + 2)), 8);
	ring_model_publish(&fx->m);
	assert_true(virtq_has_used(fx->vq));
	assert_null(virtq_get_used(fx->vq, &len));
	assert_true(virtq_is_broken(fx->vq));
	assert_false(virtq_has_used(fx->vq));
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), half);
	ring_fixture_free(fx);
}

static void test_bad_len(void **state)
{
	const struct param *p = *state;
	static uint8_t data[8 * 2];
	struct ring_fixture *fx = bad_setup(p, data, 2);
	static uint8_t out;
	struct vbuf ob = { &out, 1 };
	uint32_t len;

	/* 9 bytes into an 8-byte buffer: handed back with len 0. */
	ring_model_complete(&fx->m, 0, 9);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
	assert_int_equal(len, 0);
	ring_model_complete(&fx->m, 0, 8);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 8);
	assert_int_equal(len, 8);
	/*
	 * A device-readable-only buffer has nothing to write into: a len
	 * there (DPDK's packed vhost reports what it read) is ignored.
	 */
	assert_int_equal(virtq_add(fx->vq, &ob, 1, NULL, 0, &out), 0);
	virtq_kick(fx->vq);
	ring_model_fetch_all(&fx->m);
	ring_model_complete(&fx->m, 0, 1);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), &out);
	assert_int_equal(len, 0);
	assert_int_equal(bad_count(fx), 1);
	assert_int_equal(virtq_free_slots(fx->vq), p->size);
	assert_still_works(fx);
	ring_fixture_free(fx);
}

/*
 * Random garbage in used elements: never crash, never return a token
 * twice or one not in flight, and count what was dropped.
 */
static void test_bad_fuzz(void **state)
{
	const struct param *p = *state;
	struct ring_fixture *fx = ring_fixture_new(p->layout, p->size, 0);
	uint8_t *data = calloc(p->size, 8);
	bool *in_flight = calloc(p->size, sizeof(bool));
	unsigned int iter, i, n, returned = 0;
	uint32_t len;
	uint8_t *tok;

	assert_non_null(fx);
	rnd_seed(10);
	for (iter = 0; iter < 20000 && virtq_free_slots(fx->vq); iter++) {
		n = 1 + rnd() % 4;
		for (i = 0; i < p->size && n; i++) {
			struct vbuf in = { data + 8 * i, 8 };

			if (in_flight[i])
				continue;
			if (virtq_add(fx->vq, NULL, 0, &in, 1, data + 8 * i))
				break;
			in_flight[i] = true;
			n--;
		}
		virtq_kick(fx->vq);
		ring_model_fetch_all(&fx->m);
		while (fx->m.n_held) {
			unsigned int h = rnd() % fx->m.n_held;

			if (rnd() % 64 == 0) {
				/* garbled id; keeps the device in step */
				ring_model_use_raw(&fx->m, rnd() % (2u * p->size), rnd() % 12, 1);
				ring_model_drop(&fx->m, h);
			} else {
				ring_model_use(&fx->m, h, rnd() % 12);
			}
		}
		ring_model_publish(&fx->m);
		while ((tok = virtq_get_used(fx->vq, &len))) {
			i = (unsigned int)(tok - data) / 8;
			assert_true(i < p->size && in_flight[i]);
			assert_true(len <= 8);
			in_flight[i] = false;
			returned++;
		}
	}
	assert_true(bad_count(fx) > 100);
	assert_true(returned > 1000);
	free(in_flight);
	free(data);
	ring_fixture_free(fx);
}

/* The device scribbles at random on everything it can write. */
static void device_scribble(struct ring_model *m)
{
	uint16_t slot = rnd() % m->size;

	if (m->layout == VIRTQ_SPLIT) {
		switch (rnd() % 3) {
		case 0:
			m->used->idx = (uint16_t)rnd();
			break;
		case 1:
			m->used->ring[slot].id = rnd() % (2u * m->size);
			break;
		default:
			m->used->ring[slot].len = rnd();
			break;
		}
		return;
	}
	switch (rnd() % 3) {
	case 0:
		m->pdesc[slot].flags = (uint16_t)rnd();
		break;
	case 1:
		m->pdesc[slot].id = rnd() % (2u * m->size);
		break;
	default:
		m->pdesc[slot].len = rnd();
		break;
	}
}

/*
 * Chaos: random writes over the used ring / descriptor ring while
 * traffic runs. The driver must not crash (ASan/UBSan watch), and every
 * token it returns must be one in flight, once, with a sane length.
 */
static void bad_chaos(const struct param *p, uint64_t features, unsigned int min_returned)
{
	struct ring_fixture *fx = ring_fixture_new(p->layout, p->size, features);
	uint8_t *data = calloc(p->size, 8);
	bool *in_flight = calloc(p->size, sizeof(bool));
	unsigned int iter, i, n, returned = 0;
	uint32_t len;
	uint8_t *tok;

	assert_non_null(fx);
	rnd_seed(12);
	for (iter = 0; iter < 30000; iter++) {
		n = 1 + rnd() % 4;
		for (i = 0; i < p->size && n; i++) {
			struct vbuf in = { data + 8 * i, 8 };

			if (in_flight[i])
				continue;
			if (virtq_add(fx->vq, NULL, 0, &in, 1, data + 8 * i))
				break;
			in_flight[i] = true;
			n--;
		}
		virtq_kick(fx->vq);
		ring_model_fetch_all(&fx->m);
		while (fx->m.n_held && rnd() % 4)
			ring_model_use(&fx->m, rnd() % fx->m.n_held, rnd() % 10);
		ring_model_publish(&fx->m);
		if (rnd() % 8 == 0)
			device_scribble(&fx->m);
		virtq_enable_cb(fx->vq);
		while ((tok = virtq_get_used(fx->vq, &len))) {
			i = (unsigned int)(tok - data) / 8;
			assert_true(tok >= data && i < p->size && in_flight[i]);
			assert_int_equal((tok - data) % 8, 0);
			assert_true(len <= 8);
			in_flight[i] = false;
			returned++;
		}
		virtq_has_used(fx->vq);
		if (rnd() % 2)
			virtq_disable_cb(fx->vq);
	}
	assert_true(bad_count(fx) > 50);
	assert_true(returned > min_returned);
	free(in_flight);
	free(data);
	ring_fixture_free(fx);
}

static void test_bad_chaos(void **state)
{
	bad_chaos(*state, VIRTIO_BIT(VIRTIO_F_EVENT_IDX), 1000);
}

static void test_create_sizes(void **state)
{
	static const struct {
		enum virtq_layout layout;
		uint16_t size;
		bool ok;
	} cases[] = {
		{ VIRTQ_SPLIT, 0, false },     { VIRTQ_SPLIT, 1, true },
		{ VIRTQ_SPLIT, 100, false },   { VIRTQ_SPLIT, 32768, true },
		{ VIRTQ_SPLIT, 65535, false }, { VIRTQ_PACKED, 0, false },
		{ VIRTQ_PACKED, 1, true },     { VIRTQ_PACKED, 100, true },
		{ VIRTQ_PACKED, 32768, true }, { VIRTQ_PACKED, 32769, false },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ring_fixture *fx =
			ring_fixture_new(cases[i].layout, cases[i].size, VIRTQ_FEATURES);

		assert_int_equal(fx != NULL, cases[i].ok);
		if (fx)
			assert_int_equal(ring_fixture_cycle(fx, 1000), 1000);
		ring_fixture_free(fx);
	}
	assert_int_equal(stub_dma_live, 0);
}

#define RING_TEST(fn, prm) cmocka_unit_test_prestate(fn, (void *)&prm)
#define RING_TESTS(fn) RING_TEST(fn, split256), RING_TEST(fn, packed256), RING_TEST(fn, packed100)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_sizes),
		RING_TESTS(test_traffic_plain),
		RING_TESTS(test_traffic_event_idx),
		RING_TESTS(test_traffic_indirect),
		RING_TESTS(test_traffic_long_chains),
		RING_TESTS(test_traffic_kick_never),
		RING_TESTS(test_traffic_polling),
		RING_TESTS(test_chain_every_length),
		RING_TESTS(test_chain_every_length_indirect),
		RING_TESTS(test_full_ring_and_errors),
		RING_TESTS(test_owner_check),
		RING_TESTS(test_chain_too_long),
		RING_TESTS(test_indirect_fallback),
		RING_TESTS(test_out_of_order),
		RING_TESTS(test_detach_unused),
		RING_TESTS(test_kick_flags),
		RING_TESTS(test_kick_event_idx_brute),
		RING_TESTS(test_interrupt_event_idx),
		RING_TESTS(test_interrupt_modes),
		RING_TESTS(test_interrupt_modes_event_idx),
		RING_TESTS(test_bad_id),
		RING_TESTS(test_lost_half_breaks),
		RING_TESTS(test_broken_mid_batch),
		RING_TESTS(test_bad_len),
		RING_TESTS(test_bad_fuzz),
		RING_TESTS(test_bad_chaos),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
