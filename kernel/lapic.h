/* SPDX-License-Identifier: MIT */
/* The local APIC: where MSI-X messages land. */
#ifndef KERNEL_LAPIC_H
#define KERNEL_LAPIC_H

#include <stdint.h>

/* The xAPIC EOI register, NULL when unmapped (isr.S writes it itself). */
extern volatile uint32_t *lapic_eoi_reg;
/* The timer vector's interrupt count (a zero until it has a vector). */
extern const volatile uint64_t *lapic_timer_count;

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
/* Timer interrupts taken: one load, inline (idle_wait asks before each halt). */
static inline uint64_t lapic_timer_ticks(void)
{
	return *lapic_timer_count;
}

#endif
