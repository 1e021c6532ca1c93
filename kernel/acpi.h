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
#define ACPI_MAX_IOAPICS 4
#define ACPI_MAX_OVERRIDES 16
/* Local APICs kept from the MADT; more are counted in n_cpus, not started. */
#define ACPI_MAX_CPUS 64
/* MPS INTI flags of an interrupt source override (ACPI 6.4 5.2.12.5) */
#define ACPI_IRQ_POLARITY_MASK 0x3
#define ACPI_IRQ_ACTIVE_LOW 0x3
#define ACPI_IRQ_TRIGGER_MASK 0xc
#define ACPI_IRQ_LEVEL 0xc

struct acpi_ecam {
	uint64_t base;
	uint16_t segment;
	uint8_t bus_start, bus_end;
};

/* An I/O APIC (MADT type 1): its registers and the first GSI it serves. */
struct acpi_ioapic {
	uint8_t id;
	uint32_t addr;
	uint32_t gsi_base;
};

/* An ISA IRQ wired to another GSI or polarity/trigger (MADT type 2). */
struct acpi_irq_override {
	uint8_t irq;
	uint32_t gsi;
	uint16_t flags; /* ACPI_IRQ_* */
};

struct acpi_info {
	bool present;
	uint64_t rsdp;
	uint8_t revision;
	char oem[7];
	unsigned int n_tables;
	unsigned int n_cpus; /* enabled local APICs in the MADT, distinct ids */
	unsigned int n_cpu_ids; /* the first ACPI_MAX_CPUS of them, in MADT order */
	uint32_t cpu_apic_id[ACPI_MAX_CPUS];
	unsigned int n_ioapics; /* all in the MADT; the first ACPI_MAX_IOAPICS kept */
	struct acpi_ioapic ioapic[ACPI_MAX_IOAPICS];
	unsigned int n_overrides;
	struct acpi_irq_override override[ACPI_MAX_OVERRIDES];
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

/*
 * Where ISA @irq arrives: its GSI and flags (ACPI_IRQ_*), from an
 * override, else the same number, edge, active high (ISA's own).
 */
void acpi_isa_irq(uint8_t irq, uint32_t *gsi, uint16_t *flags);

/* Pure parsers, also used by the unit tests. */
/*
 * The MADT's entries after its 44-byte header (@body, @len bytes) into
 * @info: enabled local APICs and x2APICs, I/O APICs, ISA overrides.
 */
void acpi_parse_madt(struct acpi_info *info, const uint8_t *body, uint32_t len);
bool acpi_checksum_ok(const void *p, uint32_t len);
/* SLP_TYPa/b from the \_S5 package in a DSDT body; false if not found. */
bool acpi_find_s5(const uint8_t *aml, uint32_t len, uint8_t *typ_a, uint8_t *typ_b);

#endif
