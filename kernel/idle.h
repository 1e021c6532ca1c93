/* SPDX-License-Identifier: MIT */
/*
 * What the poll loop does when a pass found nothing to do: spin on (idle=
 * poll, the default: lowest latency), or halt until an interrupt (idle=
 * halt: MSI-X completions with irq=msix, else a 1 ms LAPIC tick), the way
 * an interrupt-driven guest waits.
 */
#ifndef KERNEL_IDLE_H
#define KERNEL_IDLE_H

#include <stdbool.h>

void idle_init(void);
/* @pending: callers' check, made with interrupts off, that work is waiting. */
void idle_wait(bool (*pending)(void));

#endif
