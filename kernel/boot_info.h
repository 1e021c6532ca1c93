/* SPDX-License-Identifier: MIT */
/*
 * struct boot_info: the one hand-off from every boot path (multiboot2 under
 * BIOS or UEFI GRUB, PVH via QEMU -kernel, GNU-EFI direct boot) to kmain().
 * Each entry copies what it needs out of the loader's structures, so nothing
 * the loader left in memory has to survive past kmain()'s first line.
 */
#ifndef KERNEL_BOOT_INFO_H
#define KERNEL_BOOT_INFO_H

#include <stdint.h>

#define BOOT_MMAP_MAX 128
#define BOOT_CMDLINE_MAX 1024

/* Same numbering as the E820 / multiboot2 / PVH memory map types. */
enum boot_mem_type {
	BOOT_MEM_USABLE = 1,
	BOOT_MEM_RESERVED = 2,
	BOOT_MEM_ACPI_RECLAIM = 3,
	BOOT_MEM_ACPI_NVS = 4,
	BOOT_MEM_BAD = 5,
};

struct boot_mem_range {
	uint64_t base;
	uint64_t len;
	uint32_t type; /* enum boot_mem_type */
};

struct boot_info {
	const char *boot_path; /* "multiboot2-bios", "multiboot2-uefi", "pvh", "uefi-direct" */
	char cmdline[BOOT_CMDLINE_MAX];
	uint64_t rsdp; /* physical address of an ACPI RSDP, 0 if the loader gave none */
	uint8_t rsdp_copy[36]; /* where a loader hands the RSDP by value */
	uint32_t mmap_count;
	struct boot_mem_range mmap[BOOT_MMAP_MAX];
};

/* Filled by the boot path before kmain(); never freed. */
extern struct boot_info boot_info;

void kmain(struct boot_info *bi) __attribute__((noreturn));

#endif
