// SPDX-License-Identifier: MIT
/* memmap_usable() on ordinary, overlapping, unaligned and hostile maps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kernel/memmap.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static const struct mem_region no_exclude[1];

static unsigned int usable(const struct boot_mem_range *map, unsigned int n,
			   const struct mem_region *ex, unsigned int n_ex, struct mem_region *out,
			   unsigned int max)
{
	return memmap_usable(map, n, ex ? ex : no_exclude, n_ex, out, max);
}

/* The map SeaBIOS gives a 512 MiB q35 guest. */
static void test_qemu_map(void **state)
{
	const struct boot_mem_range map[] = {
		{ 0, 0x9fc00, BOOT_MEM_USABLE },
		{ 0x9fc00, 0x400, BOOT_MEM_RESERVED },
		{ 0xf0000, 0x10000, BOOT_MEM_RESERVED },
		{ 0x100000, 0x1fedf000, BOOT_MEM_USABLE },
		{ 0x1ffdf000, 0x21000, BOOT_MEM_RESERVED },
		{ 0xb0000000, 0x10000000, BOOT_MEM_RESERVED },
		{ 0xfffc0000, 0x40000, BOOT_MEM_RESERVED },
	};
	const struct mem_region ex[] = { { 0, MiB }, { MiB, MiB + 0x3d000 } };
	struct mem_region out[8];
	unsigned int n = usable(map, 7, ex, 2, out, 8);

	assert_int_equal(n, 1);
	assert_int_equal(out[0].start, MiB + 0x3d000);
	assert_int_equal(out[0].end, 0x1ffdf000);
	assert_int_equal(memmap_total(out, n), 0x1ffdf000 - MiB - 0x3d000);
}

static void test_unaligned_ranges_shrink_inward(void **state)
{
	const struct boot_mem_range map[] = {
		{ 0x1001, 0x3000, BOOT_MEM_USABLE }, /* pages 0x2000..0x4000 whole */
		{ 0x10000, 0xfff, BOOT_MEM_USABLE }, /* no whole page */
	};
	struct mem_region out[4];
	unsigned int n = usable(map, 2, NULL, 0, out, 4);

	assert_int_equal(n, 1);
	assert_int_equal(out[0].start, 0x2000);
	assert_int_equal(out[0].end, 0x4000);
}

static void test_overlaps_merge_and_reserved_wins(void **state)
{
	const struct boot_mem_range map[] = {
		{ 2 * MiB, 4 * MiB, BOOT_MEM_USABLE },
		{ 1 * MiB, 2 * MiB, BOOT_MEM_USABLE }, /* unsorted, overlapping */
		{ 3 * MiB, 0x1800, BOOT_MEM_ACPI_NVS }, /* inside: split, rounded out */
	};
	struct mem_region out[4];
	unsigned int n = usable(map, 3, NULL, 0, out, 4);

	assert_int_equal(n, 2);
	assert_int_equal(out[0].start, 1 * MiB);
	assert_int_equal(out[0].end, 3 * MiB);
	assert_int_equal(out[1].start, 3 * MiB + 0x2000);
	assert_int_equal(out[1].end, 6 * MiB);
}

static void test_exclusions(void **state)
{
	const struct boot_mem_range map[] = {
		{ 0, 640 * 1024, BOOT_MEM_USABLE },
		{ MiB, 15 * MiB, BOOT_MEM_USABLE },
		{ 4 * GiB, 4 * GiB, BOOT_MEM_USABLE },
	};
	const struct mem_region ex[] = {
		{ 0, MiB },
		{ MiB, 2 * MiB + 123 }, /* kernel, unaligned end */
		{ 6 * GiB, 6 * GiB + 4096 }, /* a hole high up */
	};
	struct mem_region out[8];
	unsigned int n = usable(map, 3, ex, 3, out, 8);

	assert_int_equal(n, 3);
	assert_int_equal(out[0].start, 2 * MiB + 4096);
	assert_int_equal(out[0].end, 16 * MiB);
	assert_int_equal(out[1].start, 4 * GiB);
	assert_int_equal(out[1].end, 6 * GiB);
	assert_int_equal(out[2].start, 6 * GiB + 4096);
	assert_int_equal(out[2].end, 8 * GiB);
}

static void test_hostile_lengths(void **state)
{
	const struct boot_mem_range map[] = {
		{ 0xfffffffffffff000ULL, 0x10000, BOOT_MEM_USABLE }, /* wraps */
		{ 16 * MiB, 0, BOOT_MEM_USABLE }, /* empty */
		{ 32 * MiB, UINT64_MAX, BOOT_MEM_BAD }, /* everything above */
		{ 8 * MiB, 32 * MiB, BOOT_MEM_USABLE },
		{ 5, 1, 99 }, /* unknown type */
	};
	struct mem_region out[4];
	unsigned int n = usable(map, 5, NULL, 0, out, 4);

	assert_int_equal(n, 1);
	assert_int_equal(out[0].start, 8 * MiB);
	assert_int_equal(out[0].end, 32 * MiB);
}

static void test_output_bound(void **state)
{
	struct boot_mem_range map[16];
	struct mem_region out[4];

	for (unsigned int i = 0; i < 16; i++)
		map[i] = (struct boot_mem_range){ (uint64_t)(16 - i) * 2 * MiB, MiB,
						  BOOT_MEM_USABLE };
	/* never writes past @max, even when splits would need more slots */
	assert_int_equal(usable(map, 16, NULL, 0, out, 4), 4);
	assert_int_equal(out[0].start, 2 * MiB);
	assert_int_equal(out[3].start, 8 * MiB);

	/* a hole that would split the only region of a one-slot output:
	 * the lower part is kept, nothing is written past the slot (ASan) */
	const struct mem_region ex[] = { { 129 * MiB, 130 * MiB } };
	struct mem_region *one = malloc(sizeof(*one));

	map[0] = (struct boot_mem_range){ 128 * MiB, 64 * MiB, BOOT_MEM_USABLE };
	assert_int_equal(usable(map, 1, ex, 1, one, 1), 1);
	assert_int_equal(one->start, 128 * MiB);
	assert_int_equal(one->end, 129 * MiB);
	free(one);
}

static void test_type_names(void **state)
{
	assert_string_equal(memmap_type_name(BOOT_MEM_USABLE), "usable");
	assert_string_equal(memmap_type_name(BOOT_MEM_ACPI_NVS), "acpi-nvs");
	assert_string_equal(memmap_type_name(77), "unknown");
}

/* The APs' start-up page: the first usable page from @min, none reserved. */
static void test_low_page(void **state)
{
	const struct boot_mem_range seabios[] = {
		{ 0, 0x9fc00, BOOT_MEM_USABLE },
		{ 0x9fc00, 0x400, BOOT_MEM_RESERVED },
		{ 0x100000, 0x1fedf000, BOOT_MEM_USABLE },
	};
	const struct boot_mem_range holes[] = {
		{ 0, 0x9f000, BOOT_MEM_USABLE },
		{ 0x1000, 0x2800, BOOT_MEM_RESERVED }, /* overlapping, unaligned */
		{ 0x4000, 0x800, BOOT_MEM_USABLE },
	};
	const struct boot_mem_range high_only[] = {
		{ 0x100000, 0x1000000, BOOT_MEM_USABLE },
		{ 0x9f000, 0x2000, BOOT_MEM_USABLE }, /* straddles the limit */
	};

	assert_int_equal(memmap_low_page(seabios, 3, 0x1000, 0xa0000), 0x1000);
	assert_int_equal(memmap_low_page(holes, 3, 0x1000, 0xa0000), 0x4000);
	assert_int_equal(memmap_low_page(high_only, 2, 0x1000, 0xa0000), 0x9f000);
	assert_int_equal(memmap_low_page(high_only, 1, 0x1000, 0xa0000), 0);
	assert_int_equal(memmap_low_page(seabios, 3, 0, 0xa0000), 0);
	assert_int_equal(memmap_low_page(seabios, 3, 0x9f000, 0x9f000), 0);
	assert_int_equal(memmap_low_page(NULL, 0, 0x1000, 0xa0000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qemu_map),
		cmocka_unit_test(test_unaligned_ranges_shrink_inward),
		cmocka_unit_test(test_overlaps_merge_and_reserved_wins),
		cmocka_unit_test(test_exclusions),
		cmocka_unit_test(test_hostile_lengths),
		cmocka_unit_test(test_output_bound),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_low_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
