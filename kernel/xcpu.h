/* SPDX-License-Identifier: MIT */
/*
 * Cross-CPU messages between the BSP and each application processor: a
 * pair of single-producer single-consumer rings per AP (spsc_ring.h), in
 * for the BSP's requests, out for the AP's replies, each push followed
 * by poll_schedule() of the context that drains the ring on the other
 * CPU (the bit, then the wake-up IPI). A message names the function its
 * consumer runs: a request runs on the AP, a reply on the BSP, each in
 * its CPU's poll loop; either is passed the index of the AP whose rings
 * carried it. A request may add poll contexts on its AP.
 *
 * Each CPU's state is its own: an AP's counters are written by it alone
 * and read by the BSP only as a reply to a request that asked for them.
 */
#ifndef KERNEL_XCPU_H
#define KERNEL_XCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/spsc_ring.h"

struct xcpu_cpu;

/* One AP's counters, as it reads them itself. */
struct xcpu_stats {
	uint64_t ipis; /* wake-up IPIs taken */
	uint64_t msgs; /* requests run to completion */
	uint64_t halts; /* times its loop halted with nothing to do */
	uint64_t dropped; /* replies its full out ring refused */
	uint64_t timer_ticks; /* its own LAPIC timer's interrupts */
};

/* The BSP's side: requests sent, replies run, wake-up IPIs taken. */
struct xcpu_bsp_stats {
	uint64_t sent, replies, ipis;
};

/* On the BSP before any AP starts: the wake-up IPI's vector and the replies context. */
void xcpu_init(void);
/* On the BSP: AP @index's rings, empty (NULL: no memory). */
struct xcpu_cpu *xcpu_cpu_new(unsigned int index, uint32_t apic_id);
/* On the AP, once it is online (its struct percpu entered): its poll loop. */
void xcpu_ap_run(struct xcpu_cpu *self) __attribute__((noreturn));

/*
 * On the BSP: @m into online AP @cpu's in ring, then the wake-up IPI.
 * 0, -ENODEV (no rings or no vector), -ENOSPC (ring full: the AP is not
 * taking requests), -EIO (the IPI could not be sent).
 */
int xcpu_send(unsigned int cpu, const struct spsc_msg *m);
/* On the BSP: requests AP @cpu has not taken yet. */
unsigned int xcpu_untaken(unsigned int cpu);
/*
 * On the BSP, outside the loop's wait (it spins, so it may run inside a
 * context): @fn (NULL: none) as a request on AP @cpu, and wait up to
 * @timeout_ns for the AP to have run it and come back to its loop. After
 * a true return nothing the AP did before is still running: an
 * interrupt it took is over, a context it took out of its loop is out.
 * After a false one @fn may still run, later: whatever it points at
 * must stay allocated.
 */
bool xcpu_sync(unsigned int cpu, void (*fn)(const struct spsc_msg *, unsigned int), uint64_t arg,
	       uint64_t timeout_ns);
/* On the BSP: run the replies waiting (a blocking command's step). */
void xcpu_drain(void);
void xcpu_bsp_stats(struct xcpu_bsp_stats *s);

/* On AP @cpu (its loop: a request or a context): @m to the BSP; false if its ring is full. */
bool xcpu_reply(unsigned int cpu, const struct spsc_msg *m);
/* On AP @cpu, inside a request: its own counters. */
void xcpu_own_stats(unsigned int cpu, struct xcpu_stats *s);

#endif
