/* SPDX-License-Identifier: MIT */
/*
 * Where an MSI/MSI-X message goes, and which CPU takes a steered vector:
 * pure functions, shared by pci.c, smp.c and their unit test.
 */
#ifndef KERNEL_MSI_H
#define KERNEL_MSI_H

#include <stdbool.h>
#include <stdint.h>

#define MSI_ADDRESS_BASE 0xfee00000u
#define MSI_DEST_SHIFT 12
#define MSI_DEST_MAX 0xffu

/*
 * The message address of a fixed interrupt to the CPU with APIC id
 * @apic_id, physical destination mode, no redirection hint: 0xFEE in bits
 * 31:20, the id in 19:12 (SDM 3A 11.11.1). An id above 255 needs
 * interrupt remapping, which ringside does not set up: false.
 */
static inline bool msi_address(uint32_t apic_id, uint32_t *addr)
{
	if (apic_id > MSI_DEST_MAX)
		return false;
	*addr = MSI_ADDRESS_BASE | apic_id << MSI_DEST_SHIFT;
	return true;
}

/*
 * The next CPU after @cpu, wrapping around, whose bit is set in @online
 * (bit i: CPU i, @n CPUs, at most 64); @cpu itself when no other is.
 */
static inline unsigned int msi_next_online(uint64_t online, unsigned int n, unsigned int cpu)
{
	for (unsigned int i = 1; i < n && n <= 64; i++) {
		unsigned int c = (cpu + i) % n;

		if (online >> c & 1)
			return c;
	}
	return cpu;
}

#endif
