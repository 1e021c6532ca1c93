// SPDX-License-Identifier: MIT
/*
 * What only the split ring has (virtio 1.2, 2.7): 16-bit free-running
 * indices, used_event/avail_event, the NO_INTERRUPT/NO_NOTIFY flags, a
 * free list through desc.next, and a used->idx the device can move
 * anywhere. The layout-independent tests are in test_ring_common.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/virtqueue.h"
#include "ring_model.h"

static struct ring_fixture *new_split(uint16_t size, uint64_t features)
{
	struct ring_fixture *fx = ring_fixture_new(VIRTQ_SPLIT, size, features);

	assert_non_null(fx);
	return fx;
}

static uint64_t bad_count(struct ring_fixture *fx)
{
	struct virtq_stats st;

	virtq_get_stats(fx->vq, &st);
	return st.bad_completions;
}

/* @n one-byte device-writable buffers, data[i] its own token, all fetched. */
static void post_bytes(struct ring_fixture *fx, uint8_t *data, int n)
{
	for (int i = 0; i < n; i++) {
		struct vbuf in = { &data[i], 1 };

		assert_int_equal(virtq_add(fx->vq, NULL, 0, &in, 1, &data[i]), 0);
	}
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), n);
}

/* avail->idx and used->idx run free and wrap at 65536 (2.7.6, 2.7.8). */
static void test_index_wrap(void **state)
{
	struct ring_fixture *fx = new_split(128, 0);

	assert_int_equal(ring_fixture_cycle(fx, 65536 + 5), 65536 + 5);
	assert_int_equal(fx->m.avail->idx, 5);
	assert_int_equal(fx->m.used->idx, 5);
	assert_int_equal(fx->m.last_avail, 5);
	assert_int_equal(virtq_free_slots(fx->vq), 128);
	ring_fixture_free(fx);
}

/* 2.7.7.1: with EVENT_IDX flags stay 0 and used_event does the work. */
static void test_used_event_values(void **state)
{
	struct ring_fixture *fx = new_split(64, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
	uint16_t *used_event = virtq_used_event(fx->m.avail, 64);
	uint64_t irqs;

	assert_int_equal(ring_fixture_cycle(fx, 65530), 65530);
	assert_int_equal(*used_event, 65530);
	irqs = fx->m.interrupts;
	virtq_disable_cb(fx->vq);
	assert_int_equal(*used_event, 65529);
	assert_int_equal(fx->m.avail->flags, 0);
	/* Polling across the wrap: the event stays just behind us. */
	assert_int_equal(ring_fixture_cycle(fx, 20), 20);
	assert_int_equal(*used_event, (uint16_t)(65550 - 1));
	assert_int_equal(fx->m.interrupts, irqs);
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(*used_event, (uint16_t)65550);
	assert_int_equal(fx->m.avail->flags, 0);
	ring_fixture_free(fx);
}

/* Without EVENT_IDX: VIRTQ_AVAIL_F_NO_INTERRUPT (2.7.7). */
static void test_no_interrupt_flag(void **state)
{
	struct ring_fixture *fx = new_split(64, 0);

	virtq_disable_cb(fx->vq);
	assert_int_equal(fx->m.avail->flags, VIRTQ_AVAIL_F_NO_INTERRUPT);
	assert_int_equal(ring_fixture_cycle(fx, 100), 100);
	assert_int_equal(fx->m.interrupts, 0);
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(fx->m.avail->flags, 0);
	/* Two batches (64 + 36), one publish and one interrupt each. */
	assert_int_equal(ring_fixture_cycle(fx, 100), 100);
	assert_int_equal(fx->m.interrupts, 2);
	ring_fixture_free(fx);
}

/*
 * What the watchdog asks (virtq_notification_owed, 2.7.7.2): used
 * entries the driver has not taken, published where the device had to
 * notify. Each answer is checked against the device model's own
 * decision for the same publish.
 */
static void test_notification_owed_no_event_idx(void **state)
{
	struct ring_fixture *fx = new_split(8, 0);
	static uint8_t data[8];

	post_bytes(fx, data, 4);
	assert_false(virtq_notification_owed(fx->vq)); /* nothing used */
	/* interrupts on: any entry owes one */
	assert_true(virtq_enable_cb(fx->vq));
	assert_true(ring_model_complete(&fx->m, 0, 1));
	assert_true(virtq_notification_owed(fx->vq));
	assert_ptr_equal(virtq_get_used(fx->vq, NULL), &data[0]);
	assert_false(virtq_notification_owed(fx->vq)); /* taken */
	/* NO_INTERRUPT: none */
	virtq_disable_cb(fx->vq);
	assert_false(ring_model_complete(&fx->m, 0, 1));
	assert_false(virtq_notification_owed(fx->vq));
	assert_int_equal(fx->m.interrupts, 1);
	ring_fixture_free(fx);
}

static void test_notification_owed_event_idx(void **state)
{
	struct ring_fixture *fx = new_split(8, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
	uint16_t *used_event = virtq_used_event(fx->m.avail, 8);
	static uint8_t data[8];

	post_bytes(fx, data, 6);
	assert_false(virtq_notification_owed(fx->vq));
	/* used_event at last_used: the first entry written passes it */
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(*used_event, 0);
	assert_true(ring_model_complete(&fx->m, 0, 1));
	assert_true(virtq_notification_owed(fx->vq));
	assert_ptr_equal(virtq_get_used(fx->vq, NULL), &data[0]);
	/* suppressed: used_event stays just behind the driver, nothing passes it */
	virtq_disable_cb(fx->vq);
	assert_false(ring_model_complete(&fx->m, 0, 1));
	assert_false(ring_model_complete(&fx->m, 0, 1));
	assert_false(virtq_notification_owed(fx->vq));
	assert_ptr_equal(virtq_get_used(fx->vq, NULL), &data[1]);
	assert_ptr_equal(virtq_get_used(fx->vq, NULL), &data[2]);
	/* used_event ahead of what the device writes (a delayed callback): not yet */
	*used_event = 4;
	assert_false(ring_model_complete(&fx->m, 0, 1)); /* entry 3 */
	assert_false(virtq_notification_owed(fx->vq));
	assert_true(ring_model_complete(&fx->m, 0, 1)); /* entry 4: past it */
	assert_true(virtq_notification_owed(fx->vq));
	ring_fixture_free(fx);
}

/*
 * used->idx beyond what is in flight: counted once, nothing consumed,
 * has_used/enable_cb do not make a poll loop spin; when the device
 * writes a sane index again the queue carries on.
 */
static void test_used_idx_jump(void **state)
{
	struct ring_fixture *fx = new_split(64, 0);
	static uint8_t data[16];
	struct vbuf in[2] = { { data, 8 }, { data + 8, 8 } };
	uint16_t good;
	uint32_t len;
	int i;

	assert_int_equal(ring_fixture_cycle(fx, 65530), 65530);
	assert_int_equal(virtq_add(fx->vq, NULL, 0, &in[0], 1, data), 0);
	assert_int_equal(virtq_add(fx->vq, NULL, 0, &in[1], 1, data + 8), 0);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), 2);
	good = fx->m.used->idx;
	/* 3 ahead with 2 in flight, then far ahead, then backwards. */
	fx->m.used->idx = (uint16_t)(good + 3);
	for (i = 0; i < 5; i++)
		assert_null(virtq_get_used(fx->vq, &len));
	assert_false(virtq_has_used(fx->vq));
	assert_true(virtq_enable_cb(fx->vq));
	assert_int_equal(bad_count(fx), 1);
	fx->m.used->idx = (uint16_t)(good + 30000);
	assert_null(virtq_get_used(fx->vq, &len));
	fx->m.used->idx = (uint16_t)(good - 1);
	assert_null(virtq_get_used(fx->vq, &len));
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), 3);
	/* The device comes to its senses. */
	fx->m.used->idx = good;
	ring_model_complete(&fx->m, 1, 7);
	ring_model_complete(&fx->m, 0, 6);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 8);
	assert_int_equal(len, 7);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
	assert_int_equal(len, 6);
	assert_int_equal(virtq_free_slots(fx->vq), 64);
	assert_int_equal(ring_fixture_cycle(fx, 1000), 1000);
	assert_int_equal(bad_count(fx), 3);
	ring_fixture_free(fx);
}

/*
 * has_used takes a sane used->idx inline, but not the first one after a
 * bogus one: that goes through the check that forgets the bogus value,
 * so the same bogus value written again later is counted again.
 */
static void test_has_used_bogus_idx_again(void **state)
{
	struct ring_fixture *fx = new_split(16, 0);
	static uint8_t data[2];
	uint16_t good;
	uint32_t len;

	post_bytes(fx, data, 2);
	good = fx->m.used->idx;
	fx->m.used->idx = (uint16_t)(good + 5); /* 2 in flight */
	for (int i = 0; i < 3; i++)
		assert_false(virtq_has_used(fx->vq));
	assert_int_equal(bad_count(fx), 1);
	fx->m.used->idx = good;
	ring_model_complete(&fx->m, 0, 1);
	assert_true(virtq_has_used(fx->vq));
	assert_ptr_equal(virtq_get_used(fx->vq, &len), &data[0]);
	fx->m.used->idx = (uint16_t)(good + 5); /* 1 in flight */
	assert_false(virtq_has_used(fx->vq));
	assert_int_equal(bad_count(fx), 2);
	fx->m.used->idx = (uint16_t)(good + 1);
	ring_model_complete(&fx->m, 0, 1);
	assert_true(virtq_has_used(fx->vq));
	assert_ptr_equal(virtq_get_used(fx->vq, &len), &data[1]);
	assert_int_equal(ring_fixture_cycle(fx, 100), 100);
	assert_int_equal(bad_count(fx), 2);
	ring_fixture_free(fx);
}

/* A used id naming a descriptor inside a chain, not its head. */
static void test_used_id_not_head(void **state)
{
	struct ring_fixture *fx = new_split(16, 0);
	static uint8_t data[3];
	struct vbuf in[3] = { { data, 1 }, { data + 1, 1 }, { data + 2, 1 } };
	uint32_t len;

	assert_int_equal(virtq_add(fx->vq, NULL, 0, in, 3, data), 0);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), 1);
	assert_int_equal(fx->m.held[0].id, 0);
	ring_model_use_raw(&fx->m, 1, 1, 1); /* desc 1 is mid-chain */
	ring_model_publish(&fx->m);
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), 1);
	assert_int_equal(virtq_free_slots(fx->vq), 13);
	ring_fixture_free(fx);
}

/*
 * stats.completed is derived (added less in flight): a buffer whose
 * completion was garbled stays in flight and is not counted as completed,
 * nor is one the device has not used yet.
 */
static void test_completed_excludes_lost(void **state)
{
	struct ring_fixture *fx = new_split(16, VIRTIO_BIT(VIRTIO_F_EVENT_IDX));
	static uint8_t data[3];
	struct virtq_stats st;
	uint32_t len;

	post_bytes(fx, data, 3);
	ring_model_use(&fx->m, 0, 1);
	ring_model_use_raw(&fx->m, 9, 1, 1); /* no buffer 9: data[1] is lost */
	ring_model_publish(&fx->m);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), &data[0]);
	assert_null(virtq_get_used(fx->vq, &len));
	virtq_get_stats(fx->vq, &st);
	assert_int_equal(st.added, 3);
	assert_int_equal(st.completed, 1);
	assert_int_equal(st.bad_completions, 1);
	ring_model_use(&fx->m, 1, 1); /* data[2] (held[1] now) */
	ring_model_publish(&fx->m);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), &data[2]);
	virtq_get_stats(fx->vq, &st);
	assert_int_equal(st.completed, 2);
	ring_fixture_free(fx);
}

/*
 * The device scribbles over desc.next of free descriptors: the driver
 * follows its own copy of the free list, so nothing changes (2.7.5: the
 * table is device-readable, but nothing stops a device writing it).
 */
static void test_desc_table_scribble(void **state)
{
	struct ring_fixture *fx = new_split(32, 0);
	unsigned int i;

	assert_int_equal(ring_fixture_cycle(fx, 50), 50);
	for (i = 0; i < 32; i++) {
		fx->m.desc[i].next = 0xdead;
		fx->m.desc[i].flags = 0xffff;
	}
	assert_int_equal(ring_fixture_cycle(fx, 1000), 1000);
	assert_int_equal(fx->m.errors, 0);
	assert_int_equal(bad_count(fx), 0);
	ring_fixture_free(fx);
}

/* Free list after random out-of-order frees still holds every slot:
 * one chain of the whole ring fits and reads back in order. */
static void test_free_list_full_chain(void **state)
{
	struct ring_fixture *fx = new_split(64, 0);
	static uint8_t data[64];
	struct vbuf v[64];
	unsigned int i, n;
	uint32_t seed = 11, len;

	for (i = 0; i < 64; i++)
		v[i] = (struct vbuf){ data + i, 1 };
	for (n = 0; n < 200; n++) {
		while (virtq_add(fx->vq, v, 1 + n % 5, NULL, 0, data) == 0)
			;
		virtq_kick(fx->vq);
		ring_model_fetch_all(&fx->m);
		while (fx->m.n_held) {
			seed = seed * 1103515245u + 12345u;
			ring_model_complete(&fx->m, (seed >> 8) % fx->m.n_held, 0);
		}
		while (virtq_get_used(fx->vq, &len))
			;
		assert_int_equal(virtq_free_slots(fx->vq), 64);
	}
	assert_int_equal(virtq_add(fx->vq, v, 32, v + 32, 32, data), 0);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), 1);
	assert_int_equal(fx->m.held[0].nseg, 64);
	for (i = 0; i < 64; i++) {
		assert_ptr_equal(fx->m.held[0].seg[i].addr, data + i);
		assert_int_equal(fx->m.held[0].seg[i].write, i >= 32);
	}
	assert_int_equal(fx->m.errors, 0);
	ring_fixture_free(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_wrap),
		cmocka_unit_test(test_used_event_values),
		cmocka_unit_test(test_no_interrupt_flag),
		cmocka_unit_test(test_notification_owed_no_event_idx),
		cmocka_unit_test(test_notification_owed_event_idx),
		cmocka_unit_test(test_used_idx_jump),
		cmocka_unit_test(test_has_used_bogus_idx_again),
		cmocka_unit_test(test_used_id_not_head),
		cmocka_unit_test(test_completed_excludes_lost),
		cmocka_unit_test(test_desc_table_scribble),
		cmocka_unit_test(test_free_list_full_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
