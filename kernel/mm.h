/* SPDX-License-Identifier: MIT */
/*
 * Memory: physical frames (page tables), the identity map and device
 * mappings, and the heap behind newlib's malloc.
 */
#ifndef KERNEL_MM_H
#define KERNEL_MM_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/boot_info.h"
#include "kernel/memmap.h"

#define MM_MAX_REGIONS 64

void mm_init(const struct boot_info *bi);

/* One zeroed 4 KiB frame, or 0 when memory is exhausted. */
uint64_t frame_alloc(void);

/* Identity-map [phys, phys + size) as RAM (write-back). */
int map_ram(uint64_t phys, uint64_t size);

/*
 * Make device registers at @phys reachable, uncached, and return a pointer
 * to them. Works for 64-bit BARs above 4 GiB. NULL if page tables ran out.
 */
void *ioremap(uint64_t phys, uint64_t size);

struct mm_stats {
	uint64_t ram_total; /* usable RAM the kernel manages */
	uint64_t frames_used; /* 4 KiB frames for page tables */
	uint64_t frames_free;
	uint64_t heap_start, heap_end, heap_brk;
};

void mm_get_stats(struct mm_stats *s);
const struct mem_region *mm_regions(unsigned int *n);

/* The heap: [start, end) handed to _sbrk. */
void heap_init(uint64_t start, uint64_t end);
void *heap_sbrk(intptr_t incr);
void heap_get(uint64_t *start, uint64_t *end, uint64_t *brk);
/* Bytes malloc has handed out and not had back (chunk overheads included). */
uint64_t heap_in_use(void);
/*
 * Call @fn with the size of each chunk in use, in address order; the number
 * of chunks in use, or -1 if the heap's layout is not what newlib's malloc
 * leaves.
 */
int heap_walk(void (*fn)(uint64_t size, void *arg), void *arg);

#endif
