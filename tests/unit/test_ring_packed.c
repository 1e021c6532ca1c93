// SPDX-License-Identifier: MIT
/*
 * What only the packed ring has (virtio 1.2, 2.8): wrap counters in the
 * descriptor flags, buffer ids apart from slots, the two event suppression
 * structures, and flags a device can get wrong. The layout-independent
 * tests are in test_ring_common.c.
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

#define AVAIL VIRTQ_DESC_F_AVAIL
#define USED VIRTQ_DESC_F_USED

static struct ring_fixture *new_packed(uint16_t size, uint64_t features)
{
	struct ring_fixture *fx = ring_fixture_new(VIRTQ_PACKED, size, features);

	assert_non_null(fx);
	return fx;
}

static uint64_t bad_count(struct ring_fixture *fx)
{
	struct virtq_stats st;

	virtq_get_stats(fx->vq, &st);
	return st.bad_completions;
}

static void add_in(struct ring_fixture *fx, uint8_t *buf, uint32_t len)
{
	struct vbuf in = { buf, len };

	assert_int_equal(virtq_add(fx->vq, NULL, 0, &in, 1, buf), 0);
}

/* 2.8.1: AVAIL/USED bits follow the driver's wrap counter, from 1. */
static void test_wrap_bits(void **state)
{
	struct ring_fixture *fx = new_packed(3, 0);
	static uint8_t data[4];
	int lap;

	for (lap = 0; lap < 4; lap++) {
		uint16_t want = lap % 2 == 0 ? AVAIL : USED;

		add_in(fx, data, 1);
		add_in(fx, data + 1, 1);
		add_in(fx, data + 2, 1);
		assert_int_equal(fx->m.pdesc[0].flags & (AVAIL | USED), want);
		assert_int_equal(fx->m.pdesc[2].flags & (AVAIL | USED), want);
		virtq_kick(fx->vq);
		assert_int_equal(ring_model_fetch_all(&fx->m), 3);
		while (fx->m.n_held)
			ring_model_complete(&fx->m, 0, 1);
		/* Used: both bits equal to the device's wrap counter. */
		assert_int_equal(fx->m.pdesc[1].flags & (AVAIL | USED),
				 lap % 2 == 0 ? AVAIL | USED : 0);
		assert_ptr_equal(virtq_get_used(fx->vq, NULL), data);
		assert_ptr_equal(virtq_get_used(fx->vq, NULL), data + 1);
		assert_ptr_equal(virtq_get_used(fx->vq, NULL), data + 2);
	}
	ring_fixture_free(fx);
}

/* A chain across the ring's end: the tail carries the flipped counter. */
static void test_chain_across_end(void **state)
{
	struct ring_fixture *fx = new_packed(5, 0);
	static uint8_t data[8];
	struct vbuf v[4] = { { data, 1 }, { data + 1, 1 }, { data + 2, 1 }, { data + 3, 1 } };
	uint32_t len;

	assert_int_equal(ring_fixture_cycle(fx, 3), 3);
	assert_int_equal(virtq_add(fx->vq, v, 1, v + 1, 3, data), 0);
	assert_int_equal(fx->m.pdesc[3].flags, AVAIL | VIRTQ_DESC_F_NEXT);
	assert_int_equal(fx->m.pdesc[4].flags, AVAIL | VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE);
	assert_int_equal(fx->m.pdesc[0].flags, USED | VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE);
	assert_int_equal(fx->m.pdesc[1].flags, USED | VIRTQ_DESC_F_WRITE);
	/* 2.8.6: the buffer id is in the last descriptor. */
	assert_int_equal(fx->m.pdesc[1].id, fx->m.pdesc[3].id);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), 1);
	assert_int_equal(fx->m.held[0].ndescs, 4);
	ring_model_complete(&fx->m, 0, 3);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
	assert_int_equal(len, 3);
	assert_int_equal(virtq_free_slots(fx->vq), 5);
	assert_int_equal(ring_fixture_cycle(fx, 100), 100);
	assert_int_equal(fx->m.errors, 0);
	ring_fixture_free(fx);
}

/* 2.8.10 / 2.8.14: the driver event suppression structure. */
static void test_driver_event_struct(void **state)
{
	struct ring_fixture *fx = new_packed(10, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
	struct virtq_packed_event *ev = fx->m.driver;

	assert_int_equal(ev->flags, RING_EVENT_FLAGS_DESC);
	assert_int_equal(ev->off_wrap, 1 << 15);
	assert_int_equal(ring_fixture_cycle(fx, 13), 13);
	/* Slot 3 of the second lap, whose wrap counter is 0. */
	assert_int_equal(ev->off_wrap, 3);
	virtq_disable_cb(fx->vq);
	assert_int_equal(ev->flags, RING_EVENT_FLAGS_DISABLE);
	assert_int_equal(ring_fixture_cycle(fx, 9), 9);
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(ev->flags, RING_EVENT_FLAGS_DESC);
	assert_int_equal(ev->off_wrap, 2 | 1 << 15);
	ring_fixture_free(fx);

	fx = new_packed(10, 0);
	ev = fx->m.driver;
	assert_int_equal(ev->flags, RING_EVENT_FLAGS_ENABLE);
	virtq_disable_cb(fx->vq);
	assert_int_equal(ev->flags, RING_EVENT_FLAGS_DISABLE);
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(ev->flags, RING_EVENT_FLAGS_ENABLE);
	ring_fixture_free(fx);
}

/*
 * What the watchdog asks (virtq_notification_owed, 2.8.10): a used
 * element the driver has not taken, written where the device had to
 * notify: flags ENABLE, or DESC with off_wrap naming that element (its
 * wrap counter included); DISABLE owes nothing. Each answer is checked
 * against the device model's own decision for the same element.
 */
static void post_in(struct ring_fixture *fx, uint8_t *buf, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		add_in(fx, buf + i, 1);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), n);
}

static void test_notification_owed(void **state)
{
	struct ring_fixture *fx = new_packed(8, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
	struct virtq_packed_event *ev = fx->m.driver;
	static uint8_t buf[8];

	post_in(fx, buf, 3);
	assert_false(virtq_notification_owed(fx->vq)); /* nothing used */
	/* DESC at the first element not taken: writing it owes one */
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(ev->flags, RING_EVENT_FLAGS_DESC);
	assert_true(ring_model_complete(&fx->m, 0, 1));
	assert_true(virtq_notification_owed(fx->vq));
	assert_ptr_equal(virtq_get_used(fx->vq, NULL), &buf[0]);
	assert_false(virtq_notification_owed(fx->vq));
	assert_int_equal(ev->off_wrap, 1 | 1 << 15); /* taking it moved the event on */
	/* DESC naming a later element: the one written now owes nothing */
	ev->off_wrap = 2 | 1 << 15;
	assert_false(ring_model_complete(&fx->m, 0, 1));
	assert_false(virtq_notification_owed(fx->vq));
	assert_ptr_equal(virtq_get_used(fx->vq, NULL), &buf[1]);
	/* DISABLE */
	virtq_disable_cb(fx->vq);
	assert_int_equal(ev->flags, RING_EVENT_FLAGS_DISABLE);
	assert_false(ring_model_complete(&fx->m, 0, 1));
	assert_false(virtq_notification_owed(fx->vq));
	assert_ptr_equal(virtq_get_used(fx->vq, NULL), &buf[2]);
	/* a lap on, the wrap counter 0: DESC names (5, 0) and writing it owes */
	assert_int_equal(ring_fixture_cycle(fx, 10), 10);
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(ev->off_wrap, 5);
	post_in(fx, buf, 1);
	assert_true(ring_model_complete(&fx->m, 0, 1));
	assert_true(virtq_notification_owed(fx->vq));
	ring_fixture_free(fx);

	/* without EVENT_IDX: ENABLE owes for any element, DISABLE for none */
	fx = new_packed(8, 0);
	ev = fx->m.driver;
	post_in(fx, buf, 2);
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(ev->flags, RING_EVENT_FLAGS_ENABLE);
	assert_true(ring_model_complete(&fx->m, 0, 1));
	assert_true(ring_model_complete(&fx->m, 0, 1));
	assert_true(virtq_notification_owed(fx->vq));
	assert_ptr_equal(virtq_get_used(fx->vq, NULL), &buf[0]);
	assert_ptr_equal(virtq_get_used(fx->vq, NULL), &buf[1]);
	assert_false(virtq_notification_owed(fx->vq));
	virtq_disable_cb(fx->vq);
	assert_int_equal(ev->flags, RING_EVENT_FLAGS_DISABLE);
	post_in(fx, buf, 1);
	assert_false(ring_model_complete(&fx->m, 0, 1));
	assert_false(virtq_notification_owed(fx->vq));
	ring_fixture_free(fx);
}

/* Device event flags: DESC without EVENT_IDX, or the reserved value 3,
 * cannot be trusted to mean "no kick": kick. */
static void test_device_event_odd_flags(void **state)
{
	struct ring_fixture *fx = new_packed(10, 0);
	static uint8_t data[2];

	fx->m.device->flags = RING_EVENT_FLAGS_DESC;
	fx->m.device->off_wrap = 7;
	add_in(fx, data, 1);
	assert_true(virtq_kick_prepare(fx->vq));
	fx->m.device->flags = 3;
	add_in(fx, data + 1, 1);
	assert_true(virtq_kick_prepare(fx->vq));
	fx->m.device->flags = RING_EVENT_FLAGS_DISABLE;
	add_in(fx, data, 1);
	assert_false(virtq_kick_prepare(fx->vq));
	ring_fixture_free(fx);
}

/* More than a lap added without a kick check: kick, positions ambiguous. */
static void test_kick_after_full_lap(void **state)
{
	struct ring_fixture *fx = new_packed(4, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
	static uint8_t data[4];
	int i;

	ring_model_set_kick_mode(&fx->m, MODEL_KICK_EVENT);
	ring_model_set_avail_event(&fx->m, 3, false); /* far away */
	for (i = 0; i < 4; i++)
		add_in(fx, data + i, 1);
	assert_true(virtq_kick_prepare(fx->vq));
	ring_fixture_free(fx);
}

/*
 * Flags that are neither "available" nor "used" at the slot the driver
 * expects the next used element in: counted, skipped, never followed.
 */
static void test_inconsistent_flags(void **state)
{
	struct ring_fixture *fx = new_packed(8, 0);
	static uint8_t data[3];
	uint32_t len;

	add_in(fx, data, 1);
	add_in(fx, data + 1, 1);
	add_in(fx, data + 2, 1);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), 3);
	/* Slot 0: AVAIL flipped, USED set: a device that lost its counter. */
	fx->m.pdesc[0].flags = USED;
	ring_model_drop(&fx->m, 0);
	fx->m.used_pos = 1;
	/* Slot 1: both bits, but for the other lap. */
	fx->m.pdesc[1].flags = 0;
	ring_model_drop(&fx->m, 0);
	fx->m.used_pos = 2;
	assert_true(virtq_has_used(fx->vq));
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), 2);
	ring_model_complete(&fx->m, 0, 1);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 2);
	assert_int_equal(len, 1);
	assert_int_equal(virtq_free_slots(fx->vq), 6);
	assert_int_equal(ring_fixture_cycle(fx, 100), 100);
	assert_int_equal(bad_count(fx), 2);
	ring_fixture_free(fx);
}

/* A used element where nothing is in flight: counted once, slot reset. */
static void test_used_when_idle(void **state)
{
	struct ring_fixture *fx = new_packed(8, 0);
	uint32_t len;

	assert_int_equal(ring_fixture_cycle(fx, 10), 10);
	ring_model_use_raw(&fx->m, 0, 1, 1);
	ring_model_publish(&fx->m);
	fx->m.used_pos--; /* the model takes back its stray write */
	assert_true(virtq_has_used(fx->vq));
	assert_null(virtq_get_used(fx->vq, &len));
	assert_null(virtq_get_used(fx->vq, &len));
	assert_false(virtq_has_used(fx->vq));
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(bad_count(fx), 1);
	assert_int_equal(ring_fixture_cycle(fx, 100), 100);
	assert_int_equal(bad_count(fx), 1);
	ring_fixture_free(fx);
}

/* Buffer ids are reused independently of slots, in any order. */
static void test_ids_out_of_order(void **state)
{
	struct ring_fixture *fx = new_packed(6, 0);
	static uint8_t data[6];
	uint16_t ids[6];
	uint32_t len;
	int i, round;

	for (round = 0; round < 50; round++) {
		for (i = 0; i < 6; i++)
			add_in(fx, data + i, 1);
		virtq_kick(fx->vq);
		assert_int_equal(ring_model_fetch_all(&fx->m), 6);
		for (i = 0; i < 6; i++)
			ids[i] = fx->m.held[i].id;
		for (i = 0; i < 6; i++)
			assert_true(ids[i] < 6);
		/* complete 5, 3, 1, 4, 2, 0 (by fetch position) */
		ring_model_use(&fx->m, 5, 0);
		ring_model_use(&fx->m, 3, 0);
		ring_model_use(&fx->m, 1, 0);
		ring_model_use(&fx->m, 2, 0);
		ring_model_use(&fx->m, 1, 0);
		ring_model_use(&fx->m, 0, 0);
		ring_model_publish(&fx->m);
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 5);
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 3);
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 1);
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 4);
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 2);
		assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 0);
		assert_null(virtq_get_used(fx->vq, &len));
	}
	assert_int_equal(fx->m.errors, 0);
	ring_fixture_free(fx);
}

/* Buffer @i of @n: a chain of @slots device-writable descriptors. */
static void add_chain(struct ring_fixture *fx, uint8_t *buf, unsigned int slots)
{
	struct vbuf in[4];

	for (unsigned int k = 0; k < slots; k++) {
		in[k].addr = buf + k;
		in[k].len = 1;
	}
	assert_int_equal(virtq_add(fx->vq, NULL, 0, in, slots, buf), 0);
}

static uint64_t broken_count(struct ring_fixture *fx)
{
	struct virtq_stats st;

	virtq_get_stats(fx->vq, &st);
	return st.broken;
}

/*
 * A garbled element (id 99, or flags for the wrong lap) for one of several
 * multi-slot chains, with indirect off. The driver cannot know how many
 * slots the garbled element covers: skipping one slot would land on the
 * chain's second descriptor, still marked available, and wait there for
 * ever (the bug). Every chain before the garbled one comes back; then the
 * queue reports itself broken (counted once), hands nothing more back and
 * refuses new buffers, instead of stalling silently. Every position of
 * the garbled chain, chains of 2..4 slots, both kinds of garbling, and
 * chains that wrap the ring.
 */
static void garbled_multi_slot(unsigned int slots, unsigned int bad, bool bad_flags,
			       unsigned int warmup, uint64_t features)
{
	struct ring_fixture *fx = new_packed(16, VIRTIO_F_INDIRECT_DESC | features);
	static uint8_t data[4][4];
	const unsigned int n = 4;
	uint32_t len;
	uint8_t *tok;

	virtq_set_indirect_min(fx->vq, 0);
	assert_int_equal(ring_fixture_cycle(fx, warmup), warmup);
	for (unsigned int i = 0; i < n; i++)
		add_chain(fx, data[i], slots);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), n);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(fx->m.held[0].ndescs, slots);
		if (i != bad) {
			ring_model_use(&fx->m, 0, 1);
			continue;
		}
		if (bad_flags) {
			/* "used" for the other lap: neither available nor used */
			unsigned int pos = fx->m.used_pos;
			bool wrap = fx->m.used_wrap;

			ring_model_use(&fx->m, 0, 1);
			fx->m.pdesc[pos].flags = wrap ? 0 : AVAIL | USED;
		} else {
			ring_model_use_raw(&fx->m, 99, 1, (uint16_t)slots);
			ring_model_drop(&fx->m, 0);
		}
	}
	ring_model_publish(&fx->m);
	for (unsigned int i = 0; i < bad; i++) {
		tok = virtq_get_used(fx->vq, &len);
		assert_ptr_equal(tok, data[i]);
		assert_false(virtq_is_broken(fx->vq));
	}
	/* Before the fix: NULL here for ever, the queue not broken. */
	assert_null(virtq_get_used(fx->vq, &len));
	assert_true(virtq_is_broken(fx->vq));
	assert_int_equal(broken_count(fx), 1);
	assert_null(virtq_get_used(fx->vq, &len));
	assert_false(virtq_has_used(fx->vq));
	{
		struct vbuf in = { data[0], 1 };

		assert_int_equal(virtq_add(fx->vq, NULL, 0, &in, 1, data[0]), -EIO);
	}
	assert_int_equal(broken_count(fx), 1);
	assert_int_equal(fx->m.errors, 0);
	ring_fixture_free(fx);
}

static void test_garbled_multi_slot_chain(void **state)
{
	for (unsigned int slots = 2; slots <= 4; slots++)
		for (unsigned int bad = 0; bad < 4; bad++)
			for (unsigned int warmup = 0; warmup < 16; warmup += 5) {
				garbled_multi_slot(slots, bad, false, warmup, 0);
				garbled_multi_slot(slots, bad, true, warmup, 0);
			}
}

/* The repro: A (2 slots) completed with id 99, then B correctly. */
static void test_garbled_id_then_good(void **state)
{
	struct ring_fixture *fx = new_packed(8, 0);
	static uint8_t a[2], b[2];
	uint32_t len;

	add_chain(fx, a, 2);
	add_chain(fx, b, 2);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), 2);
	ring_model_use_raw(&fx->m, 99, 1, 2);
	ring_model_drop(&fx->m, 0);
	ring_model_complete(&fx->m, 0, 2);
	assert_true(virtq_has_used(fx->vq));
	assert_null(virtq_get_used(fx->vq, &len));
	assert_true(virtq_is_broken(fx->vq));
	assert_false(virtq_has_used(fx->vq));
	ring_fixture_free(fx);
}

/* One-slot buffers only: a garbled element is skipped, no break. */
static void test_garbled_single_slot_resyncs(void **state)
{
	struct ring_fixture *fx = new_packed(8, 0);
	static uint8_t data[3];
	uint32_t len;

	add_in(fx, data, 1);
	add_in(fx, data + 1, 1);
	add_in(fx, data + 2, 1);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), 3);
	ring_model_use_raw(&fx->m, 99, 1, 1);
	ring_model_drop(&fx->m, 0);
	ring_model_complete(&fx->m, 0, 1);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 1);
	assert_false(virtq_is_broken(fx->vq));
	assert_int_equal(broken_count(fx), 0);
	assert_int_equal(bad_count(fx), 1);
	ring_model_complete(&fx->m, 0, 1);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 2);
	assert_int_equal(ring_fixture_cycle(fx, 50), 50);
	ring_fixture_free(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrap_bits),
		cmocka_unit_test(test_chain_across_end),
		cmocka_unit_test(test_driver_event_struct),
		cmocka_unit_test(test_notification_owed),
		cmocka_unit_test(test_device_event_odd_flags),
		cmocka_unit_test(test_kick_after_full_lap),
		cmocka_unit_test(test_inconsistent_flags),
		cmocka_unit_test(test_used_when_idle),
		cmocka_unit_test(test_ids_out_of_order),
		cmocka_unit_test(test_garbled_multi_slot_chain),
		cmocka_unit_test(test_garbled_id_then_good),
		cmocka_unit_test(test_garbled_single_slot_resyncs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
