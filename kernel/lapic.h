/* SPDX-License-Identifier: MIT */
/* The local APIC: where MSI-X messages land. */
#ifndef KERNEL_LAPIC_H
#define KERNEL_LAPIC_H

#include <stdint.h>

#include "kernel/cpu.h"

/* The xAPIC EOI register, NULL when unmapped (isr.S writes it itself). */
extern volatile uint32_t *lapic_eoi_reg;
/* The timer's vector, -1 until the timer is first used. */
extern int lapic_timer_vector;

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
static inline uint64_t lapic_timer_ticks(void)
{
	return lapic_timer_vector < 0 ? 0 : irq_count(lapic_timer_vector);
}

#endif
