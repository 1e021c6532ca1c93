/* SPDX-License-Identifier: MIT */
/*
 * The ACPI tables ringside reads (ACPI 6.4 ch. 5): RSDP, RSDT/XSDT, MCFG
 * for PCI ECAM, MADT for the CPUs and APICs, FADT (and DSDT's \_S5) for
 * reset and poweroff. Everything read is checksummed and length-checked.
 */
#ifndef KERNEL_ACPI_H
#define KERNEL_ACPI_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/boot_info.h"

#define ACPI_MAX_ECAM 4

struct acpi_ecam {
	uint64_t base;
	uint16_t segment;
	uint8_t bus_start, bus_end;
};

struct acpi_info {
	bool present;
	uint64_t rsdp;
	uint8_t revision;
	char oem[7];
	unsigned int n_tables;
	unsigned int n_cpus; /* enabled local APICs in the MADT */
	unsigned int n_ioapics;
	unsigned int n_ecam;
	struct acpi_ecam ecam[ACPI_MAX_ECAM];
	uint16_t pm1a_cnt, pm1b_cnt; /* I/O ports, 0 if none */
	bool s5_valid;
	uint8_t slp_typ_a, slp_typ_b;
	bool reset_valid; /* FADT reset register, I/O space only */
	uint16_t reset_port;
	uint8_t reset_value;
};

void acpi_init(const struct boot_info *bi);
const struct acpi_info *acpi_get(void);

/* Pure parsers, also used by the unit tests. */
bool acpi_checksum_ok(const void *p, uint32_t len);
/* SLP_TYPa/b from the \_S5 package in a DSDT body; false if not found. */
bool acpi_find_s5(const uint8_t *aml, uint32_t len, uint8_t *typ_a, uint8_t *typ_b);

#endif
