// SPDX-License-Identifier: MIT
/*
 * MSI steering's pure parts (kernel/msi.h): the message address for an
 * APIC id (SDM 3A 11.11.1), ids remapping would need refused, and the
 * next online CPU that net_irq=other sends a queue's vector to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernel/msi.h"

static void test_address_names_the_apic_id(void **state)
{
	uint32_t addr = 0;

	assert_true(msi_address(0, &addr));
	assert_int_equal(addr, 0xfee00000u);
	assert_true(msi_address(1, &addr));
	assert_int_equal(addr, 0xfee01000u);
	assert_true(msi_address(255, &addr));
	assert_int_equal(addr, 0xfeeff000u);
	/* bits 3 (RH) and 2 (DM) clear: physical destination, no hint */
	assert_int_equal(addr & 0xc, 0);
}

static void test_ids_above_255_refused(void **state)
{
	uint32_t addr = 0x1234;

	assert_false(msi_address(256, &addr));
	assert_false(msi_address(0xffffffffu, &addr));
	assert_int_equal(addr, 0x1234); /* left alone */
}

static void test_next_online_wraps_and_skips(void **state)
{
	assert_int_equal(msi_next_online(0x3, 2, 0), 1);
	assert_int_equal(msi_next_online(0x3, 2, 1), 0);
	assert_int_equal(msi_next_online(0xd, 4, 0), 2); /* CPU 1 offline */
	assert_int_equal(msi_next_online(0xd, 4, 3), 0);
	assert_int_equal(msi_next_online(0x1, 4, 0), 0); /* none other: itself */
	assert_int_equal(msi_next_online(0x1, 1, 0), 0);
	assert_int_equal(msi_next_online(1ull << 63 | 1, 64, 0), 63);
	assert_int_equal(msi_next_online(~0ull, 65, 5), 5); /* more than a mask holds */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_address_names_the_apic_id),
		cmocka_unit_test(test_ids_above_255_refused),
		cmocka_unit_test(test_next_online_wraps_and_skips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
