// SPDX-License-Identifier: MIT
/*
 * I/O APIC redirection entries (Intel 82093AA I/O APIC datasheet, 3.0
 * and 3.2.4): registers are reached through an index (IOREGSEL, offset 0)
 * and a window (IOWIN, offset 0x10); entry n is the 64-bit pair of
 * registers 0x10 + 2n (vector, delivery, polarity, trigger, mask) and
 * 0x11 + 2n (destination APIC ID in bits 63:56). The version register
 * (1) holds the highest entry in bits 23:16.
 */
#include "kernel/acpi.h"
#include "kernel/io.h"
#include "kernel/ioapic.h"
#include "kernel/lapic.h"
#include "kernel/mm.h"

#define IOREGSEL 0x00
#define IOWIN 0x10
#define IOAPIC_VER 0x01
#define IOAPIC_REDIR 0x10
#define REDIR_ACTIVE_LOW (1u << 13)
#define REDIR_LEVEL (1u << 15)
#define REDIR_MASKED (1u << 16)

static uint32_t ioapic_read(volatile uint8_t *io, uint32_t reg)
{
	mmio_write32(io + IOREGSEL, reg);
	return mmio_read32(io + IOWIN);
}

static void ioapic_write(volatile uint8_t *io, uint32_t reg, uint32_t v)
{
	mmio_write32(io + IOREGSEL, reg);
	mmio_write32(io + IOWIN, v);
}

/* The I/O APIC serving @gsi, its registers mapped, and the entry's index. */
static volatile uint8_t *ioapic_for(uint32_t gsi, uint32_t *entry)
{
	const struct acpi_info *a = acpi_get();
	unsigned int n = a->n_ioapics < ACPI_MAX_IOAPICS ? a->n_ioapics : ACPI_MAX_IOAPICS;

	for (unsigned int i = 0; i < n; i++) {
		volatile uint8_t *io;
		uint32_t last;

		if (gsi < a->ioapic[i].gsi_base || !(io = ioremap(a->ioapic[i].addr, 4096)))
			continue;
		last = ioapic_read(io, IOAPIC_VER) >> 16 & 0xff;
		if (gsi - a->ioapic[i].gsi_base <= last) {
			*entry = gsi - a->ioapic[i].gsi_base;
			return io;
		}
	}
	return NULL;
}

int ioapic_route_isa(uint8_t irq, int vector)
{
	volatile uint8_t *io;
	uint32_t gsi, entry, low;
	uint16_t flags;

	acpi_isa_irq(irq, &gsi, &flags);
	if ((flags & ACPI_IRQ_TRIGGER_MASK) == ACPI_IRQ_LEVEL || vector < 32 || vector > 254)
		return -1;
	io = ioapic_for(gsi, &entry);
	if (!io)
		return -1;
	/* fixed delivery, physical destination, edge */
	low = (uint32_t)vector;
	if ((flags & ACPI_IRQ_POLARITY_MASK) == ACPI_IRQ_ACTIVE_LOW)
		low |= REDIR_ACTIVE_LOW;
	/* masked while the destination changes, then unmasked with the vector */
	ioapic_write(io, IOAPIC_REDIR + 2 * entry, REDIR_MASKED);
	ioapic_write(io, IOAPIC_REDIR + 2 * entry + 1, (lapic_id() & 0xff) << 24);
	ioapic_write(io, IOAPIC_REDIR + 2 * entry, low);
	return 0;
}
