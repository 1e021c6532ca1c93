// SPDX-License-Identifier: MIT
/*
 * Packed ring (virtio 1.2, 2.8): a used element whose buffer id is in
 * flight but whose chain has more descriptors than the device still holds
 * (slots were lost to broken flags before it) is refused: counted,
 * skipped, and the buffer is not handed out.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_used_chain_longer_than_pending),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
