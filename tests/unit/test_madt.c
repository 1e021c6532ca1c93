// SPDX-License-Identifier: MIT
/* acpi_parse_madt() on QEMU's MADT and on hostile ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/acpi.h"

static unsigned int put_lapic(uint8_t *p, uint8_t apic_id, uint32_t flags)
{
	p[0] = 0;
	p[1] = 8;
	p[2] = apic_id; /* processor UID */
	p[3] = apic_id;
	memcpy(p + 4, &flags, 4);
	return 8;
}

static unsigned int put_x2apic(uint8_t *p, uint32_t id, uint32_t flags)
{
	memset(p, 0, 16);
	p[0] = 9;
	p[1] = 16;
	memcpy(p + 4, &id, 4);
	memcpy(p + 8, &flags, 4);
	return 16;
}

static unsigned int put_ioapic(uint8_t *p)
{
	const uint32_t addr = 0xfec00000, gsi = 0;

	memset(p, 0, 12);
	p[0] = 1;
	p[1] = 12;
	memcpy(p + 4, &addr, 4);
	memcpy(p + 8, &gsi, 4);
	return 12;
}

/* What QEMU builds for -smp 4: four local APICs, an I/O APIC. */
static void test_qemu_smp4(void **state)
{
	struct acpi_info ai = { 0 };
	uint8_t t[64];
	unsigned int n = 0;

	for (uint8_t id = 0; id < 4; id++)
		n += put_lapic(t + n, id, 1);
	n += put_ioapic(t + n);
	acpi_parse_madt(&ai, t, n);
	assert_int_equal(ai.n_cpus, 4);
	assert_int_equal(ai.n_cpu_ids, 4);
	for (unsigned int i = 0; i < 4; i++)
		assert_int_equal(ai.cpu_apic_id[i], i);
	assert_int_equal(ai.n_ioapics, 1);
}

/* Disabled CPUs, duplicates, x2APIC entries and the broadcast id. */
static void test_cpu_entries(void **state)
{
	struct acpi_info ai = { 0 };
	uint8_t t[128];
	unsigned int n = 0;

	n += put_lapic(t + n, 0, 1);
	n += put_lapic(t + n, 1, 0); /* not enabled */
	n += put_lapic(t + n, 2, 2); /* online capable only: not started */
	n += put_x2apic(t + n, 0, 1); /* the same CPU again */
	n += put_x2apic(t + n, 300, 1);
	n += put_x2apic(t + n, 0xffffffffu, 1); /* broadcast */
	n += put_lapic(t + n, 3, 1);
	acpi_parse_madt(&ai, t, n);
	assert_int_equal(ai.n_cpus, 3);
	assert_int_equal(ai.n_cpu_ids, 3);
	assert_int_equal(ai.cpu_apic_id[0], 0);
	assert_int_equal(ai.cpu_apic_id[1], 300);
	assert_int_equal(ai.cpu_apic_id[2], 3);
}

/* More CPUs than the list holds: all counted, the first ones kept. */
static void test_cpu_bound(void **state)
{
	struct acpi_info ai = { 0 };
	uint8_t t[16 * (ACPI_MAX_CPUS + 10)];
	unsigned int n = 0;

	for (uint32_t id = 0; id < ACPI_MAX_CPUS + 10; id++)
		n += put_x2apic(t + n, id, 1);
	acpi_parse_madt(&ai, t, n);
	assert_int_equal(ai.n_cpus, ACPI_MAX_CPUS + 10);
	assert_int_equal(ai.n_cpu_ids, ACPI_MAX_CPUS);
	assert_int_equal(ai.cpu_apic_id[ACPI_MAX_CPUS - 1], ACPI_MAX_CPUS - 1);
}

/* Truncated and zero-length structures end the walk, nothing read past the end. */
static void test_hostile_lengths(void **state)
{
	struct acpi_info ai = { 0 };
	uint8_t t[32];
	unsigned int n = 0;

	n += put_lapic(t + n, 5, 1);
	n += put_x2apic(t + n, 7, 1);
	/* the x2APIC entry cut short by the table's end */
	acpi_parse_madt(&ai, t, n - 1);
	assert_int_equal(ai.n_cpus, 1);

	memset(&ai, 0, sizeof(ai));
	t[1] = 0; /* a zero length would loop forever */
	acpi_parse_madt(&ai, t, n);
	assert_int_equal(ai.n_cpus, 0);

	memset(&ai, 0, sizeof(ai));
	put_lapic(t, 5, 1);
	t[1] = 4; /* too short for a local APIC: skipped, the walk goes on */
	put_x2apic(t + 4, 7, 1);
	acpi_parse_madt(&ai, t, 20);
	assert_int_equal(ai.n_cpus, 1);
	assert_int_equal(ai.cpu_apic_id[0], 7);

	memset(&ai, 0, sizeof(ai));
	acpi_parse_madt(&ai, t, 1);
	acpi_parse_madt(&ai, t, 0);
	assert_int_equal(ai.n_cpus, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qemu_smp4),
		cmocka_unit_test(test_cpu_entries),
		cmocka_unit_test(test_cpu_bound),
		cmocka_unit_test(test_hostile_lengths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
