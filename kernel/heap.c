// SPDX-License-Identifier: MIT
/*
 * The heap under newlib's malloc: one contiguous, identity-mapped range
 * grown by _sbrk. Because it is physically contiguous, dma_alloc() is just
 * an aligned malloc.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/dma.h"
#include "kernel/mm.h"

static uint64_t heap_start, heap_end, heap_brk;

void heap_init(uint64_t start, uint64_t end)
{
	heap_start = start;
	heap_end = end;
	heap_brk = start;
}

void *heap_sbrk(intptr_t incr)
{
	uint64_t old = heap_brk;

	if (incr > 0 && (uint64_t)incr > heap_end - heap_brk)
		return (void *)-1;
	if (incr < 0 && (uint64_t)-incr > heap_brk - heap_start)
		return (void *)-1;
	heap_brk += incr;
	return (void *)(uintptr_t)old;
}

void heap_get(uint64_t *start, uint64_t *end, uint64_t *brk)
{
	*start = heap_start;
	*end = heap_end;
	*brk = heap_brk;
}

/*
 * newlib 3.3's malloc (mallocr.c) fills its own struct mallinfo of ten
 * ints, while <malloc.h> declares ten size_t: through the header's struct,
 * uordblks is a word of the caller's stack the library never wrote. Call
 * it by the library's layout instead.
 */
struct newlib_mallinfo {
	int arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};

extern struct newlib_mallinfo newlib_mallinfo(void) __asm__("mallinfo");

uint64_t heap_in_use(void)
{
	return (uint32_t)newlib_mallinfo().uordblks;
}

void *dma_alloc(size_t size, size_t align)
{
	void *p = memalign(align < 16 ? 16 : align, size);

	if (p)
		memset(p, 0, size);
	return p;
}

void dma_free(void *p)
{
	free(p);
}
