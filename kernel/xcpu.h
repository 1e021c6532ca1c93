/* SPDX-License-Identifier: MIT */
/*
 * Cross-CPU messages between the BSP and each application processor: a
 * pair of single-producer single-consumer rings per AP (spsc_ring.h), in
 * for the BSP's requests, out for the AP's replies, and an IPI after each
 * push to wake the other side. A message names the function its consumer
 * runs: a request runs on the AP, a reply on the BSP, each in its CPU's
 * poll loop (a poller there); either is passed the index of the AP whose
 * rings carried it. A request may register pollers on its AP.
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
	uint64_t ipis; /* mail IPIs taken */
	uint64_t msgs; /* requests run to completion */
	uint64_t halts; /* times its loop halted with nothing to do */
	uint64_t dropped; /* replies its full out ring refused */
	uint64_t timer_ticks; /* its own LAPIC timer's interrupts */
};

/* The BSP's side: requests sent, replies run, reply IPIs taken, kicks sent again. */
struct xcpu_bsp_stats {
	uint64_t sent, replies, ipis, rekicks;
};

/* On the BSP before any AP starts: the vectors and the reply poller. */
void xcpu_init(uint32_t bsp_apic_id);
/* On the BSP: AP @index's rings, empty (NULL: no memory). */
struct xcpu_cpu *xcpu_cpu_new(unsigned int index, uint32_t apic_id);
/* On the AP, once it is online: its poll loop (requests and its pollers). */
void xcpu_ap_run(struct xcpu_cpu *self) __attribute__((noreturn));

/*
 * On the BSP: @m into online AP @cpu's in ring, then the mail IPI.
 * 0, -ENODEV (no rings or no vector), -ENOSPC (ring full: the AP is not
 * taking requests), -EIO (the IPI could not be sent).
 */
int xcpu_send(unsigned int cpu, const struct spsc_msg *m);
/* On the BSP: requests AP @cpu has not taken yet. */
unsigned int xcpu_untaken(unsigned int cpu);
/*
 * On the BSP: the mail IPI once more to AP @cpu when it has requests it
 * has not taken, for a wake-up lost on the way (xcpu_cmd.c says when).
 */
void xcpu_rekick(unsigned int cpu);
/* On the BSP: run the replies waiting (a blocking command's step). */
void xcpu_drain(void);
void xcpu_bsp_stats(struct xcpu_bsp_stats *s);

/* On AP @cpu, inside a request: @m to the BSP; false if its ring is full. */
bool xcpu_reply(unsigned int cpu, const struct spsc_msg *m);
/* On AP @cpu, inside a request: its own counters. */
void xcpu_own_stats(unsigned int cpu, struct xcpu_stats *s);

#endif
