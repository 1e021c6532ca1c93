// SPDX-License-Identifier: MIT
/*
 * The ordering, in the C memory model's terms (x86 is TSO, so on the
 * CPU the acquire loads and release stores below are plain MOVs; the
 * builtins keep the compiler from reordering or caching them):
 *
 *  - the producer writes the slot, then release-stores head; the
 *    consumer acquire-loads head, then reads the slot: a message is
 *    complete before its index says it is there;
 *  - the consumer reads the slot, then release-stores tail; the
 *    producer acquire-loads tail before it writes a slot: a slot is not
 *    overwritten while the consumer may still be copying it out.
 *
 * Each side reads its own index relaxed: only it writes that index.
 */
#include <string.h>

#include "kernel/spsc_ring.h"

#define MASK (SPSC_RING_SLOTS - 1)

void spsc_ring_init(struct spsc_ring *r)
{
	__atomic_store_n(&r->head, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->tail, 0, __ATOMIC_RELAXED);
}

bool spsc_ring_push(struct spsc_ring *r, const struct spsc_msg *m)
{
	uint32_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

	if (head - tail >= SPSC_RING_SLOTS)
		return false;
	memcpy(&r->slot[head & MASK], m, sizeof(*m));
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
	return true;
}

bool spsc_ring_pop(struct spsc_ring *r, struct spsc_msg *m)
{
	uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	if (head == tail)
		return false;
	memcpy(m, &r->slot[tail & MASK], sizeof(*m));
	__atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
	return true;
}

bool spsc_ring_empty(const struct spsc_ring *r)
{
	return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
}

bool spsc_ring_full(const struct spsc_ring *r)
{
	return __atomic_load_n(&r->head, __ATOMIC_RELAXED) -
		       __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >=
	       SPSC_RING_SLOTS;
}

unsigned int spsc_ring_used(const struct spsc_ring *r)
{
	uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - tail;
}
