// SPDX-License-Identifier: MIT
/*
 * drivers/virtio/virtio_rng.c on the host, both ring layouts, against the
 * device-side ring model: one request in flight at a time, the bytes the
 * device wrote come back, short reads counted, bounds on the request, and
 * a device without the driver (-ENODEV). The PCI transport is stubbed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtio_rng.h"
#include "kernel/poll.h"
#include "ring_model.h"

#define QSIZE 8

void virtio_rng_init(void);

static const struct virtio_driver *drv;
static const struct poller *rng_poller;
static struct virtq *queue;
static struct ring_model model;
static enum virtq_layout layout;
static bool setup_fails;

void virtio_register_driver(const struct virtio_driver *d)
{
	drv = d;
}

int poll_register(const struct poller *p)
{
	rng_poller = p;
	return 0;
}

uint32_t poll_bit(const struct poller *p)
{
	return p == rng_poller ? 4 : 0;
}

static int asked = -1; /* the driver's last poll_ask_pending(4, on): -1 none */

void poll_ask_pending(uint32_t bits, bool on)
{
	assert_int_equal(bits, 4);
	asked = on;
}

static void notify(struct virtq *vq)
{
}

/* Its interrupt raises the rng poller's bit. */
struct virtq *virtio_setup_queue_raise(struct virtio_device *vdev, uint16_t index,
				       uint16_t max_size, uint32_t raise)
{
	assert_int_equal(raise, 4);
	if (setup_fails)
		return NULL;
	queue = virtq_create(layout, index, QSIZE, vdev->features, notify, &vdev->queues[index]);
	vdev->queues[index].vq = queue;
	vdev->queues[index].raise = raise;
	ring_model_init(&model, queue);
	return queue;
}

static struct virtio_device vdev;

static void start(enum virtq_layout l)
{
	layout = l;
	memset(&vdev, 0, sizeof(vdev));
	vdev.features = VIRTIO_BIT(VIRTIO_F_VERSION_1) |
			(l == VIRTQ_PACKED ? VIRTIO_BIT(VIRTIO_F_RING_PACKED) : 0);
	if (!drv)
		virtio_rng_init();
	assert_int_equal(drv->probe(&vdev), 0);
	assert_true(virtio_rng_present());
}

static void stop(void)
{
	drv->remove(&vdev);
	assert_null(vdev.priv);
	assert_false(virtio_rng_present());
	assert_int_equal(model.errors, 0);
	ring_model_destroy(&model);
	virtq_destroy(queue);
}

/* The device fills the request with @n bytes of a pattern. */
static void device_fill(uint32_t n)
{
	uint8_t pattern[VIRTIO_RNG_MAX_READ];

	for (uint32_t i = 0; i < n; i++)
		pattern[i] = (uint8_t)(i * 31 + 7);
	assert_int_equal(ring_model_fetch(&model), 1);
	assert_int_equal(model_buf_write(&model.held[0], pattern, n), n);
	ring_model_complete(&model, 0, n);
}

static void read_and_short_read(enum virtq_layout l)
{
	const uint8_t *data = NULL;
	uint32_t got = 0;

	start(l);
	assert_int_equal(virtio_rng_collect(&data, &got), 0); /* nothing asked */
	assert_int_equal(asked, 0); /* idle: the check before a halt skips the hook */
	assert_int_equal(virtio_rng_request(0), -EINVAL);
	assert_int_equal(virtio_rng_request(VIRTIO_RNG_MAX_READ + 1), -EINVAL);
	assert_int_equal(asked, 0);
	assert_int_equal(virtio_rng_request(64), 0);
	assert_int_equal(asked, 1);
	assert_int_equal(virtio_rng_request(64), -EBUSY); /* one in flight */
	assert_false(rng_poller->pending());
	assert_int_equal(virtio_rng_collect(&data, &got), 0);
	assert_int_equal(asked, 1);
	device_fill(64);
	assert_true(rng_poller->pending());
	assert_int_equal(virtio_rng_collect(&data, &got), 1);
	assert_int_equal(asked, 0);
	assert_int_equal(got, 64);
	for (uint32_t i = 0; i < 64; i++)
		assert_int_equal(data[i], (uint8_t)(i * 31 + 7));
	/* a short read is still delivered, and the next request may go */
	assert_int_equal(virtio_rng_request(VIRTIO_RNG_MAX_READ), 0);
	device_fill(10);
	assert_int_equal(virtio_rng_collect(&data, &got), 1);
	assert_int_equal(got, 10);
	drv->show(&vdev);
	/* removed with a request out: nothing is left to ask */
	assert_int_equal(virtio_rng_request(16), 0);
	assert_int_equal(asked, 1);
	stop();
	assert_int_equal(asked, 0);
}

static void test_read_split(void **s)
{
	read_and_short_read(VIRTQ_SPLIT);
}

static void test_read_packed(void **s)
{
	read_and_short_read(VIRTQ_PACKED);
}

static void test_no_device(void **s)
{
	const uint8_t *data;
	uint32_t got;

	if (!drv)
		virtio_rng_init();
	assert_false(virtio_rng_present());
	assert_false(rng_poller->pending());
	assert_int_equal(virtio_rng_request(16), -ENODEV);
	assert_int_equal(virtio_rng_collect(&data, &got), -ENODEV);
	setup_fails = true;
	assert_int_not_equal(drv->probe(&vdev), 0);
	setup_fails = false;
	assert_false(virtio_rng_present());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_split),
		cmocka_unit_test(test_read_packed),
		cmocka_unit_test(test_no_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
