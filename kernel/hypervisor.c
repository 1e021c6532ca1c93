// SPDX-License-Identifier: MIT
/*
 * CPUID feature bits (SDM 2A, CPUID, "Feature Information") and KVM's
 * leaves (Linux Documentation/virt/kvm/x86/cpuid.rst): a hypervisor
 * answers leaf 0x40000000 with its signature in EBX, ECX, EDX and the
 * largest leaf it implements in EAX; KVM puts its paravirtual features
 * in EAX of leaf 0x40000001.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/hypervisor.h"
#include "kernel/io.h"
#include "kernel/lapic.h"

#define CPUID1_ECX_X2APIC (1u << 21)
#define CPUID1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID1_ECX_HYPERVISOR (1u << 31)
#define CPUID_HV_BASE 0x40000000u
#define CPUID_KVM_FEATURES 0x40000001u
#define KVM_FEATURE_PV_EOI 6

struct cpu_features cpu_features;

void hypervisor_init(void)
{
	uint32_t r[4];
	char sig[13];

	cpuid(0, 0, r);
	if (r[0] < 1)
		return;
	cpuid(1, 0, r);
	cpu_features.x2apic = r[2] & CPUID1_ECX_X2APIC;
	cpu_features.tsc_deadline = r[2] & CPUID1_ECX_TSC_DEADLINE;
	cpu_features.hypervisor = r[2] & CPUID1_ECX_HYPERVISOR;
	/* the hypervisor leaves mean nothing on bare metal: ask only under one */
	if (!cpu_features.hypervisor)
		return;
	cpuid(CPUID_HV_BASE, 0, r);
	memcpy(sig, &r[1], 4);
	memcpy(sig + 4, &r[2], 4);
	memcpy(sig + 8, &r[3], 4);
	sig[12] = '\0';
	/* "KVMKVMKVM\0\0\0": the string ends at the first NUL */
	cpu_features.kvm = !strcmp(sig, "KVMKVMKVM");
	if (!cpu_features.kvm || r[0] < CPUID_KVM_FEATURES)
		return;
	cpuid(CPUID_KVM_FEATURES, 0, r);
	cpu_features.kvm_pv_eoi = r[0] & (1u << KVM_FEATURE_PV_EOI);
}

void hypervisor_describe(char *buf, unsigned int len)
{
	const struct cpu_features *f = &cpu_features;

	snprintf(buf, len, "%s; offered:%s%s%s; apic %s, eoi %s, timer %s",
		 f->kvm	       ? "KVM" :
		 f->hypervisor ? "hypervisor (not KVM)" :
				 "no hypervisor",
		 f->x2apic ? " x2apic" : "", f->tsc_deadline ? " tsc-deadline" : "",
		 f->kvm_pv_eoi ? " pv-eoi" : "", lapic_mode_name(), lapic_eoi_name(),
		 lapic_timer_name());
}
