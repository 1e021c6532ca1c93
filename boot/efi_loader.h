/* SPDX-License-Identifier: MIT */
/*
 * The GNU-EFI loader (build/ringside.efi): a UEFI application that carries
 * the kernel ELF, places its segments, exits boot services and enters the
 * kernel at efi_handoff_entry (boot/entry.S) with a struct boot_info.
 * Built by boot/efi.mk with the gnu-efi headers, never linked into the kernel.
 */
#ifndef BOOT_EFI_LOADER_H
#define BOOT_EFI_LOADER_H

#include <efi.h>
#include <stddef.h>

#include "kernel/boot_info.h"

/* The kernel's entry for this path; takes the hand-off in RDI. */
typedef void (*efi_kernel_entry_fn)(struct boot_info *bi) __attribute__((noreturn, sysv_abi));

/*
 * Check the embedded kernel ELF, allocate its physical range (AllocateAddress),
 * copy the PT_LOAD segments and zero the rest. On success *entry is the
 * kernel's efi_handoff_entry. Uses boot services; prints its own errors.
 */
EFI_STATUS efi_kernel_load(efi_kernel_entry_fn *entry);

/* An EFI_MEMORY_TYPE as the E820-style enum boot_mem_type. */
uint32_t efi_mem_type(uint32_t efi_type);

/*
 * The firmware's memory map (map_size bytes, desc_size per descriptor) as
 * sorted, merged ranges in out[0..out_max). tmp holds tmp_max ranges and
 * must fit one per descriptor. Pure code: safe after ExitBootServices.
 * Returns the number of ranges written.
 */
unsigned int efi_memmap_convert(const void *map, UINTN map_size, UINTN desc_size,
				struct boot_mem_range *tmp, unsigned int tmp_max,
				struct boot_mem_range *out, unsigned int out_max);

#endif
