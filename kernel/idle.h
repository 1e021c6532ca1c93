/* SPDX-License-Identifier: MIT */
/*
 * What the poll loop does when a pass found nothing to do: spin on (idle=
 * poll, the default: lowest latency), or halt until an interrupt (idle=
 * halt: MSI-X completions with irq=msix, else a 1 ms LAPIC tick), the way
 * an interrupt-driven guest waits.
 */
#ifndef KERNEL_IDLE_H
#define KERNEL_IDLE_H

void idle_init(void);
/*
 * Nothing was done in the last pass: with idle=halt, sleep unless console
 * input or a registered poller's pending() says work is waiting.
 */
void idle_wait(void);

#endif
