// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "kernel/acpi.h"
#include "kernel/io.h"
#include "kernel/mm.h"
#include "kernel/msi.h"
#include "kernel/pci.h"
#include "kernel/printk.h"
#include "kernel/shell.h"

#define PCI_VENDOR_ID 0x00
#define PCI_COMMAND 0x04
#define PCI_STATUS 0x06
#define PCI_CLASS_REV 0x08
#define PCI_HEADER_TYPE 0x0e
#define PCI_BAR0 0x10
#define PCI_SECONDARY_BUS 0x19
#define PCI_SUBSYSTEM 0x2c
#define PCI_CAP_PTR 0x34

#define PCI_COMMAND_IO (1u << 0)
#define PCI_COMMAND_MEM (1u << 1)
#define PCI_COMMAND_MASTER (1u << 2)
#define PCI_COMMAND_INTX_OFF (1u << 10)
#define PCI_STATUS_CAP_LIST (1u << 4)

#define MSIX_CTRL 2
#define MSIX_TABLE 4
#define MSIX_CTRL_ENABLE (1u << 15)
#define MSIX_CTRL_MASKALL (1u << 14)
#define MSIX_ENTRY_CTRL_MASK 1u

#define CONFIG_ADDRESS 0xcf8
#define CONFIG_DATA 0xcfc

static struct pci_dev devices[PCI_MAX_DEVICES];
static unsigned int n_devices;
static const struct acpi_ecam *ecam;
static bool bus_seen[256];

const char *pci_access_method(void)
{
	return ecam ? "ecam" : "port-io";
}

unsigned int pci_count(void)
{
	return n_devices;
}

struct pci_dev *pci_get(unsigned int i)
{
	return i < n_devices ? &devices[i] : NULL;
}

/* ---- configuration space ---- */

static volatile void *ecam_addr(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
	return (volatile uint8_t *)(uintptr_t)ecam->base +
	       (((uint64_t)(bus - ecam->bus_start) << 20) | (dev << 15) | (fn << 12) | off);
}

static uint32_t cfg_read(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
	if (ecam && bus >= ecam->bus_start && bus <= ecam->bus_end)
		return *(volatile uint32_t *)ecam_addr(bus, dev, fn, off & ~3);
	if (off >= 256)
		return 0xffffffff;
	outl(CONFIG_ADDRESS, (1u << 31) | (bus << 16) | (dev << 11) | (fn << 8) | (off & 0xfc));
	return inl(CONFIG_DATA);
}

static void cfg_write(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off, uint32_t v)
{
	if (ecam && bus >= ecam->bus_start && bus <= ecam->bus_end) {
		*(volatile uint32_t *)ecam_addr(bus, dev, fn, off & ~3) = v;
		return;
	}
	if (off >= 256)
		return;
	outl(CONFIG_ADDRESS, (1u << 31) | (bus << 16) | (dev << 11) | (fn << 8) | (off & 0xfc));
	outl(CONFIG_DATA, v);
}

uint32_t pci_read32(const struct pci_dev *d, uint16_t off)
{
	return cfg_read(d->bus, d->dev, d->fn, off);
}

uint16_t pci_read16(const struct pci_dev *d, uint16_t off)
{
	return pci_read32(d, off & ~3) >> ((off & 2) * 8);
}

uint8_t pci_read8(const struct pci_dev *d, uint16_t off)
{
	return pci_read32(d, off & ~3) >> ((off & 3) * 8);
}

void pci_write32(const struct pci_dev *d, uint16_t off, uint32_t v)
{
	cfg_write(d->bus, d->dev, d->fn, off, v);
}

/* Read-modify-write of the dword: config space has no 16-bit ECAM-less path. */
void pci_write16(const struct pci_dev *d, uint16_t off, uint16_t v)
{
	uint32_t shift = (off & 2) * 8;
	uint32_t dw = pci_read32(d, off & ~3);

	if ((off & ~3) == PCI_COMMAND)
		dw &= 0xffff; /* status bits are write-1-to-clear: write zeros */
	dw = (dw & ~(0xffffu << shift)) | ((uint32_t)v << shift);
	pci_write32(d, off & ~3, dw);
}

uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id, uint8_t start)
{
	uint8_t off;
	int guard = 48; /* a looping list ends here */

	if (!(pci_read16(d, PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return 0;
	off = start ? pci_read8(d, start + 1) : pci_read8(d, PCI_CAP_PTR);
	while (off >= 0x40 && guard--) {
		off &= ~3;
		if (pci_read8(d, off) == id)
			return off;
		off = pci_read8(d, off + 1);
	}
	return 0;
}

/* ---- BARs ---- */

/*
 * Size a BAR by writing all ones and reading back which bits stick
 * (PCI Local Bus 3.0, 6.2.5.1), with decoding off meanwhile so the device
 * never answers at the probe address. Returns the number of BAR slots used.
 */
static int probe_bar(struct pci_dev *d, int i)
{
	uint16_t off = PCI_BAR0 + i * 4;
	uint32_t lo = pci_read32(d, off), lo_mask, hi = 0, hi_mask = 0;
	struct pci_bar *b = &d->bar[i];
	uint64_t mask;

	pci_write32(d, off, 0xffffffff);
	lo_mask = pci_read32(d, off);
	pci_write32(d, off, lo);
	if (!lo_mask || lo_mask == 0xffffffff)
		return 1;
	b->io = lo & 1;
	if (b->io) {
		b->addr = lo & ~3u;
		b->size = (uint16_t) ~(lo_mask & ~3u) + 1;
		return 1;
	}
	b->prefetch = lo & 8;
	b->is64 = ((lo >> 1) & 3) == 2;
	if (b->is64 && i < 5) {
		hi = pci_read32(d, off + 4);
		pci_write32(d, off + 4, 0xffffffff);
		hi_mask = pci_read32(d, off + 4);
		pci_write32(d, off + 4, hi);
	}
	mask = ((uint64_t)hi_mask << 32) | (lo_mask & ~0xfu);
	if (!b->is64)
		mask |= 0xffffffff00000000ULL;
	b->addr = ((uint64_t)hi << 32) | (lo & ~0xfu);
	b->size = ~mask + 1;
	return b->is64 ? 2 : 1;
}

static void probe_bars(struct pci_dev *d, int n)
{
	uint16_t cmd = pci_read16(d, PCI_COMMAND);

	pci_write16(d, PCI_COMMAND, cmd & ~(PCI_COMMAND_IO | PCI_COMMAND_MEM));
	for (int i = 0; i < n;)
		i += probe_bar(d, i);
	pci_write16(d, PCI_COMMAND, cmd);
}

void *pci_map_bar(const struct pci_dev *d, unsigned int bar)
{
	if (bar >= 6 || d->bar[bar].io || !d->bar[bar].addr || !d->bar[bar].size)
		return NULL;
	return ioremap(d->bar[bar].addr, d->bar[bar].size);
}

void pci_enable(const struct pci_dev *d)
{
	uint16_t cmd = pci_read16(d, PCI_COMMAND);

	pci_write16(d, PCI_COMMAND,
		    cmd | PCI_COMMAND_MEM | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_OFF);
}

/* ---- MSI-X ---- */

int pci_msix_enable(struct pci_dev *d)
{
	uint32_t table;
	uint8_t bir;
	uint8_t *base;

	if (!d->msix_cap)
		return -1;
	if (!d->msix_table) {
		table = pci_read32(d, d->msix_cap + MSIX_TABLE);
		bir = table & 7;
		if (bir >= 6 || (uint64_t)(table & ~7u) + d->msix_size * 16ULL > d->bar[bir].size)
			return -1;
		base = pci_map_bar(d, bir);
		if (!base)
			return -1;
		d->msix_table = (volatile uint32_t *)(base + (table & ~7u));
	}
	for (uint16_t i = 0; i < d->msix_size; i++)
		d->msix_table[i * 4 + 3] = MSIX_ENTRY_CTRL_MASK;
	pci_write16(d, d->msix_cap + MSIX_CTRL,
		    (pci_read16(d, d->msix_cap + MSIX_CTRL) | MSIX_CTRL_ENABLE) &
			    ~MSIX_CTRL_MASKALL);
	return 0;
}

void pci_msix_disable(struct pci_dev *d)
{
	if (d->msix_cap)
		pci_write16(d, d->msix_cap + MSIX_CTRL,
			    pci_read16(d, d->msix_cap + MSIX_CTRL) & ~MSIX_CTRL_ENABLE);
}

/*
 * Fixed delivery, edge, physical destination: the LAPIC of @apic_id. The
 * message names 8 bits of APIC ID (SDM 3A 11.11.1), in x2APIC mode too:
 * IDs above 255 would need interrupt remapping, which nothing here sets
 * up (msi_address refuses them).
 */
int pci_msix_route_to(struct pci_dev *d, uint16_t entry, int vector, uint32_t apic_id)
{
	volatile uint32_t *e;
	uint32_t addr;

	if (!d->msix_table || entry >= d->msix_size || vector < 32 || vector > 254 ||
	    !msi_address(apic_id, &addr))
		return -1;
	e = d->msix_table + entry * 4;
	e[3] = MSIX_ENTRY_CTRL_MASK;
	e[0] = addr;
	e[1] = 0;
	e[2] = (uint32_t)vector;
	e[3] = 0;
	return 0;
}

/* ---- enumeration ---- */

static void scan_bus(uint8_t bus);

static void add_function(uint8_t bus, uint8_t dev, uint8_t fn, uint32_t id)
{
	struct pci_dev *d;
	uint32_t cr;

	if (n_devices == PCI_MAX_DEVICES) {
		pr_warn("pci: more than %d functions, %02x:%02x.%x ignored\n", PCI_MAX_DEVICES, bus,
			dev, fn);
		return;
	}
	d = &devices[n_devices++];
	memset(d, 0, sizeof(*d));
	d->segment = ecam ? ecam->segment : 0;
	d->bus = bus;
	d->dev = dev;
	d->fn = fn;
	d->vendor = id & 0xffff;
	d->device = id >> 16;
	cr = pci_read32(d, PCI_CLASS_REV);
	d->revision = cr & 0xff;
	d->prog_if = cr >> 8;
	d->subclass = cr >> 16;
	d->class = cr >> 24;
	d->header_type = pci_read8(d, PCI_HEADER_TYPE) & 0x7f;
	if (d->header_type == 0) {
		uint32_t ss = pci_read32(d, PCI_SUBSYSTEM);

		d->subsys_vendor = ss & 0xffff;
		d->subsys_id = ss >> 16;
		probe_bars(d, 6);
	} else if (d->header_type == 1) {
		probe_bars(d, 2);
	}
	d->msix_cap = pci_find_cap(d, PCI_CAP_MSIX, 0);
	if (d->msix_cap)
		d->msix_size = (pci_read16(d, d->msix_cap + MSIX_CTRL) & 0x7ff) + 1;

	/* PCI-to-PCI bridge: its secondary bus holds more devices */
	if (d->header_type == 1) {
		uint8_t secondary = pci_read8(d, PCI_SECONDARY_BUS);

		if (secondary > bus)
			scan_bus(secondary);
	}
}

static void scan_bus(uint8_t bus)
{
	if (bus_seen[bus])
		return; /* a bridge loop or a duplicate root */
	bus_seen[bus] = true;
	for (uint8_t dev = 0; dev < 32; dev++) {
		uint32_t id = cfg_read(bus, dev, 0, PCI_VENDOR_ID);
		uint8_t fns;

		if ((id & 0xffff) == 0xffff)
			continue;
		fns = (cfg_read(bus, dev, 0, PCI_HEADER_TYPE & ~3) >> 16) & 0x80 ? 8 : 1;
		for (uint8_t fn = 0; fn < fns; fn++) {
			id = cfg_read(bus, dev, fn, PCI_VENDOR_ID);
			if ((id & 0xffff) != 0xffff)
				add_function(bus, dev, fn, id);
		}
	}
}

static const char *cap_name(uint8_t id)
{
	switch (id) {
	case 0x01:
		return "pm";
	case PCI_CAP_MSI:
		return "msi";
	case PCI_CAP_VENDOR:
		return "vendor";
	case PCI_CAP_PCIE:
		return "pcie";
	case PCI_CAP_MSIX:
		return "msix";
	default:
		return NULL;
	}
}

static void print_caps(const struct pci_dev *d)
{
	uint8_t off;
	int guard = 48;

	if (!(pci_read16(d, PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return;
	printf("    caps:");
	for (off = pci_read8(d, PCI_CAP_PTR); off >= 0x40 && guard--; off = pci_read8(d, off + 1)) {
		uint8_t id = pci_read8(d, off & ~3);
		const char *name = cap_name(id);

		off &= ~3;
		if (name)
			printf(" %s@%02x", name, off);
		else
			printf(" %02x@%02x", id, off);
		if (id == PCI_CAP_MSIX)
			printf("(%u)", d->msix_size);
	}
	printf("\n");
}

static void print_dev(const struct pci_dev *d)
{
	printf("%04x:%02x:%02x.%x %04x:%04x class %02x.%02x.%02x rev %02x", d->segment, d->bus,
	       d->dev, d->fn, d->vendor, d->device, d->class, d->subclass, d->prog_if, d->revision);
	if (d->header_type == 0)
		printf(" subsys %04x:%04x", d->subsys_vendor, d->subsys_id);
	else
		printf(" header %u", d->header_type);
	printf("\n");
	for (int i = 0; i < 6; i++) {
		const struct pci_bar *b = &d->bar[i];

		if (!b->size)
			continue;
		printf("    bar%d: %s %#llx size %#llx%s%s\n", i, b->io ? "io " : "mem",
		       (unsigned long long)b->addr, (unsigned long long)b->size,
		       b->is64 ? " 64-bit" : "", b->prefetch ? " prefetchable" : "");
	}
	print_caps(d);
}

static int cmd_lspci(int argc, char **argv)
{
	if (argc > 1)
		return shell_error("lspci: unexpected argument '%s'", argv[1]);
	printf("%u functions, config access %s\n", n_devices, pci_access_method());
	for (unsigned int i = 0; i < n_devices; i++)
		print_dev(&devices[i]);
	return 0;
}

static const struct shell_cmd lspci_cmd = {
	.name = "lspci",
	.help = "PCI functions: ids, class, BARs, capabilities",
	.run = cmd_lspci,
};

void pci_init(void)
{
	const struct acpi_info *a = acpi_get();
	uint32_t host;

	for (unsigned int i = 0; i < a->n_ecam; i++)
		if (a->ecam[i].segment == 0 && a->ecam[i].bus_start == 0)
			ecam = &a->ecam[i];
	if (ecam && !ioremap(ecam->base, (uint64_t)(ecam->bus_end + 1) << 20))
		ecam = NULL;

	/* A multi-function host bridge at 00:00 means one root bus per function. */
	host = cfg_read(0, 0, 0, PCI_HEADER_TYPE & ~3);
	if ((host >> 16) & 0x80) {
		for (uint8_t fn = 0; fn < 8; fn++)
			if ((cfg_read(0, 0, fn, PCI_VENDOR_ID) & 0xffff) != 0xffff)
				scan_bus(fn);
	} else {
		scan_bus(0);
	}
	shell_register(&lspci_cmd);
}
