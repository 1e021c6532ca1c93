/* SPDX-License-Identifier: MIT */
/*
 * PCI: configuration space (ECAM from the ACPI MCFG, else port 0xcf8),
 * enumeration of every bus behind every bridge, BAR decoding and sizing,
 * capabilities, MSI-X. The firmware has assigned buses and BARs; we read
 * them and never move anything.
 */
#ifndef KERNEL_PCI_H
#define KERNEL_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_MAX_DEVICES 64

#define PCI_CAP_MSI 0x05
#define PCI_CAP_VENDOR 0x09
#define PCI_CAP_PCIE 0x10
#define PCI_CAP_MSIX 0x11

struct pci_bar {
	uint64_t addr; /* 0 if the firmware left it unassigned */
	uint64_t size;
	bool io;
	bool is64;
	bool prefetch;
};

struct pci_dev {
	uint16_t segment;
	uint8_t bus, dev, fn;
	uint16_t vendor, device;
	uint16_t subsys_vendor, subsys_id;
	uint8_t class, subclass, prog_if, revision;
	uint8_t header_type; /* without the multi-function bit */
	struct pci_bar bar[6];
	/* MSI-X, when present (msix_cap != 0) */
	uint8_t msix_cap;
	uint16_t msix_size;
	volatile uint32_t *msix_table;
};

void pci_init(void);
unsigned int pci_count(void);
struct pci_dev *pci_get(unsigned int i);

uint8_t pci_read8(const struct pci_dev *d, uint16_t off);
uint16_t pci_read16(const struct pci_dev *d, uint16_t off);
uint32_t pci_read32(const struct pci_dev *d, uint16_t off);
void pci_write16(const struct pci_dev *d, uint16_t off, uint16_t v);
void pci_write32(const struct pci_dev *d, uint16_t off, uint32_t v);

/* Offset of the first capability @id at or after @start (0: list head), or 0. */
uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id, uint8_t start);

/* Memory space and bus mastering on (DMA and MSI-X need both). */
void pci_enable(const struct pci_dev *d);

/* Map a memory BAR (uncached). NULL for I/O or unassigned BARs. */
void *pci_map_bar(const struct pci_dev *d, unsigned int bar);

/*
 * MSI-X (PCI Local Bus 3.0, 6.8.2): map the table, mask every entry and
 * enable the function. Then route entries to LAPIC vectors one by one.
 */
int pci_msix_enable(struct pci_dev *d);
void pci_msix_disable(struct pci_dev *d);
/* Entry @entry to @vector on the CPU with APIC id @apic_id; -1 also for an id above 255. */
int pci_msix_route_to(struct pci_dev *d, uint16_t entry, int vector, uint32_t apic_id);

/* "ecam" or "port-io" */
const char *pci_access_method(void);

#endif
