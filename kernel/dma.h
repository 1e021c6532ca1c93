/* SPDX-License-Identifier: MIT */
/*
 * Memory that devices read and write. Physical memory is identity-mapped,
 * so a buffer's physical address is its virtual address; drivers still say
 * virt_to_phys() where a device is given an address, so the intent is
 * visible and a non-identity mapping would be one change.
 */
#ifndef KERNEL_DMA_H
#define KERNEL_DMA_H

#include <stddef.h>
#include <stdint.h>

/* Zeroed, physically contiguous, aligned to @align (a power of two). */
void *dma_alloc(size_t size, size_t align);
void dma_free(void *p);

static inline uint64_t virt_to_phys(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static inline void *phys_to_virt(uint64_t pa)
{
	return (void *)(uintptr_t)pa;
}

#endif
