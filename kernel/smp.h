/* SPDX-License-Identifier: MIT */
/*
 * The application processors: started at boot from the MADT's list, up
 * to the `cpus` key. In this stage an AP comes up (its own stack, GDT,
 * TSS and LAPIC, the shared IDT and page tables), says it is online and
 * runs the requests the BSP sends it through its ring (kernel/xcpu.h),
 * halted between them; nothing else is shared.
 */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include <stdint.h>

#include "kernel/acpi.h"

#define SMP_MAX_CPUS ACPI_MAX_CPUS

enum smp_state {
	SMP_OFFLINE, /* not started: beyond the `cpus` key */
	SMP_STARTING, /* start-up IPIs sent, not yet online */
	SMP_ONLINE,
	SMP_FAILED, /* did not come up in time, or could not be started */
};

/* After acpi_init, lapic_init, config_parse_cmdline and shell_init. */
void smp_init(void);
unsigned int smp_online(void);
/* CPUs known (the BSP is 0), each one's enum smp_state and MADT APIC id. */
unsigned int smp_cpus(void);
int smp_state(unsigned int cpu);
uint32_t smp_apic_id(unsigned int cpu);
const char *smp_state_name(int state);
/* The next online CPU after @cpu, wrapping around; @cpu when no other is. */
unsigned int smp_next_online(unsigned int cpu);
/* "2 online of 2 in MADT" and what is missing, for `info`. */
void smp_describe(char *buf, unsigned int len);

#endif
