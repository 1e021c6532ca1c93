/* SPDX-License-Identifier: MIT */
/*
 * What only CPU 0 may do, checked where it is done: write to the console
 * (the UART and newlib's stdout are CPU 0's). An AP that tries breaks
 * the rule: its output is dropped, the attempt counted on that CPU
 * (`cpus stats`), and CPU 0 reports it on the console as a bug.
 * newlib's heap is every CPU's (libc/malloc_lock.c).
 */
#ifndef KERNEL_CPU_RULES_H
#define KERNEL_CPU_RULES_H

#include <stdbool.h>
#include <stdint.h>

/* On CPU 0 before the APs start: the context that reports broken rules. */
void cpu_rules_init(void);
/* True on CPU 0; on an AP false, counted and reported. */
bool cpu_may_print(void);
/* On an AP: something to say for it (a watchdog finding): CPU 0 looks. */
void cpu_rules_tell(void);

#endif
