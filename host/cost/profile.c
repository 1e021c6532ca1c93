// SPDX-License-Identifier: MIT
/*
 * The profile table in the shared block: guest block address -> instructions.
 * Translation may run on several vCPU threads at once, so inserting takes a
 * lock; counting is the inline add on the returned slot (no lock).
 */
#include <pthread.h>

#include "host/cost/cost.h"

static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t hash(uint64_t vaddr)
{
	/* Fibonacci hashing: block addresses share their low alignment bits. */
	return (vaddr * 0x9e3779b97f4a7c15ull) >> 20;
}

uint64_t *cost_prof_slot(uint64_t vaddr, uint32_t tb_insns)
{
	uint32_t slots = cost.hdr->prof_slots;
	uint64_t *found = NULL;
	uint64_t i = hash(vaddr) % slots;

	pthread_mutex_lock(&prof_lock);
	for (uint32_t probe = 0; probe < slots; probe++, i = (i + 1) % slots) {
		struct cost_prof_entry *e = &cost.prof[i];

		if (e->used && e->vaddr != vaddr)
			continue;
		if (!e->used) {
			/* Keep a quarter free: long probe chains slow translation. */
			if (cost.hdr->prof_used >= slots - slots / 4)
				break;
			e->vaddr = vaddr;
			__atomic_store_n(&e->used, 1, __ATOMIC_RELEASE);
			cost.hdr->prof_used++;
		}
		e->tb_insns = tb_insns;
		found = &e->insns;
		break;
	}
	if (!found)
		cost.hdr->prof_dropped++;
	pthread_mutex_unlock(&prof_lock);
	return found;
}
