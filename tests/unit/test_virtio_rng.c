// SPDX-License-Identifier: MIT
/*
 * drivers/virtio/virtio_rng.c on the host, both ring layouts, against the
 * device-side ring model: one request in flight at a time, the bytes the
 * device wrote come back, short reads counted, bounds on the request, and
 * a device without the driver (-ENODEV). Its poll context in the real
 * loop: a request on a polled queue keeps it looking (each pass with
 * idle=poll, by a timer with idle=halt), a completion is work for the
 * waiting command's pass, and with an interrupt the watchdog's check
 * tells a notification the device owed from nothing to do. The PCI
 * transport is fake_virtio_pci.c.
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
#include "fake_virtio_pci.h"
#include "kernel/poll.h"
#include "ring_model.h"
#include "stub_kernel.h"

#define QSIZE 8

void virtio_rng_init(void);

static struct ring_model *const model = &fake_pci_models[0];

static struct virtio_device vdev;

/* The driver's context, added at init: the one named so in this CPU's loop. */
static struct poll_ctx *rng_ctx(void)
{
	for (uint32_t b = poll_ctx_bits(); b; b &= b - 1)
		if (!strcmp(poll_ctx_at(b & -b)->name, "virtio-rng"))
			return poll_ctx_at(b & -b);
	fail_msg("virtio-rng has no poll context");
	return NULL;
}

/* What the watchdog's look at the driver's context finds (count: its second look). */
static enum poll_verdict rng_check(bool count)
{
	const char *what = NULL;
	enum poll_verdict v = rng_ctx()->check(rng_ctx(), count, &what);

	if (v != POLL_IDLE)
		assert_string_equal(what, "virtio-rng");
	return v;
}

static void start(enum virtq_layout l, int vector)
{
	fake_pci_reset();
	fake_pci_layout = l;
	fake_pci_qsize = QSIZE;
	fake_pci_vector = vector;
	memset(&vdev, 0, sizeof(vdev));
	vdev.num_queues = 1;
	vdev.features = VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) |
			(l == VIRTQ_PACKED ? VIRTIO_BIT(VIRTIO_F_RING_PACKED) : 0);
	if (!fake_pci_driver)
		virtio_rng_init();
	assert_int_equal(fake_pci_driver->probe(&vdev), 0);
	assert_true(virtio_rng_present());
	/* its interrupt, if any, schedules the driver's context */
	assert_ptr_equal(vdev.queues[0].ctx, rng_ctx());
	assert_int_equal(vdev.queues[0].vector, vector);
	stub_unschedule_all();
}

static void stop(void)
{
	fake_pci_driver->remove(&vdev);
	assert_null(vdev.priv);
	assert_false(virtio_rng_present());
	assert_int_equal(model->errors, 0);
	fake_pci_destroy_queues();
}

/* The device fills the request with @n bytes of a pattern; whether it notified. */
static bool device_fill(uint32_t n)
{
	uint8_t pattern[VIRTIO_RNG_MAX_READ];

	for (uint32_t i = 0; i < n; i++)
		pattern[i] = (uint8_t)(i * 31 + 7);
	assert_int_equal(ring_model_fetch(model), 1);
	assert_int_equal(model_buf_write(&model->held[0], pattern, n), n);
	return fake_pci_complete(0, 0, n);
}

/* A polled queue (no vector), idle=poll: the request keeps the context scheduled. */
static void read_and_short_read(enum virtq_layout l)
{
	const uint8_t *data = NULL;
	uint32_t got = 0;

	start(l, -1);
	assert_int_equal(virtio_rng_collect(&data, &got), 0); /* nothing asked */
	/* idle: nothing scheduled, nothing found, a pass asks for nothing */
	assert_false(stub_scheduled(rng_ctx()));
	assert_int_equal(rng_check(false), POLL_IDLE);
	assert_int_equal(virtio_rng_request(0), -EINVAL);
	assert_int_equal(virtio_rng_request(VIRTIO_RNG_MAX_READ + 1), -EINVAL);
	assert_false(stub_scheduled(rng_ctx()));
	assert_int_equal(virtio_rng_request(64), 0);
	assert_true(stub_scheduled(rng_ctx())); /* nothing interrupts: it looks */
	assert_int_equal(virtio_rng_request(64), -EBUSY); /* one in flight */
	/* nothing completed: no work, and it looks again next pass */
	assert_int_equal(poll_once(), 0);
	assert_true(stub_scheduled(rng_ctx()));
	assert_int_equal(virtio_rng_collect(&data, &got), 0);
	device_fill(64);
	/* the completion is work: the waiting command's pass looks again before a halt */
	assert_int_equal(poll_once(), 1);
	assert_int_equal(rng_check(false), POLL_LOST); /* no interrupt announces it */
	assert_int_equal(virtio_rng_collect(&data, &got), 1);
	assert_int_equal(got, 64);
	for (uint32_t i = 0; i < 64; i++)
		assert_int_equal(data[i], (uint8_t)(i * 31 + 7));
	/* collected: the next pass finds nothing and stops looking */
	assert_int_equal(rng_check(false), POLL_IDLE);
	assert_int_equal(poll_once(), 0);
	assert_false(stub_scheduled(rng_ctx()));
	/* a short read is still delivered, and the next request may go */
	assert_int_equal(virtio_rng_request(VIRTIO_RNG_MAX_READ), 0);
	device_fill(10);
	assert_int_equal(virtio_rng_collect(&data, &got), 1);
	assert_int_equal(got, 10);
	fake_pci_driver->show(&vdev);
	/* removed with a request out: nothing is left to look at */
	assert_int_equal(virtio_rng_request(16), 0);
	assert_true(stub_scheduled(rng_ctx()));
	stop();
	assert_int_equal(rng_check(false), POLL_IDLE);
	assert_int_equal(poll_once(), 0);
	assert_false(stub_scheduled(rng_ctx()));
}

static void test_read_split(void **s)
{
	read_and_short_read(VIRTQ_SPLIT);
}

static void test_read_packed(void **s)
{
	read_and_short_read(VIRTQ_PACKED);
}

/* idle=halt: a polled request asks for a look after POLL_POLLED_NS instead. */
static void test_polled_request_waits_by_timer(void **s)
{
	const uint8_t *data;
	uint32_t got;

	start(VIRTQ_SPLIT, -1);
	stub_idle_halt = true;
	stub_now = 5000;
	assert_int_equal(virtio_rng_request(32), 0);
	assert_false(stub_scheduled(rng_ctx()));
	assert_true(rng_ctx()->due_ns == 5000 + POLL_POLLED_NS);
	assert_true(poll_next_due() == 5000 + POLL_POLLED_NS);
	device_fill(32);
	stub_now += POLL_POLLED_NS;
	assert_int_equal(poll_once(), 1); /* the timer ran it: the completion is work */
	assert_int_equal(virtio_rng_collect(&data, &got), 1);
	assert_int_equal(got, 32);
	stub_idle_halt = false;
	stop();
}

/*
 * With an interrupt: the request needs no look (the interrupt will
 * schedule the context); the device's notification does. A completion
 * whose notification never came is one the device owed: the watchdog's
 * check says so, and its second look counts it as missed.
 */
static void with_interrupt(enum virtq_layout l)
{
	const uint8_t *data;
	uint32_t got;
	struct virtq_stats st;
	uint64_t missed;

	start(l, 40);
	assert_int_equal(virtio_rng_request(16), 0);
	assert_false(stub_scheduled(rng_ctx()));
	assert_true(device_fill(16)); /* notified: the interrupt came */
	assert_true(stub_scheduled(rng_ctx()));
	assert_int_equal(poll_once(), 1);
	assert_false(stub_scheduled(rng_ctx())); /* it completes: the interrupt says when */
	assert_int_equal(virtio_rng_collect(&data, &got), 1);

	/* the device completes and owes a notification it never sends */
	assert_int_equal(virtio_rng_request(16), 0);
	assert_int_equal(ring_model_fetch(model), 1);
	assert_true(ring_model_complete(model, 0, 16));
	assert_false(stub_scheduled(rng_ctx()));
	virtq_get_stats(fake_pci_queues[0], &st);
	missed = st.missed_notifications;
	assert_int_equal(rng_check(false), POLL_OWED);
	virtq_get_stats(fake_pci_queues[0], &st);
	assert_int_equal(st.missed_notifications, missed); /* the first look counts nothing */
	assert_int_equal(rng_check(true), POLL_OWED);
	virtq_get_stats(fake_pci_queues[0], &st);
	assert_int_equal(st.missed_notifications, missed + 1);
	assert_int_equal(virtio_rng_collect(&data, &got), 1);
	assert_int_equal(rng_check(true), POLL_IDLE);
	stop();
}

static void test_interrupt_split(void **s)
{
	with_interrupt(VIRTQ_SPLIT);
}

static void test_interrupt_packed(void **s)
{
	with_interrupt(VIRTQ_PACKED);
}

/*
 * A command that gave up (its 10 s passed) abandons its request: until
 * the device answers the next request waits (the buffer is the
 * device's) and the watchdog finds nothing owed; the late answer is
 * dropped by the context, and the next request goes.
 */
static void test_late_answer_dropped(void **s)
{
	const uint8_t *data;
	uint32_t got;

	start(VIRTQ_SPLIT, -1);
	assert_int_equal(virtio_rng_request(32), 0);
	virtio_rng_abandon();
	assert_int_equal(virtio_rng_request(16), -EBUSY); /* nothing back yet */
	device_fill(32);
	assert_int_equal(rng_check(false), POLL_IDLE); /* nobody waits for it */
	assert_int_equal(poll_once(), 1);
	assert_int_equal(virtio_rng_request(16), 0);
	assert_int_equal(ring_model_fetch(model), 1);
	assert_int_equal(model_buf_write(&model->held[0], (const uint8_t *)"0123456789abcdef", 16),
			 16);
	fake_pci_complete(0, 0, 16);
	assert_int_equal(virtio_rng_collect(&data, &got), 1);
	assert_int_equal(got, 16);
	assert_memory_equal(data, "0123456789abcdef", 16);
	stop();
}

static void test_no_device(void **s)
{
	const uint8_t *data;
	uint32_t got;

	if (!fake_pci_driver)
		virtio_rng_init();
	assert_false(virtio_rng_present());
	assert_int_equal(rng_ctx()->poll(rng_ctx(), POLL_BUDGET), 0);
	assert_int_equal(rng_check(false), POLL_IDLE);
	assert_int_equal(virtio_rng_request(16), -ENODEV);
	assert_int_equal(virtio_rng_collect(&data, &got), -ENODEV);
	fake_pci_reset();
	fake_pci_fail_index = 0;
	assert_int_not_equal(fake_pci_driver->probe(&vdev), 0);
	fake_pci_fail_index = -1;
	assert_false(virtio_rng_present());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_split),
		cmocka_unit_test(test_read_packed),
		cmocka_unit_test(test_polled_request_waits_by_timer),
		cmocka_unit_test(test_interrupt_split),
		cmocka_unit_test(test_interrupt_packed),
		cmocka_unit_test(test_late_answer_dropped),
		cmocka_unit_test(test_no_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
