/* SPDX-License-Identifier: MIT */
/*
 * What the poll loop does when a pass left nothing scheduled: spin on
 * (idle=poll), or halt until an interrupt (idle=halt, the default: a
 * queue's MSI-X vector, a wake-up IPI, or the LAPIC timer: a periodic
 * 1 ms tick, or with tick=deadline, the default, one-shot to the next
 * thing due), the way an interrupt-driven guest waits.
 *
 * The idle watchdog (idle_guard) looks once a period for work that
 * nothing scheduled, a wake-up that never came: counted, said on the
 * console and done (kernel/poll.h, check()).
 */
#ifndef KERNEL_IDLE_H
#define KERNEL_IDLE_H

#include <stdbool.h>
#include <stdint.h>

void idle_init(void);
/*
 * The pass left nothing scheduled: with idle=halt, halt unless a context
 * is scheduled, waking by @wake_by (ns since boot; UINT64_MAX: only for
 * what is due) at the latest.
 */
void idle_wait(uint64_t wake_by);
/* idle=halt: the loop sleeps between passes (else it spins). */
bool idle_halts(void);

struct idle_finding;
/* On CPU 0: the console line of a watchdog finding of CPU @cpu (percpu.h). */
void idle_say(unsigned int cpu, const struct idle_finding *f);

#endif
