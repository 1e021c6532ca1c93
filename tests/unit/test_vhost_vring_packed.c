// SPDX-License-Identifier: MIT
/*
 * The back end's packed ring walk (host/vring/vring_packed.c) where a
 * chain runs off the ring's last slot into slot 0 (virtio 1.2, 2.8.1,
 * 2.8.6): slot 0 then belongs to the driver's next lap, so its avail/used
 * bits are those of the flipped wrap counter. Such a chain is legal and
 * must pop whole, and its used element and the next chain go on with
 * the flipped counters; slot 0 left with the old lap's bits is not
 * available and must be refused, counted, never read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/vring/vring.h"
#include "guest_mem_fixture.h"

#define NUM 8
#define DESC 0x0000
#define DRIVER_EVENT 0x1000
#define DEVICE_EVENT 0x2000
#define BUF 0x8000

/* 2.8.1 flags: NEXT as split, AVAIL bit 7, USED bit 15 */
#define F_NEXT 1
#define F_AVAIL (1 << 7)
#define F_USED (1 << 15)

struct pdesc {
	uint64_t addr;
	uint32_t len;
	uint16_t id;
	uint16_t flags;
};

/* The avail/used bits a driver on lap @wrap writes (2.8.1). */
static uint16_t avail_bits(bool wrap)
{
	return wrap ? F_AVAIL : F_USED;
}

static void set_slot(unsigned int i, uint64_t addr, uint32_t len, uint16_t id, uint16_t flags)
{
	struct pdesc d = { .addr = addr, .len = len, .id = id, .flags = flags };

	memcpy(mem + DESC + 16 * i, &d, sizeof(d));
}

static struct pdesc slot(unsigned int i)
{
	struct pdesc d;

	memcpy(&d, mem + DESC + 16 * i, sizeof(d));
	return d;
}

/* The ring with the device at the last slot of the first lap. */
static int setup(void **state)
{
	(void)state;
	memset(mem, 0, sizeof(mem));
	memset(&vr, 0, sizeof(vr));
	vr.packed = true;
	vr.num = NUM;
	vr.desc_uaddr = UADDR + DESC;
	vr.avail_uaddr = UADDR + DRIVER_EVENT;
	vr.used_uaddr = UADDR + DEVICE_EVENT;
	assert_true(vring_map(&vr, &gm));
	vring_set_base(&vr, (NUM - 1) | 1u << 15);
	return 0;
}

static void test_chain_wrapping_into_slot_0_pops_whole(void **state)
{
	(void)state;
	/* 20 bytes in the last slot, 24 in slot 0 on the next lap; id 3 */
	set_slot(0, BUF + 20, 24, 3, avail_bits(false));
	set_slot(NUM - 1, BUF, 20, 3, F_NEXT | avail_bits(true));
	alarm(10);
	assert_int_equal(vring_pop(&vr, &e), 1);
	alarm(0);
	assert_false(e.dropped);
	assert_int_equal(e.id, 3);
	assert_int_equal(e.ndesc, 2);
	assert_int_equal(e.n_out, 2);
	assert_int_equal(e.out_len, 44);
	assert_ptr_equal(e.out[0].iov_base, mem + BUF);
	assert_ptr_equal(e.out[1].iov_base, mem + BUF + 20);
	assert_int_equal(vr.errors, 0);
	/* the device's next look is slot 1 on the second lap */
	assert_int_equal(vring_get_base(&vr) & 0xffff, 1);

	/* 2.8.7: one used element in the chain's first slot, first lap's bits */
	vring_push(&vr, &e, 0);
	assert_int_equal(slot(NUM - 1).id, 3);
	assert_int_equal(slot(NUM - 1).flags & (F_AVAIL | F_USED), F_AVAIL | F_USED);
	assert_int_equal(vring_get_base(&vr) >> 16, 1);

	/* the next chain, in slot 1 on the second lap, pops too */
	set_slot(1, BUF, 16, 5, avail_bits(false));
	assert_int_equal(vring_pop(&vr, &e), 1);
	assert_int_equal(e.id, 5);
	assert_int_equal(e.out_len, 16);
	vring_push(&vr, &e, 0);
	assert_int_equal(slot(1).flags & (F_AVAIL | F_USED), 0);
	assert_false(vr.broken);
}

static void test_slot_0_with_the_old_lap_refused(void **state)
{
	(void)state;
	/* slot 0 still says "first lap": not available to a device on the second */
	set_slot(0, BUF + 20, 24, 3, avail_bits(true));
	set_slot(NUM - 1, BUF, 20, 3, F_NEXT | avail_bits(true));
	alarm(10);
	assert_int_equal(vring_pop(&vr, &e), -1);
	alarm(0);
	assert_int_equal(vr.errors, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_chain_wrapping_into_slot_0_pops_whole, setup),
		cmocka_unit_test_setup(test_slot_0_with_the_old_lap_refused, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
