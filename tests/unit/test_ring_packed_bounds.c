// SPDX-License-Identifier: MIT
/*
 * Used elements that name a buffer the driver still has a token for but
 * that the device can no longer be holding, refused (counted, skipped, the
 * buffer not handed out): packed (virtio 1.2, 2.8), a chain longer than
 * the slots still pending.
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
	ring_fixture_free(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_used_chain_longer_than_pending),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
