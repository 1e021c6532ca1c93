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

/*
 * newlib's malloc (dlmalloc 2.6) lays chunks end to end from the first
 * sbrk: a chunk is [prev_size, size | PREV_INUSE, user data], and whether a
 * chunk is in use is the PREV_INUSE bit of the one after it. The last one,
 * "top", is the free tail (the first word of the first bin). Our sbrk is
 * contiguous, so no fenceposts lie between.
 */
#define CHUNK_WORD 8
#define CHUNK_ALIGN 16
#define CHUNK_PREV_INUSE 1
#define CHUNK_FLAGS 3

extern char *__malloc_sbrk_base;
extern char *__malloc_av_[];

static uint64_t chunk_size(const char *c)
{
	return *(const uint64_t *)(c + CHUNK_WORD) & ~(uint64_t)CHUNK_FLAGS;
}

int heap_walk(void (*fn)(uint64_t size, void *arg), void *arg)
{
	char *top = __malloc_av_[2], *c = __malloc_sbrk_base;
	int n = 0;

	if (c == (char *)-1)
		return 0; /* nothing allocated yet */
	/* the first chunk's user data is aligned (newlib's front correction) */
	c += (CHUNK_ALIGN - ((uintptr_t)c + 2 * CHUNK_WORD) % CHUNK_ALIGN) % CHUNK_ALIGN;
	while (c < top) {
		uint64_t size = chunk_size(c);
		char *next = c + size;

		if (size < 2 * CHUNK_ALIGN || next > top)
			return -1; /* not a heap we understand: stop, never wander */
		if (*(const uint64_t *)(next + CHUNK_WORD) & CHUNK_PREV_INUSE) {
			fn(size, arg);
			n++;
		}
		c = next;
	}
	return n;
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
