// SPDX-License-Identifier: MIT
/*
 * Used elements that name a buffer the driver still has a token for but
 * that the device can no longer be holding, refused (counted, skipped, the
 * buffer not handed out): packed (virtio 1.2, 2.8), a chain longer than
 * the slots still pending; IN_ORDER (2.7.9), a buffer already leaked out of
 * the in-order list by an earlier garbled batch.
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
	/* slot 0: broken flags (AVAIL clear, USED set): skipped, 2 slots left */
	fx->m.pdesc[0].flags = USED;
	/* slot 1: "used" with the id of the 3-slot chain */
	fx->m.pdesc[1].id = id;
	fx->m.pdesc[1].len = 3;
	fx->m.pdesc[1].flags = AVAIL | USED;
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), 2);
	ring_fixture_free(fx);
}

static void test_in_order_id_leaked_earlier(void **state)
{
	struct ring_fixture *fx = ring_fixture_new(VIRTQ_SPLIT, 8, VIRTIO_F_IN_ORDER);
	static uint8_t data[3];
	uint16_t first;
	uint32_t len;

	assert_non_null(fx);
	for (int i = 0; i < 3; i++) {
		struct vbuf in = { data + i, 1 };

		assert_int_equal(virtq_add(fx->vq, NULL, 0, &in, 1, data + i), 0);
	}
	virtq_kick(fx->vq);
	assert_int_equal(ring_model_fetch_all(&fx->m), 3);
	first = fx->m.held[0].id;
	/* a batch of three whose used idx moved by one: the oldest two leak */
	ring_model_use_raw(&fx->m, fx->m.held[2].id, 1, 1);
	ring_model_publish(&fx->m);
	assert_ptr_equal(virtq_get_used(fx->vq, &len), data + 2);
	assert_int_equal(bad_count(fx), 1);
	/* the first, leaked buffer named again: not in the in-order list */
	ring_model_use_raw(&fx->m, first, 1, 1);
	ring_model_publish(&fx->m);
	assert_null(virtq_get_used(fx->vq, &len));
	assert_int_equal(bad_count(fx), 2);
	ring_fixture_free(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_used_chain_longer_than_pending),
		cmocka_unit_test(test_in_order_id_leaked_earlier),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
