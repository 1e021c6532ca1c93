/* SPDX-License-Identifier: MIT */
/* The local APIC: where MSI-X messages land. */
#ifndef KERNEL_LAPIC_H
#define KERNEL_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/percpu.h"

/* How an interrupt ends: isr.S has a raise entry for each (cpu.c picks). */
enum lapic_eoi_kind {
	LAPIC_EOI_NONE, /* no LAPIC mapped */
	LAPIC_EOI_XAPIC, /* a store to lapic_eoi_reg */
	LAPIC_EOI_X2APIC, /* WRMSR 0x80b */
	LAPIC_EOI_KVM_PV, /* clear KVM's flag, else one of the two above */
};

/* The xAPIC EOI register, NULL when unmapped or in x2APIC mode. */
extern volatile uint32_t *lapic_eoi_reg;

/* After hypervisor_init: x2APIC and KVM's PV EOI when offered. */
void lapic_init(void);
uint32_t lapic_id(void);
/* On an application processor: its LAPIC on, in the BSP's mode. */
void lapic_init_ap(void);
bool lapic_x2apic_mode(void);
/*
 * The MP start-up IPIs to one CPU (SDM 3A 9.4.4): INIT, and a start-up
 * IPI that starts it in real mode at @page << 12. False if it could not
 * be sent (no LAPIC, an id xAPIC cannot address, delivery stuck).
 */
bool lapic_send_init(uint32_t apic_id);
bool lapic_send_startup(uint32_t apic_id, uint8_t page);
/* A fixed interrupt on @vector to one CPU; false as above. */
bool lapic_send_ipi(uint32_t apic_id, uint8_t vector);
uint64_t lapic_base(void);
void lapic_eoi(void);
enum lapic_eoi_kind lapic_eoi_kind(void);
/* For `info` and the boot line: "x2apic", "kvm-pv", "tsc-deadline"... */
const char *lapic_mode_name(void);
const char *lapic_eoi_name(void);
const char *lapic_timer_name(void);
/*
 * A periodic LAPIC timer interrupt every @period_us, on a vector of its
 * own: the wake-up of the idle=halt poll loop. 0 stops it.
 */
void lapic_timer_periodic(uint32_t period_us);
/*
 * One interrupt on the same vector after @us (at least one timer count):
 * one WRMSR in TSC-deadline mode, else the initial count register.
 */
void lapic_timer_oneshot(uint64_t us);
/* On the BSP before the APs start: the timer's vector and rate, shared. */
void lapic_timer_prepare(void);
/*
 * Timer interrupts this CPU took: one load through %gs, inline (idle_wait
 * asks before each halt).
 */
static inline uint64_t lapic_timer_ticks(void)
{
	return percpu_read(timer_ticks);
}

#endif
