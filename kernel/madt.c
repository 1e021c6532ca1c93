// SPDX-License-Identifier: MIT
/*
 * The MADT's interrupt controller structures (ACPI 6.4 5.2.12): the
 * enabled CPUs' APIC ids, the I/O APICs and the ISA overrides. Pure
 * parsing of firmware data, so the unit tests feed it hostile tables:
 * every structure is length-checked against the table, every list is
 * bounded, and a CPU listed twice counts once.
 */
#include <stdbool.h>
#include <string.h>

#include "kernel/acpi.h"

/* I/O APIC structure (ACPI 6.4 5.2.12.3): id, reserved, address, GSI base */
static void madt_ioapic(struct acpi_info *ai, const uint8_t *p)
{
	struct acpi_ioapic *io;

	if (ai->n_ioapics++ >= ACPI_MAX_IOAPICS)
		return;
	io = &ai->ioapic[ai->n_ioapics - 1];
	io->id = p[2];
	memcpy(&io->addr, p + 4, 4);
	memcpy(&io->gsi_base, p + 8, 4);
}

/* Interrupt source override (5.2.12.5): bus 0 (ISA), source, GSI, flags */
static void madt_override(struct acpi_info *ai, const uint8_t *p)
{
	struct acpi_irq_override *o;

	if (p[2] != 0 || ai->n_overrides >= ACPI_MAX_OVERRIDES)
		return;
	o = &ai->override[ai->n_overrides++];
	o->irq = p[3];
	memcpy(&o->gsi, p + 4, 4);
	memcpy(&o->flags, p + 8, 2);
}

/*
 * An enabled processor's APIC id. A firmware may list a CPU twice (once
 * as a local APIC, once as an x2APIC, 5.2.12.12): the id counts once.
 * 0xffffffff is the x2APIC broadcast, never a CPU's.
 */
static void madt_cpu(struct acpi_info *ai, uint32_t apic_id)
{
	if (apic_id == 0xffffffffu)
		return;
	for (unsigned int i = 0; i < ai->n_cpu_ids; i++)
		if (ai->cpu_apic_id[i] == apic_id)
			return;
	ai->n_cpus++;
	if (ai->n_cpu_ids < ACPI_MAX_CPUS)
		ai->cpu_apic_id[ai->n_cpu_ids++] = apic_id;
}

/* Processor local APIC (5.2.12.2): UID, APIC id, flags; bit 0 enabled */
static void madt_lapic(struct acpi_info *ai, const uint8_t *p)
{
	uint32_t flags;

	memcpy(&flags, p + 4, 4);
	if (flags & 1)
		madt_cpu(ai, p[3]);
}

/* Processor local x2APIC (5.2.12.12): reserved, x2APIC id, flags, UID */
static void madt_x2apic(struct acpi_info *ai, const uint8_t *p)
{
	uint32_t id, flags;

	memcpy(&id, p + 4, 4);
	memcpy(&flags, p + 8, 4);
	if (flags & 1)
		madt_cpu(ai, id);
}

void acpi_parse_madt(struct acpi_info *ai, const uint8_t *p, uint32_t len)
{
	const uint8_t *end = p + len;

	while (end - p >= 2 && p[1] >= 2 && p[1] <= end - p) {
		if (p[0] == 0 && p[1] >= 8)
			madt_lapic(ai, p);
		else if (p[0] == 1 && p[1] >= 12)
			madt_ioapic(ai, p);
		else if (p[0] == 2 && p[1] >= 10)
			madt_override(ai, p);
		else if (p[0] == 9 && p[1] >= 16)
			madt_x2apic(ai, p);
		p += p[1];
	}
}
