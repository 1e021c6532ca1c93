/* SPDX-License-Identifier: MIT */
/*
 * What the poll loop does when a pass found nothing to do: spin on (idle=
 * poll), or halt until an interrupt (idle=halt, the default: MSI-X
 * completions, or the LAPIC timer: a periodic 1 ms tick, or with
 * tick=deadline, the default, one-shot to the next thing due), the way an
 * interrupt-driven guest waits.
 */
#ifndef KERNEL_IDLE_H
#define KERNEL_IDLE_H

void idle_init(void);
/*
 * Nothing was done in the last pass: with idle=halt, sleep unless a poller
 * was raised or a pending() hook asked says work is waiting.
 */
void idle_wait(void);

#endif
