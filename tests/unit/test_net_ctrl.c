// SPDX-License-Identifier: MIT
/*
 * virtio-net's control commands (virtio 1.2, 5.1.6.5): VQ_PAIRS_SET's
 * bytes exactly as 5.1.6.5.5 lays them out, its bounds, and every ack a
 * hostile device may give read as OK, an error, or garbage.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/virtio/virtio_net_ctrl.h"

static void test_mq_encode(void **state)
{
	uint8_t out[VIRTIO_NET_CTRL_MQ_LEN];
	const uint8_t two[] = { 4, 0, 2, 0 }, max[] = { 4, 0, 0x00, 0x80 },
		      odd[] = { 4, 0, 0x34, 0x12 };

	(void)state;
	assert_int_equal(virtio_net_ctrl_mq_encode(out, 2), VIRTIO_NET_CTRL_MQ_LEN);
	assert_memory_equal(out, two, sizeof(two));
	assert_int_equal(virtio_net_ctrl_mq_encode(out, 0x8000), VIRTIO_NET_CTRL_MQ_LEN);
	assert_memory_equal(out, max, sizeof(max));
	/* le16: low byte first */
	assert_int_equal(virtio_net_ctrl_mq_encode(out, 0x1234), VIRTIO_NET_CTRL_MQ_LEN);
	assert_memory_equal(out, odd, sizeof(odd));
}

static void test_mq_encode_bounds(void **state)
{
	uint8_t out[VIRTIO_NET_CTRL_MQ_LEN] = { 0xaa, 0xaa, 0xaa, 0xaa };
	const uint8_t untouched[] = { 0xaa, 0xaa, 0xaa, 0xaa };

	(void)state;
	assert_int_equal(virtio_net_ctrl_mq_encode(out, 0), -EINVAL);
	assert_int_equal(virtio_net_ctrl_mq_encode(out, 0x8001), -EINVAL);
	assert_int_equal(virtio_net_ctrl_mq_encode(out, 0x10002), -EINVAL);
	assert_memory_equal(out, untouched, sizeof(untouched));
	assert_int_equal(virtio_net_ctrl_mq_encode(out, 1), VIRTIO_NET_CTRL_MQ_LEN);
}

static void test_ack(void **state)
{
	(void)state;
	assert_int_equal(virtio_net_ctrl_ack(1, VIRTIO_NET_OK), 0);
	assert_int_equal(virtio_net_ctrl_ack(1, VIRTIO_NET_ERR), -EIO);
	/* the device wrote nothing: the byte is ours, whatever it reads */
	assert_int_equal(virtio_net_ctrl_ack(0, VIRTIO_NET_OK), -EPROTO);
	assert_int_equal(virtio_net_ctrl_ack(0, 0xff), -EPROTO);
	/* undefined values */
	assert_int_equal(virtio_net_ctrl_ack(1, 2), -EPROTO);
	assert_int_equal(virtio_net_ctrl_ack(1, 0xff), -EPROTO);
	/* a longer write still carries the ack first (the ring bounds it) */
	assert_int_equal(virtio_net_ctrl_ack(5, VIRTIO_NET_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mq_encode),
		cmocka_unit_test(test_mq_encode_bounds),
		cmocka_unit_test(test_ack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
