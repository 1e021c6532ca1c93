// SPDX-License-Identifier: MIT
/*
 * The UEFI memory map in the E820 terms struct boot_info uses. Runs after
 * ExitBootServices, so it allocates nothing and calls no firmware service.
 */
#include "boot/efi_loader.h"

uint32_t efi_mem_type(uint32_t efi_type)
{
	switch (efi_type) {
	/*
	 * Boot services memory is free once the firmware has exited, and the
	 * loader's own code and data (this program, the hand-off) are dead
	 * once the kernel has copied boot_info.
	 */
	case EfiLoaderCode:
	case EfiLoaderData:
	case EfiBootServicesCode:
	case EfiBootServicesData:
	case EfiConventionalMemory:
		return BOOT_MEM_USABLE;
	case EfiACPIReclaimMemory:
		return BOOT_MEM_ACPI_RECLAIM;
	case EfiACPIMemoryNVS:
		return BOOT_MEM_ACPI_NVS;
	case EfiUnusableMemory:
		return BOOT_MEM_BAD;
	default: /* runtime services, MMIO, reserved, persistent, unknown */
		return BOOT_MEM_RESERVED;
	}
}

/* The map is not sorted by the spec and has at most a few hundred entries. */
static void sort_ranges(struct boot_mem_range *r, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++) {
		struct boot_mem_range v = r[i];
		unsigned int j = i;

		for (; j > 0 && r[j - 1].base > v.base; j--)
			r[j] = r[j - 1];
		r[j] = v;
	}
}

static unsigned int merge_ranges(struct boot_mem_range *r, unsigned int n)
{
	unsigned int out = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct boot_mem_range *last = out ? &r[out - 1] : NULL;

		if (last && last->type == r[i].type && r[i].base <= last->base + last->len) {
			uint64_t end = r[i].base + r[i].len;

			if (end > last->base + last->len)
				last->len = end - last->base;
			continue;
		}
		r[out++] = r[i];
	}
	return out;
}

/*
 * Too many ranges for boot_info: reserved ones matter least (the kernel
 * only takes usable RAM from the map), so drop those from the top first;
 * then whatever is highest.
 */
static unsigned int fit_ranges(struct boot_mem_range *r, unsigned int n, unsigned int max)
{
	for (unsigned int i = n; i-- > 0 && n > max;) {
		if (r[i].type == BOOT_MEM_USABLE)
			continue;
		for (unsigned int j = i; j + 1 < n; j++)
			r[j] = r[j + 1];
		n--;
	}
	return n > max ? max : n;
}

unsigned int efi_memmap_convert(const void *map, UINTN map_size, UINTN desc_size,
				struct boot_mem_range *tmp, unsigned int tmp_max,
				struct boot_mem_range *out, unsigned int out_max)
{
	unsigned int n = 0;

	if (desc_size < sizeof(EFI_MEMORY_DESCRIPTOR))
		return 0;
	for (UINTN off = 0; off + desc_size <= map_size && n < tmp_max; off += desc_size) {
		const EFI_MEMORY_DESCRIPTOR *d = (const void *)((const uint8_t *)map + off);

		if (!d->NumberOfPages)
			continue;
		tmp[n].base = d->PhysicalStart;
		tmp[n].len = d->NumberOfPages * EFI_PAGE_SIZE;
		tmp[n].type = efi_mem_type(d->Type);
		n++;
	}
	sort_ranges(tmp, n);
	n = merge_ranges(tmp, n);
	n = fit_ranges(tmp, n, out_max);
	for (unsigned int i = 0; i < n; i++)
		out[i] = tmp[i];
	return n;
}
