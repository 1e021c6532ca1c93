// SPDX-License-Identifier: MIT
/*
 * From the loader's structures to struct boot_info. Runs first in 64-bit
 * mode, on the boot stack, with nothing initialised: it copies what the
 * loader handed over (memory map, command line, RSDP) into the kernel's
 * own .bss so the loader's memory may be reused, then calls kmain().
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/boot_info.h"

#define MB2_BOOT_MAGIC 0x36d76289 /* Multiboot2 spec 3.3: EAX at entry */
#define PVH_START_MAGIC 0x336ec578

/* Multiboot2 spec 3.6: boot information tags. */
enum mb2_tag_type {
	MB2_TAG_END = 0,
	MB2_TAG_CMDLINE = 1,
	MB2_TAG_MMAP = 6,
	MB2_TAG_EFI32 = 11,
	MB2_TAG_EFI64 = 12,
	MB2_TAG_ACPI_OLD = 14,
	MB2_TAG_ACPI_NEW = 15,
	MB2_TAG_EFI_MMAP = 17,
};

struct mb2_tag {
	uint32_t type;
	uint32_t size;
};

struct mb2_mmap_entry {
	uint64_t base;
	uint64_t len;
	uint32_t type;
	uint32_t reserved;
};

/* Xen public/arch-x86/hvm/start_info.h: the PVH boot ABI, version 1. */
struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_memmap_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

struct boot_info boot_info;

void boot_entry(uint32_t magic, uint32_t info) __attribute__((noreturn));

static void add_range(struct boot_info *bi, uint64_t base, uint64_t len, uint32_t type)
{
	if (bi->mmap_count >= BOOT_MMAP_MAX)
		return;
	bi->mmap[bi->mmap_count].base = base;
	bi->mmap[bi->mmap_count].len = len;
	bi->mmap[bi->mmap_count].type = type;
	bi->mmap_count++;
}

static void copy_cmdline(struct boot_info *bi, const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n >= sizeof(bi->cmdline))
		n = sizeof(bi->cmdline) - 1;
	memcpy(bi->cmdline, s, n);
	bi->cmdline[n] = '\0';
}

static void copy_rsdp(struct boot_info *bi, const void *p, size_t len)
{
	if (len > sizeof(bi->rsdp_copy))
		len = sizeof(bi->rsdp_copy);
	memcpy(bi->rsdp_copy, p, len);
	bi->rsdp = (uint64_t)(uintptr_t)bi->rsdp_copy;
}

static void parse_mb2_mmap(struct boot_info *bi, const struct mb2_tag *tag)
{
	const uint8_t *p = (const uint8_t *)tag + 16;
	const uint8_t *end = (const uint8_t *)tag + tag->size;
	uint32_t entry_size = ((const uint32_t *)tag)[2];

	if (entry_size < sizeof(struct mb2_mmap_entry))
		return;
	for (; p + entry_size <= end; p += entry_size) {
		const struct mb2_mmap_entry *e = (const void *)p;

		add_range(bi, e->base, e->len, e->type);
	}
}

static void parse_multiboot2(struct boot_info *bi, const uint8_t *info)
{
	uint32_t total = *(const uint32_t *)info;
	const uint8_t *p = info + 8;
	bool efi = false;

	while (p + sizeof(struct mb2_tag) <= info + total) {
		const struct mb2_tag *tag = (const void *)p;

		if (tag->type == MB2_TAG_END || tag->size < sizeof(*tag))
			break;
		switch (tag->type) {
		case MB2_TAG_CMDLINE:
			copy_cmdline(bi, (const char *)(tag + 1), tag->size - sizeof(*tag));
			break;
		case MB2_TAG_MMAP:
			parse_mb2_mmap(bi, tag);
			break;
		case MB2_TAG_ACPI_OLD:
			if (!bi->rsdp) /* the new one wins when both are there */
				copy_rsdp(bi, tag + 1, tag->size - sizeof(*tag));
			break;
		case MB2_TAG_ACPI_NEW:
			copy_rsdp(bi, tag + 1, tag->size - sizeof(*tag));
			break;
		case MB2_TAG_EFI32:
		case MB2_TAG_EFI64:
		case MB2_TAG_EFI_MMAP:
			efi = true;
			break;
		}
		p += (tag->size + 7) & ~7u;
	}
	bi->boot_path = efi ? "multiboot2-uefi" : "multiboot2-bios";
}

static void parse_pvh(struct boot_info *bi, const struct hvm_start_info *si)
{
	bi->boot_path = "pvh";
	if (si->cmdline_paddr)
		copy_cmdline(bi, (const char *)(uintptr_t)si->cmdline_paddr, BOOT_CMDLINE_MAX);
	bi->rsdp = si->rsdp_paddr;
	if (si->version >= 1 && si->memmap_paddr) {
		const struct hvm_memmap_entry *e = (const void *)(uintptr_t)si->memmap_paddr;

		for (uint32_t i = 0; i < si->memmap_entries; i++)
			add_range(bi, e[i].addr, e[i].size, e[i].type);
	}
}

void boot_entry(uint32_t magic, uint32_t info)
{
	struct boot_info *bi = &boot_info;

	if (magic == MB2_BOOT_MAGIC)
		parse_multiboot2(bi, (const uint8_t *)(uintptr_t)info);
	else if (magic == PVH_START_MAGIC)
		parse_pvh(bi, (const struct hvm_start_info *)(uintptr_t)info);
	else
		bi->boot_path = "unknown";
	kmain(bi);
}

void boot_entry_efi(const struct boot_info *from) __attribute__((noreturn));

/*
 * From the GNU-EFI loader (boot/efi_main.c via efi_handoff_entry). It filled
 * a struct boot_info in its own memory, which the memory map now calls
 * usable: copy it before anything can allocate. Pointers in it are the
 * loader's, so the boot path string is set here, and counts are clamped
 * rather than trusted.
 */
void boot_entry_efi(const struct boot_info *from)
{
	struct boot_info *bi = &boot_info;

	memcpy(bi, from, sizeof(*bi));
	bi->boot_path = "uefi-direct";
	bi->cmdline[sizeof(bi->cmdline) - 1] = '\0';
	if (bi->mmap_count > BOOT_MMAP_MAX)
		bi->mmap_count = BOOT_MMAP_MAX;
	kmain(bi);
}
