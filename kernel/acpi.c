// SPDX-License-Identifier: MIT
#include <string.h>

#include "kernel/acpi.h"
#include "kernel/mm.h"
#include "kernel/printk.h"

struct acpi_rsdp {
	char signature[8];
	uint8_t checksum;
	char oem[6];
	uint8_t revision;
	uint32_t rsdt;
	uint32_t length; /* revision >= 2 from here */
	uint64_t xsdt;
	uint8_t ext_checksum;
	uint8_t reserved[3];
} __attribute__((packed));

struct acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem[6];
	char oem_table[8];
	uint32_t oem_revision;
	uint32_t creator;
	uint32_t creator_revision;
} __attribute__((packed));

/* FADT field offsets (ACPI 6.4 5.2.9) */
#define FADT_DSDT 40
#define FADT_PM1A_CNT 64
#define FADT_PM1B_CNT 68
#define FADT_FLAGS 112
#define FADT_RESET_REG 116
#define FADT_RESET_VALUE 128
#define FADT_X_DSDT 140
#define FADT_FLAG_RESET_REG_SUP (1u << 10)
#define GAS_SPACE_IO 1

#define MAX_TABLE_LEN (16u << 20)

static struct acpi_info info;

const struct acpi_info *acpi_get(void)
{
	return &info;
}

bool acpi_checksum_ok(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	for (uint32_t i = 0; i < len; i++)
		sum += b[i];
	return sum == 0;
}

/*
 * The DSDT declares Name (_S5, Package () { typ_a, typ_b, ... }). We look
 * for the name followed by PackageOp, skip PkgLength and NumElements, and
 * read the first two integer elements (ZeroOp, OneOp or BytePrefix n).
 */
static const uint8_t *aml_integer(const uint8_t *p, const uint8_t *end, uint8_t *v)
{
	if (p >= end)
		return NULL;
	if (*p == 0x00 || *p == 0x01) { /* ZeroOp, OneOp */
		*v = *p;
		return p + 1;
	}
	if (*p == 0x0a && p + 1 < end) { /* BytePrefix */
		*v = p[1];
		return p + 2;
	}
	return NULL;
}

bool acpi_find_s5(const uint8_t *aml, uint32_t len, uint8_t *typ_a, uint8_t *typ_b)
{
	const uint8_t *end = aml + len;

	for (const uint8_t *p = aml; p + 4 <= end; p++) {
		const uint8_t *q;

		if (memcmp(p, "_S5_", 4))
			continue;
		q = p + 4;
		if (q >= end || *q != 0x12) /* PackageOp */
			continue;
		q++;
		if (q >= end)
			return false;
		q += 1 + (*q >> 6); /* PkgLength: lead byte plus 0..3 more */
		q++; /* NumElements */
		q = aml_integer(q, end, typ_a);
		if (!q || !aml_integer(q, end, typ_b))
			return false;
		return true;
	}
	return false;
}

/* Tables live in RAM the firmware reserved; below 4 GiB it is mapped. */
static const struct acpi_header *map_table(uint64_t pa)
{
	const struct acpi_header *h;

	if (!pa || !ioremap(pa, sizeof(*h)))
		return NULL;
	h = (const void *)(uintptr_t)pa;
	if (h->length < sizeof(*h) || h->length > MAX_TABLE_LEN || !ioremap(pa, h->length))
		return NULL;
	if (!acpi_checksum_ok(h, h->length)) {
		pr_warn("acpi: bad checksum in %.4s at %#llx\n", h->signature,
			(unsigned long long)pa);
		return NULL;
	}
	return h;
}

static bool rsdp_valid(const struct acpi_rsdp *r)
{
	if (memcmp(r->signature, "RSD PTR ", 8) || !acpi_checksum_ok(r, 20))
		return false;
	return r->revision < 2 ||
	       (r->length >= sizeof(*r) && r->length < 4096 && acpi_checksum_ok(r, r->length));
}

/* ACPI 6.4 5.2.5.1: the first KiB of the EBDA, then 0xe0000-0xfffff. */
static uint64_t find_rsdp_bios(void)
{
	uint64_t ebda = (uint64_t)(*(const uint16_t *)(uintptr_t)0x40e) << 4;

	if (ebda >= 0x80000 && ebda < 0xa0000)
		for (uint64_t a = ebda; a < ebda + 1024; a += 16)
			if (rsdp_valid((const void *)(uintptr_t)a))
				return a;
	for (uint64_t a = 0xe0000; a < 0x100000; a += 16)
		if (rsdp_valid((const void *)(uintptr_t)a))
			return a;
	return 0;
}

static void parse_mcfg(const struct acpi_header *h)
{
	const uint8_t *p = (const uint8_t *)h + 44;
	const uint8_t *end = (const uint8_t *)h + h->length;

	for (; p + 16 <= end && info.n_ecam < ACPI_MAX_ECAM; p += 16) {
		struct acpi_ecam *e = &info.ecam[info.n_ecam];

		memcpy(&e->base, p, 8);
		memcpy(&e->segment, p + 8, 2);
		e->bus_start = p[10];
		e->bus_end = p[11];
		if (e->bus_end >= e->bus_start)
			info.n_ecam++;
	}
}

/* 44 bytes: the header, the local APIC address and flags (5.2.12) */
static void parse_madt(const struct acpi_header *h)
{
	if (h->length >= 44)
		acpi_parse_madt(&info, (const uint8_t *)h + 44, h->length - 44);
}

void acpi_isa_irq(uint8_t irq, uint32_t *gsi, uint16_t *flags)
{
	*gsi = irq;
	*flags = 0; /* "conforms to the bus": ISA is edge, active high */
	for (unsigned int i = 0; i < info.n_overrides; i++) {
		if (info.override[i].irq == irq) {
			*gsi = info.override[i].gsi;
			*flags = info.override[i].flags;
		}
	}
}

static void parse_dsdt(uint64_t pa)
{
	const struct acpi_header *d = map_table(pa);

	if (!d)
		return;
	info.s5_valid = acpi_find_s5((const uint8_t *)(d + 1), d->length - sizeof(*d),
				     &info.slp_typ_a, &info.slp_typ_b);
}

static void parse_fadt(const struct acpi_header *h)
{
	const uint8_t *f = (const uint8_t *)h;
	uint32_t dsdt32 = 0, pm1a = 0, pm1b = 0, flags = 0;
	uint64_t dsdt = 0;

	if (h->length < FADT_FLAGS + 4)
		return;
	memcpy(&dsdt32, f + FADT_DSDT, 4);
	memcpy(&pm1a, f + FADT_PM1A_CNT, 4);
	memcpy(&pm1b, f + FADT_PM1B_CNT, 4);
	memcpy(&flags, f + FADT_FLAGS, 4);
	info.pm1a_cnt = pm1a <= 0xffff ? pm1a : 0;
	info.pm1b_cnt = pm1b <= 0xffff ? pm1b : 0;
	if (h->length >= FADT_RESET_VALUE + 1 && (flags & FADT_FLAG_RESET_REG_SUP) &&
	    f[FADT_RESET_REG] == GAS_SPACE_IO) {
		uint64_t addr;

		memcpy(&addr, f + FADT_RESET_REG + 4, 8);
		if (addr && addr <= 0xffff) {
			info.reset_valid = true;
			info.reset_port = addr;
			info.reset_value = f[FADT_RESET_VALUE];
		}
	}
	if (h->length >= FADT_X_DSDT + 8)
		memcpy(&dsdt, f + FADT_X_DSDT, 8);
	parse_dsdt(dsdt ? dsdt : dsdt32);
}

static void parse_table(uint64_t pa)
{
	const struct acpi_header *h = map_table(pa);

	if (!h)
		return;
	info.n_tables++;
	if (!memcmp(h->signature, "MCFG", 4))
		parse_mcfg(h);
	else if (!memcmp(h->signature, "APIC", 4))
		parse_madt(h);
	else if (!memcmp(h->signature, "FACP", 4))
		parse_fadt(h);
}

void acpi_init(const struct boot_info *bi)
{
	const struct acpi_rsdp *rsdp;
	const struct acpi_header *root;
	bool xsdt;
	uint32_t entry_size, n;

	info.rsdp = bi->rsdp && rsdp_valid((const void *)(uintptr_t)bi->rsdp) ? bi->rsdp :
										find_rsdp_bios();
	if (!info.rsdp) {
		pr_warn("acpi: no RSDP found\n");
		return;
	}
	rsdp = (const void *)(uintptr_t)info.rsdp;
	info.revision = rsdp->revision;
	memcpy(info.oem, rsdp->oem, 6);
	xsdt = rsdp->revision >= 2 && rsdp->xsdt;
	root = map_table(xsdt ? rsdp->xsdt : rsdp->rsdt);
	if (!root) {
		pr_warn("acpi: no valid %s\n", xsdt ? "XSDT" : "RSDT");
		return;
	}
	info.present = true;
	entry_size = xsdt ? 8 : 4;
	n = (root->length - sizeof(*root)) / entry_size;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t pa = 0;

		memcpy(&pa, (const uint8_t *)(root + 1) + i * entry_size, entry_size);
		parse_table(pa);
	}
}
