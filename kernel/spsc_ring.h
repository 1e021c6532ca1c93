/* SPDX-License-Identifier: MIT */
/*
 * A single-producer single-consumer ring of fixed-size messages: what
 * crosses from one CPU to another (kernel/xcpu.c). One CPU only pushes,
 * one other CPU only pops; neither ever waits for the other: a push into
 * a full ring and a pop from an empty one return false at once.
 *
 * The producer's index and the consumer's are free-running 32-bit counts
 * on cache lines of their own, so each CPU writes only its own line and
 * reads the other's; a slot is index & (SPSC_RING_SLOTS - 1).
 */
#ifndef KERNEL_SPSC_RING_H
#define KERNEL_SPSC_RING_H

#include <stdbool.h>
#include <stdint.h>

#define SPSC_RING_SLOTS 64 /* a power of two: the mask below */
#define SPSC_CACHE_LINE 64

_Static_assert((SPSC_RING_SLOTS & (SPSC_RING_SLOTS - 1)) == 0, "a power of two");

/* One message: what the consumer runs, and its arguments. One cache line. */
struct spsc_msg {
	/* @ctx: what the consumer passes (xcpu.c: the AP whose ring it is) */
	void (*fn)(const struct spsc_msg *m, unsigned int ctx);
	uint64_t arg[7];
};

struct spsc_ring {
	uint32_t head __attribute__((aligned(SPSC_CACHE_LINE))); /* the producer's */
	uint32_t tail __attribute__((aligned(SPSC_CACHE_LINE))); /* the consumer's */
	struct spsc_msg slot[SPSC_RING_SLOTS] __attribute__((aligned(SPSC_CACHE_LINE)));
};

/* Empty, before either side uses it. */
void spsc_ring_init(struct spsc_ring *r);
/* The producer: copy @m in; false when the ring is full. */
bool spsc_ring_push(struct spsc_ring *r, const struct spsc_msg *m);
/* The consumer: the oldest message into @m; false when the ring is empty. */
bool spsc_ring_pop(struct spsc_ring *r, struct spsc_msg *m);
/* The consumer's view: nothing to pop. */
bool spsc_ring_empty(const struct spsc_ring *r);
/* The producer's view: no room to push. */
bool spsc_ring_full(const struct spsc_ring *r);
/* Pushed and not yet popped, as either side sees it now (a diagnostic). */
unsigned int spsc_ring_used(const struct spsc_ring *r);

#endif
