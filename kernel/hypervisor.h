/* SPDX-License-Identifier: MIT */
/*
 * What the CPU and the hypervisor offer a guest, found once with CPUID:
 * x2APIC, the TSC-deadline timer, and KVM's paravirtual EOI. On KVM each
 * of them saves VM exits (an MSR EOI or none instead of an emulated MMIO
 * write; one MSR write per timer instead of three register writes). TCG
 * offers none of them, so every user keeps its plain xAPIC path too.
 */
#ifndef KERNEL_HYPERVISOR_H
#define KERNEL_HYPERVISOR_H

#include <stdbool.h>

struct cpu_features {
	bool x2apic; /* CPUID.1:ECX[21] */
	bool tsc_deadline; /* CPUID.1:ECX[24] */
	bool hypervisor; /* CPUID.1:ECX[31]: running under one */
	bool kvm; /* leaf 0x40000000 says "KVMKVMKVM" */
	bool kvm_pv_eoi; /* KVM_FEATURE_PV_EOI in leaf 0x40000001 */
};

extern struct cpu_features cpu_features;

/* Fill cpu_features (before lapic_init uses it). */
void hypervisor_init(void);
/* One line: what is offered and what the APIC code uses of it. */
void hypervisor_describe(char *buf, unsigned int len);

#endif
