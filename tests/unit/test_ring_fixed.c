// SPDX-License-Identifier: MIT
/*
 * The fixed layout (virtqueue.h: virtq_fixed_set/add/reclaim), split and
 * packed, against the device-side ring model: what the device reads is
 * each slot's own buffer, a batch is published once and kicked once, ids
 * come back whatever the completion order, and a hostile device's
 * completions (id out of range, not in flight, broken packed flags) are
 * counted and dropped without handing a buffer back twice.
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

#define MAXQ 16
#define BUFSZ 32

struct fixed {
	struct ring_fixture *fx;
	struct virtq_fixed_buf bufs[MAXQ];
	uint8_t data[MAXQ][BUFSZ];
	uint16_t size;
};

static struct fixed *fixed_new(enum virtq_layout l, uint16_t size)
{
	struct fixed *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->fx = ring_fixture_new(l, size, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
	assert_non_null(f->fx);
	f->size = size;
	/* EVENT_IDX: the device wants a kick for the next buffer it fetches */
	ring_model_set_kick_mode(&f->fx->m, MODEL_KICK_EVENT);
	for (uint16_t i = 0; i < size; i++) {
		struct vbuf b = { f->data[i], (uint32_t)(8 + i) };

		memset(f->data[i], 0xa0 + i, BUFSZ);
		assert_int_equal(virtq_fixed_set(f->fx->vq, f->bufs, i, &b), 0);
	}
	return f;
}

static void fixed_free(struct fixed *f)
{
	assert_int_equal(f->fx->m.errors, 0);
	ring_fixture_free(f->fx);
	free(f);
}

static uint64_t bad_count(struct fixed *f)
{
	struct virtq_stats st;

	virtq_get_stats(f->fx->vq, &st);
	return st.bad_completions;
}

/* The buffer the device holds at held[i] is slot @id's, byte for byte. */
static void held_is(struct fixed *f, unsigned int i, uint16_t id)
{
	uint8_t got[BUFSZ];
	const struct model_buf *b = &f->fx->m.held[i];

	assert_int_equal(b->in_len, 0);
	assert_int_equal(b->out_len, 8 + id);
	assert_int_equal(model_buf_read(b, got, sizeof(got)), 8 + id);
	assert_memory_equal(got, f->data[id], 8 + id);
}

/* Reclaim everything available; no id may come back twice (@back). */
static unsigned int reclaim_all(struct fixed *f, bool *back)
{
	uint16_t ids[MAXQ];
	unsigned int n = virtq_fixed_reclaim(f->fx->vq, ids, MAXQ, NULL);

	for (unsigned int i = 0; i < n; i++) {
		assert_true(ids[i] < f->size);
		assert_false(back[ids[i]]);
		back[ids[i]] = true;
	}
	return n;
}

/*
 * Many laps in batches of 5 (the ring wraps inside batches), completed in
 * reverse order: the device reads each slot's own buffer, one kick per
 * batch, every id back once, the ring full again at the end.
 */
static void cycle(enum virtq_layout l, uint16_t size)
{
	struct fixed *f = fixed_new(l, size);
	uint16_t free_ids[MAXQ];
	unsigned int nfree = size;

	for (uint16_t i = 0; i < size; i++)
		free_ids[i] = i;
	for (int lap = 0; lap < 200; lap++) {
		unsigned int n = nfree < 5 ? nfree : 5, k;
		uint16_t *batch = &free_ids[nfree - n];
		unsigned long kicks = f->fx->kicks;
		bool back[MAXQ] = { false };

		assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, batch, n), n);
		assert_true(virtq_kick(f->fx->vq));
		assert_int_equal(f->fx->kicks, kicks + 1);
		assert_int_equal(ring_model_fetch_all(&f->fx->m), n);
		for (k = 0; k < n; k++)
			held_is(f, k, batch[k]);
		nfree -= n;
		while (f->fx->m.n_held)
			ring_model_use(&f->fx->m, f->fx->m.n_held - 1, 0);
		ring_model_publish(&f->fx->m);
		assert_int_equal(reclaim_all(f, back), n);
		for (k = 0; k < n; k++) {
			assert_true(back[batch[k]]);
			free_ids[nfree + k] = batch[k];
		}
		nfree += n;
		assert_int_equal(virtq_free_slots(f->fx->vq), size);
	}
	assert_int_equal(bad_count(f), 0);
	fixed_free(f);
}

static void test_cycle_split(void **s)
{
	cycle(VIRTQ_SPLIT, 8);
}

static void test_cycle_packed(void **s)
{
	cycle(VIRTQ_PACKED, 7);
}

/*
 * A full ring added in one call: all of it, then nothing more; reclaim
 * bounded by @max hands back the rest on the next call.
 */
static void full_and_max(enum virtq_layout l)
{
	struct fixed *f = fixed_new(l, 8);
	uint16_t ids[8] = { 7, 6, 5, 4, 3, 2, 1, 0 }, got[8];
	bool back[8] = { false };

	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 8), 8);
	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 1), 0);
	assert_int_equal(ring_model_fetch_all(&f->fx->m), 8);
	while (f->fx->m.n_held)
		ring_model_use(&f->fx->m, 0, 0);
	ring_model_publish(&f->fx->m);
	assert_int_equal(virtq_fixed_reclaim(f->fx->vq, got, 3, NULL), 3);
	for (int i = 0; i < 3; i++)
		back[got[i]] = true;
	assert_int_equal(reclaim_all(f, back), 5);
	for (int i = 0; i < 8; i++)
		assert_true(back[i]);
	assert_int_equal(virtq_free_slots(f->fx->vq), 8);
	fixed_free(f);
}

static void test_full_and_max_split(void **s)
{
	full_and_max(VIRTQ_SPLIT);
}

static void test_full_and_max_packed(void **s)
{
	full_and_max(VIRTQ_PACKED);
}

/* A driver bug stops a batch before the device could see it. */
static void driver_errors(enum virtq_layout l)
{
	struct fixed *f = fixed_new(l, 8);
	uint16_t ids[3] = { 1, 2, 1 }, bad_id[1] = { 9 };
	struct vbuf b = { f->data[1], 8 };

	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 3), 2);
	assert_int_equal(virtq_fixed_set(f->fx->vq, f->bufs, 1, &b), -EBUSY);
	assert_int_equal(virtq_fixed_set(f->fx->vq, f->bufs, 8, &b), -EINVAL);
	b.len = 0;
	assert_int_equal(virtq_fixed_set(f->fx->vq, f->bufs, 3, &b), -EINVAL);
	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, bad_id, 1), 0);
	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 1), 0);
	virtq_kick(f->fx->vq);
	assert_int_equal(ring_model_fetch_all(&f->fx->m), 2);
	held_is(f, 0, 1);
	held_is(f, 1, 2);
	fixed_free(f);
}

static void test_driver_errors_split(void **s)
{
	driver_errors(VIRTQ_SPLIT);
}

static void test_driver_errors_packed(void **s)
{
	driver_errors(VIRTQ_PACKED);
}

/*
 * The queue's owner alone adds (virtq_set_owner): from another CPU an
 * add does nothing and counts in stats.wrong_cpu.
 */
static void owner_only(enum virtq_layout l)
{
	static struct percpu owner, other;
	struct fixed *f = fixed_new(l, 4);
	uint16_t ids[2] = { 0, 1 };
	bool back[MAXQ] = { false };
	struct virtq_stats st;

	virtq_set_owner(f->fx->vq, &owner);
	virtq_test_cpu = &other;
	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 2), 0);
	assert_int_equal(virtq_free_slots(f->fx->vq), 4);
	virtq_test_cpu = &owner;
	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 2), 2);
	assert_int_equal(ring_model_fetch_all(&f->fx->m), 2);
	ring_model_complete(&f->fx->m, 0, 0);
	assert_int_equal(reclaim_all(f, back), 1);
	virtq_get_stats(f->fx->vq, &st);
	assert_int_equal(st.wrong_cpu, 1);
	assert_int_equal(st.added, 2);
	virtq_test_cpu = NULL;
	fixed_free(f);
}

static void test_owner_only_split(void **s)
{
	owner_only(VIRTQ_SPLIT);
}

static void test_owner_only_packed(void **s)
{
	owner_only(VIRTQ_PACKED);
}

/*
 * The device completes a buffer it holds (held[i]) under a bogus @id: the
 * buffer it stood for is lost to the driver (2.7.8 / 2.8.6: one used
 * element in its place).
 */
static void use_as(struct ring_model *m, unsigned int i, uint32_t id)
{
	ring_model_drop(m, i);
	ring_model_use_raw(m, id, 0, 1);
}

/*
 * A hostile device: completions naming an id out of range, an id never
 * added and an id no longer in flight, between good ones. Each is counted
 * and dropped; good ids come back once; the queue goes on.
 */
static void hostile(enum virtq_layout l)
{
	struct fixed *f = fixed_new(l, 8);
	uint16_t ids[4] = { 0, 1, 2, 3 }, again[2] = { 0, 4 }, more[2] = { 3, 5 };
	bool back[8] = { false };
	struct ring_model *m = &f->fx->m;

	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 4), 4);
	assert_int_equal(ring_model_fetch_all(m), 4);
	ring_model_use(m, 0, 0); /* id 0 */
	use_as(m, 0, 1000); /* id 1 lost */
	use_as(m, 0, 5); /* id 2 lost: 5 is in range, never added */
	ring_model_use(m, 0, 0); /* id 3 */
	ring_model_publish(m);
	assert_int_equal(reclaim_all(f, back), 2);
	assert_true(back[0] && back[3]);
	assert_int_equal(bad_count(f), 2);
	/* 3 again while it is not in flight: dropped, not handed back twice */
	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, again, 2), 2);
	assert_int_equal(ring_model_fetch_all(m), 2);
	use_as(m, 0, 3); /* id 0 lost */
	ring_model_use(m, 0, 0); /* id 4 */
	ring_model_publish(m);
	memset(back, 0, sizeof(back));
	assert_int_equal(reclaim_all(f, back), 1);
	assert_true(back[4]);
	assert_int_equal(bad_count(f), 3);
	/* the queue still works, 3 of 8 buffers lost */
	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, more, 2), 2);
	assert_int_equal(ring_model_fetch_all(m), 2);
	held_is(f, 0, 3);
	held_is(f, 1, 5);
	while (m->n_held)
		ring_model_use(m, 0, 0);
	ring_model_publish(m);
	memset(back, 0, sizeof(back));
	assert_int_equal(reclaim_all(f, back), 2);
	assert_true(back[3] && back[5]);
	assert_false(virtq_is_broken(f->fx->vq));
	assert_int_equal(virtq_free_slots(f->fx->vq), 8 - 3);
	fixed_free(f);
}

static void test_hostile_split(void **s)
{
	hostile(VIRTQ_SPLIT);
}

static void test_hostile_packed(void **s)
{
	hostile(VIRTQ_PACKED);
}

/* Half the ring lost to bogus ids: the queue is broken, add and reclaim stop. */
static void lost_half(enum virtq_layout l)
{
	struct fixed *f = fixed_new(l, 8);
	uint16_t ids[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, got[8];
	unsigned int bad;

	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 8), 8);
	assert_int_equal(ring_model_fetch_all(&f->fx->m), 8);
	for (int i = 0; i < 4; i++)
		ring_model_use_raw(&f->fx->m, 100 + i, 0, 1);
	ring_model_publish(&f->fx->m);
	assert_int_equal(virtq_fixed_reclaim(f->fx->vq, got, 8, &bad), 0);
	assert_int_equal(bad, 4);
	assert_true(virtq_is_broken(f->fx->vq));
	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 1), 0);
	assert_int_equal(virtq_fixed_reclaim(f->fx->vq, got, 8, NULL), 0);
	/* after the reset the driver frees what was posted: every token once */
	for (int i = 0; i < 8; i++)
		assert_non_null(virtq_detach_unused(f->fx->vq));
	assert_null(virtq_detach_unused(f->fx->vq));
	fixed_free(f);
}

static void test_lost_half_split(void **s)
{
	lost_half(VIRTQ_SPLIT);
}

static void test_lost_half_packed(void **s)
{
	lost_half(VIRTQ_PACKED);
}

/* Packed: an element with flags neither used nor available is skipped, counted. */
static void test_packed_garbled_flags(void **s)
{
	struct fixed *f = fixed_new(VIRTQ_PACKED, 8);
	uint16_t ids[2] = { 4, 5 }, got[8];
	unsigned int bad;
	struct ring_model *m = &f->fx->m;

	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 2), 2);
	assert_int_equal(ring_model_fetch_all(m), 2);
	/* slot 0: AVAIL without USED in wrap 1 is "available", the device's;
	 * USED without AVAIL is neither: garbled */
	m->pdesc[0].flags = VIRTQ_DESC_F_USED;
	m->used_pos = 1;
	ring_model_use(m, 1, 0); /* id 5 in slot 1 */
	ring_model_publish(m);
	assert_int_equal(virtq_fixed_reclaim(f->fx->vq, got, 8, &bad), 1);
	assert_int_equal(got[0], 5);
	assert_int_equal(bad, 1);
	assert_int_equal(bad_count(f), 1);
	ring_model_drop(m, 0);
	fixed_free(f);
}

/* Packed: a used element with another flag bit set is still a completion. */
static void test_packed_extra_flag_bits(void **s)
{
	struct fixed *f = fixed_new(VIRTQ_PACKED, 8);
	uint16_t ids[3] = { 6, 2, 4 }, got[8];
	unsigned int bad;
	struct ring_model *m = &f->fx->m;

	assert_int_equal(virtq_fixed_add(f->fx->vq, f->bufs, ids, 3), 3);
	assert_int_equal(ring_model_fetch_all(m), 3);
	ring_model_use(m, 0, 0);
	ring_model_use(m, 0, 0);
	m->pdesc[0].flags |= VIRTQ_DESC_F_WRITE;
	ring_model_use(m, 0, 0);
	ring_model_publish(m);
	assert_int_equal(virtq_fixed_reclaim(f->fx->vq, got, 8, &bad), 3);
	assert_int_equal(bad, 0);
	assert_int_equal(got[0], 6);
	assert_int_equal(got[1], 2);
	assert_int_equal(got[2], 4);
	assert_int_equal(bad_count(f), 0);
	fixed_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cycle_split),
		cmocka_unit_test(test_cycle_packed),
		cmocka_unit_test(test_full_and_max_split),
		cmocka_unit_test(test_full_and_max_packed),
		cmocka_unit_test(test_driver_errors_split),
		cmocka_unit_test(test_driver_errors_packed),
		cmocka_unit_test(test_owner_only_split),
		cmocka_unit_test(test_owner_only_packed),
		cmocka_unit_test(test_hostile_split),
		cmocka_unit_test(test_hostile_packed),
		cmocka_unit_test(test_lost_half_split),
		cmocka_unit_test(test_lost_half_packed),
		cmocka_unit_test(test_packed_garbled_flags),
		cmocka_unit_test(test_packed_extra_flag_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
