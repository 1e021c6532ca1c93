// SPDX-License-Identifier: MIT
/*
 * Physical memory at boot: the usable RAM from the memory map, minus the
 * first MiB (firmware, the loader's data, the APs' start-up page that
 * kernel/smp.c takes there) and the kernel image. The largest
 * region becomes the heap; a slice of it at the top, FRAME_POOL, backs page
 * tables. Frames are never freed: page tables live as long as the kernel.
 */
#include <stdbool.h>
#include <string.h>

#include "kernel/mm.h"
#include "kernel/printk.h"

#define FRAME_POOL (4ULL << 20)

extern char __kernel_start[], __kernel_end[];

static struct mem_region regions[MM_MAX_REGIONS];
static unsigned int n_regions;
static uint64_t pool_next, pool_end, pool_start;

const struct mem_region *mm_regions(unsigned int *n)
{
	*n = n_regions;
	return regions;
}

uint64_t frame_alloc(void)
{
	uint64_t f;

	if (pool_next + PAGE_SIZE > pool_end)
		return 0;
	f = pool_next;
	pool_next += PAGE_SIZE;
	memset((void *)(uintptr_t)f, 0, PAGE_SIZE);
	return f;
}

static uint64_t region_size(unsigned int i)
{
	return regions[i].end - regions[i].start;
}

/* The largest region, optionally only among those below 4 GiB. */
static unsigned int largest_region(bool below_4g)
{
	unsigned int best = n_regions;

	for (unsigned int i = 0; i < n_regions; i++) {
		if (below_4g && regions[i].end > (1ULL << 32))
			continue;
		if (best == n_regions || region_size(i) > region_size(best))
			best = i;
	}
	return best;
}

void mm_init(const struct boot_info *bi)
{
	const struct mem_region exclude[] = {
		{ 0, 1ULL << 20 },
		{ (uint64_t)(uintptr_t)__kernel_start, (uint64_t)(uintptr_t)__kernel_end },
	};
	unsigned int low, heap;
	uint64_t heap_end;

	n_regions = memmap_usable(bi->mmap, bi->mmap_count, exclude, 2, regions, MM_MAX_REGIONS);
	low = largest_region(true);
	if (low == n_regions || region_size(low) < 2 * FRAME_POOL) {
		early_printf("mm: not enough usable RAM below 4 GiB (%u map entries)\n",
			     bi->mmap_count);
		for (;;)
			__asm__ __volatile__("cli; hlt");
	}

	/*
	 * Page tables come from the top of the largest region below 4 GiB,
	 * which the boot page tables already map; then RAM above 4 GiB can
	 * be mapped before the heap may land there.
	 */
	pool_end = regions[low].end;
	pool_start = pool_end - FRAME_POOL;
	pool_next = pool_start;
	for (unsigned int i = 0; i < n_regions; i++)
		if (regions[i].end > (1ULL << 32))
			map_ram(regions[i].start, region_size(i));

	heap = largest_region(false);
	heap_end = heap == low ? pool_start : regions[heap].end;
	heap_init(regions[heap].start, heap_end);
}

void mm_get_stats(struct mm_stats *s)
{
	s->ram_total = memmap_total(regions, n_regions);
	s->frames_used = (pool_next - pool_start) / PAGE_SIZE;
	s->frames_free = (pool_end - pool_next) / PAGE_SIZE;
	heap_get(&s->heap_start, &s->heap_end, &s->heap_brk);
}
