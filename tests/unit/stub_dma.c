// SPDX-License-Identifier: MIT
/*
 * kernel/dma.h for host unit tests: aligned heap memory. Counts live
 * allocations so tests can check nothing leaks, and can be told to fail
 * the next allocations to exercise fallbacks.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/dma.h"
#include "ring_model.h"

long stub_dma_live;
int stub_dma_fail_next;

void *dma_alloc(size_t size, size_t align)
{
	void *p;

	if (stub_dma_fail_next > 0) {
		stub_dma_fail_next--;
		return NULL;
	}
	if (align < sizeof(void *))
		align = sizeof(void *);
	/* aligned_alloc wants the size to be a multiple of the alignment. */
	size = (size + align - 1) & ~(align - 1);
	p = aligned_alloc(align, size ? size : align);
	if (!p)
		return NULL;
	memset(p, 0, size);
	stub_dma_live++;
	return p;
}

void dma_free(void *p)
{
	if (!p)
		return;
	stub_dma_live--;
	free(p);
}
