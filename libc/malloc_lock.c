// SPDX-License-Identifier: MIT
/*
 * newlib's malloc is not reentrant: it brackets every heap operation
 * with __malloc_lock() and __malloc_unlock(), which newlib leaves empty
 * for a single thread. Every CPU may allocate (probe-time work runs on
 * the APs too), so here they are a recursive spinlock: malloc calls
 * itself through _sbrk_r, never from an interrupt, and the data path
 * allocates from its own pools, so a CPU rarely waits here.
 */
#include <reent.h>

#include "kernel/io.h"
#include "kernel/percpu.h"

void __malloc_lock(struct _reent *r);
void __malloc_unlock(struct _reent *r);

static int holder = -1; /* the CPU inside malloc; shared, taken with a locked exchange */
static unsigned int depth; /* the holder's own */

void __malloc_lock(struct _reent *r)
{
	int me = (int)percpu_read(index), free_;

	if (__atomic_load_n(&holder, __ATOMIC_RELAXED) == me) {
		depth++;
		return;
	}
	for (;;) {
		free_ = -1;
		if (__atomic_compare_exchange_n(&holder, &free_, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		cpu_relax();
	}
	depth = 1;
}

void __malloc_unlock(struct _reent *r)
{
	if (--depth == 0)
		__atomic_store_n(&holder, -1, __ATOMIC_RELEASE);
}
