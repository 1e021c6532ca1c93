/* SPDX-License-Identifier: MIT */
/* The local APIC: where MSI-X messages land. */
#ifndef KERNEL_LAPIC_H
#define KERNEL_LAPIC_H

#include <stdint.h>

void lapic_init(void);
uint32_t lapic_id(void);
uint64_t lapic_base(void);
void lapic_eoi(void);
/*
 * A periodic LAPIC timer interrupt every @period_us, on a vector of its
 * own: the wake-up of the idle=halt poll loop. 0 stops it.
 */
void lapic_timer_periodic(uint32_t period_us);
/* One interrupt on the same vector after @us (at least one timer count). */
void lapic_timer_oneshot(uint64_t us);
uint64_t lapic_timer_ticks(void);

#endif
