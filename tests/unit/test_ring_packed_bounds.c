// SPDX-License-Identifier: MIT
/*
 * Used elements that name a buffer the driver still has a token for but
 * that the device can no longer be holding, refused (counted, skipped, the
 * buffer not handed out): packed (virtio 1.2, 2.8), a chain longer than
 * the slots still pending, with a multi-slot chain in flight (the queue
 * breaks) and with one-slot buffers only (skipped, counted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/virtio/virtqueue.h"
#include "ring_model.h"

#define AVAIL VIRTQ_DESC_F_AVAIL
#define USED VIRTQ_DESC_F_USED

static uint64_t bad_count(struct ring_fixture *fx)
{
	struct virtq_stats st;

	virtq_get_stats(fx->vq, &st);
	return st.bad_completions;
}

static uint64_t broken_count(struct ring_fixture *fx)
{
	struct virtq_stats st;

	virtq_get_stats(fx->vq, &st);
	return st.broken;
}

static void test_used_chain_longer_than_pending(void **state)
{
	struct ring_fixture *fx = ring_fixture_new(VIRTQ_PACKED, 8, 0);
	static uint8_t data[3];
	struct vbuf in[3] = { { data, 1 }, { data + 1, 1 }, { data + 2, 1 } };
	uint16_t id;
	uint32_t len;

	assert_non_null(fx);
	assert_int_equal(virtq_add(fx->vq, NULL, 0, in, 3, data), 0);
	virtq_kick(fx->vq);
	id = fx->m.pdesc[0].id;
	/*
	 * slot 0: broken flags (AVAIL clear, USED set). Skipping one slot would
	 * leave the chain's own second slot looking available, so with a
	 * multi-slot chain in flight the queue is marked broken instead.
	 */
	fx->m.pdesc[0].flags = USED;
	/* slot 1: "used" with the id of the 3-slot chain: never handed out */
	fx->m.pdesc[1].id = id;
	fx->m.pdesc[1].len = 3;
	fx->m.pdesc[1].flags = AVAIL | USED;
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), 1);
	assert_true(virtq_is_broken(fx->vq));
	assert_null(virtq_get_used(fx->vq, &len));
	/*
	 * Broken stays quiet until the device is reset: even a well-formed
	 * completion of the chain is not handed out, and breaking it again
	 * counts nothing more.
	 */
	fx->m.pdesc[0].id = id;
	fx->m.pdesc[0].len = 3;
	fx->m.pdesc[0].flags = AVAIL | USED;
	assert_false(virtq_has_used(fx->vq));
	assert_null(virtq_get_used(fx->vq, &len));
	virtq_mark_broken(fx->vq);
	assert_int_equal(bad_count(fx), 1);
	assert_int_equal(broken_count(fx), 1);
	ring_fixture_free(fx);
}

/*
 * A garbled slot skipped while only one-slot buffers were in flight leaves
 * their buffer live with no slot pending for it. If the device later names
 * that buffer, it uses up a slot of the chain added since: that chain then
 * claims more slots than are pending. Refused (the queue breaks, a
 * multi-slot chain is in flight), never handed out: trusting it would
 * take pending below zero.
 */
static void test_used_chain_beyond_pending_after_skip(void **state)
{
	struct ring_fixture *fx = ring_fixture_new(VIRTQ_PACKED, 8, 0);
	static uint8_t a, data[3];
	struct vbuf in_a = { &a, 1 };
	struct vbuf in[3] = { { data, 1 }, { data + 1, 1 }, { data + 2, 1 } };
	uint16_t id_a, id_c;
	uint32_t len;

	assert_non_null(fx);
	assert_int_equal(virtq_add(fx->vq, NULL, 0, &in_a, 1, &a), 0);
	virtq_kick(fx->vq);
	id_a = fx->m.pdesc[0].id;
	fx->m.pdesc[0].flags = USED; /* garbled: skipped, A stays live */
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), 1);
	assert_false(virtq_is_broken(fx->vq));
	assert_int_equal(virtq_add(fx->vq, NULL, 0, in, 3, data), 0); /* slots 1..3 */
	id_c = fx->m.pdesc[3].id;
	assert_int_not_equal(id_a, id_c);
	fx->m.pdesc[1].id = id_a;
	fx->m.pdesc[1].len = 1;
	fx->m.pdesc[1].flags = AVAIL | USED;
	fx->m.pdesc[2].id = id_c; /* three slots claimed, two pending */
	fx->m.pdesc[2].len = 3;
	fx->m.pdesc[2].flags = AVAIL | USED;
	assert_ptr_equal(virtq_get_used(fx->vq, &len), &a);
	assert_null(virtq_get_used(fx->vq, &len));
	assert_true(virtq_is_broken(fx->vq));
	assert_int_equal(bad_count(fx), 2);
	ring_fixture_free(fx);
}

/*
 * The broken-queue rule holds only while a multi-slot chain is in flight:
 * once it completed, a garbled slot among one-slot buffers is skipped and
 * counted again, the queue keeps running.
 */
static void test_garble_after_multi_slot_chain_completed(void **state)
{
	struct ring_fixture *fx = ring_fixture_new(VIRTQ_PACKED, 8, 0);
	static uint8_t data[3], x;
	struct vbuf in[3] = { { data, 1 }, { data + 1, 1 }, { data + 2, 1 } };
	struct vbuf in_x = { &x, 1 };
	uint32_t len;

	assert_non_null(fx);
	assert_int_equal(virtq_add(fx->vq, NULL, 0, in, 3, data), 0);
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch(&fx->m), 1);
	ring_model_complete(&fx->m, 0, 3);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data);
	assert_int_equal(virtq_add(fx->vq, NULL, 0, &in_x, 1, &x), 0);
	fx->m.pdesc[3].flags = USED; /* garbled, one-slot buffers only now */
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), 1);
	assert_false(virtq_is_broken(fx->vq));
	assert_int_equal(virtq_add(fx->vq, NULL, 0, &in_x, 1, &x), 0);
	ring_fixture_free(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_used_chain_longer_than_pending),
		cmocka_unit_test(test_used_chain_beyond_pending_after_skip),
		cmocka_unit_test(test_garble_after_multi_slot_chain_completed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
