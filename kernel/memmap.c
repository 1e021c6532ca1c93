// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <stdlib.h>

#include "kernel/memmap.h"

static uint64_t align_up(uint64_t v)
{
	if (v > UINT64_MAX - (PAGE_SIZE - 1))
		return UINT64_MAX & ~(PAGE_SIZE - 1);
	return (v + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
}

static uint64_t align_down(uint64_t v)
{
	return v & ~(PAGE_SIZE - 1);
}

/* End of a range, saturating: a hostile length must not wrap around. */
static uint64_t range_end(uint64_t base, uint64_t len)
{
	return len > UINT64_MAX - base ? UINT64_MAX : base + len;
}

static int region_cmp(const void *a, const void *b)
{
	const struct mem_region *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static unsigned int sort_and_merge(struct mem_region *r, unsigned int n)
{
	unsigned int out = 0;

	if (!n)
		return 0;
	qsort(r, n, sizeof(*r), region_cmp);
	for (unsigned int i = 1; i < n; i++) {
		if (r[i].start <= r[out].end) {
			if (r[i].end > r[out].end)
				r[out].end = r[i].end;
		} else {
			r[++out] = r[i];
		}
	}
	return out + 1;
}

/*
 * Remove [start, end) from the sorted regions. A hole inside a region
 * splits it, which needs one more slot; without one the upper part is lost.
 */
static unsigned int subtract(struct mem_region *r, unsigned int n, unsigned int max, uint64_t start,
			     uint64_t end)
{
	start = align_down(start);
	end = align_up(end);
	for (unsigned int i = 0; i < n; i++) {
		if (end <= r[i].start || start >= r[i].end)
			continue;
		if (start > r[i].start && end < r[i].end) {
			if (n < max) {
				for (unsigned int j = n; j > i + 1; j--)
					r[j] = r[j - 1];
				r[i + 1].start = end;
				r[i + 1].end = r[i].end;
				n++;
			}
			r[i].end = start;
			i++;
			continue;
		}
		if (start <= r[i].start)
			r[i].start = end < r[i].end ? end : r[i].end;
		else
			r[i].end = start;
	}
	/* drop the regions that became empty */
	unsigned int out = 0;

	for (unsigned int i = 0; i < n; i++)
		if (r[i].start < r[i].end)
			r[out++] = r[i];
	return out;
}

unsigned int memmap_usable(const struct boot_mem_range *map, unsigned int n,
			   const struct mem_region *exclude, unsigned int n_exclude,
			   struct mem_region *out, unsigned int max)
{
	unsigned int count = 0;

	for (unsigned int i = 0; i < n; i++) {
		uint64_t start, end;

		if (map[i].type != BOOT_MEM_USABLE || !map[i].len)
			continue;
		start = align_up(map[i].base);
		end = align_down(range_end(map[i].base, map[i].len));
		if (start >= end)
			continue;
		if (count < max) {
			out[count].start = start;
			out[count].end = end;
			count++;
			continue;
		}
		/* full: the lowest addresses are the ones worth keeping */
		unsigned int top = 0;

		for (unsigned int j = 1; j < count; j++)
			if (out[j].start > out[top].start)
				top = j;
		if (count && start < out[top].start) {
			out[top].start = start;
			out[top].end = end;
		}
	}
	count = sort_and_merge(out, count);

	for (unsigned int i = 0; i < n; i++)
		if (map[i].type != BOOT_MEM_USABLE && map[i].len)
			count = subtract(out, count, max, map[i].base,
					 range_end(map[i].base, map[i].len));
	for (unsigned int i = 0; i < n_exclude; i++)
		count = subtract(out, count, max, exclude[i].start, exclude[i].end);
	return count;
}

#define LOW_REGIONS 16

uint64_t memmap_low_page(const struct boot_mem_range *map, unsigned int n, uint64_t min,
			 uint64_t max)
{
	const struct mem_region outside[] = { { 0, min }, { max, UINT64_MAX } };
	struct mem_region r[LOW_REGIONS];
	unsigned int count;

	if (!min || min >= max)
		return 0;
	count = memmap_usable(map, n, outside, 2, r, LOW_REGIONS);
	return count ? r[0].start : 0;
}

uint64_t memmap_total(const struct mem_region *r, unsigned int n)
{
	uint64_t total = 0;

	for (unsigned int i = 0; i < n; i++)
		total += r[i].end - r[i].start;
	return total;
}

const char *memmap_type_name(uint32_t type)
{
	switch (type) {
	case BOOT_MEM_USABLE:
		return "usable";
	case BOOT_MEM_RESERVED:
		return "reserved";
	case BOOT_MEM_ACPI_RECLAIM:
		return "acpi-reclaim";
	case BOOT_MEM_ACPI_NVS:
		return "acpi-nvs";
	case BOOT_MEM_BAD:
		return "bad";
	default:
		return "unknown";
	}
}
