/* SPDX-License-Identifier: MIT */
/*
 * Turning a loader's memory map into the RAM we may use. Pure logic: no
 * hardware, so the unit tests run it on hostile maps.
 */
#ifndef KERNEL_MEMMAP_H
#define KERNEL_MEMMAP_H

#include <stdint.h>

#include "kernel/boot_info.h"

#define PAGE_SIZE 4096ULL

struct mem_region {
	uint64_t start; /* page aligned */
	uint64_t end; /* page aligned, exclusive */
};

/*
 * Usable RAM: the usable ranges of @map, shrunk to whole pages, sorted and
 * merged, minus every range @map marks otherwise (a firmware that reports
 * overlapping ranges gets the restrictive reading) and minus @exclude (the
 * kernel image, the first MiB). Writes at most @max regions to @out and
 * returns how many; regions that do not fit are dropped, smallest address
 * first kept.
 */
unsigned int memmap_usable(const struct boot_mem_range *map, unsigned int n,
			   const struct mem_region *exclude, unsigned int n_exclude,
			   struct mem_region *out, unsigned int max);

/*
 * The lowest page in [@min, @max) that @map says is usable RAM and no
 * other range of it claims; 0 if there is none (@min > 0). For the
 * application processors' real-mode start-up page (kernel/smp.c).
 */
uint64_t memmap_low_page(const struct boot_mem_range *map, unsigned int n, uint64_t min,
			 uint64_t max);

uint64_t memmap_total(const struct mem_region *r, unsigned int n);

const char *memmap_type_name(uint32_t type);

#endif
