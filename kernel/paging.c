// SPDX-License-Identifier: MIT
/*
 * The identity map. boot/entry.S maps the first 4 GiB with 2 MiB pages;
 * here we extend it with 2 MiB pages for RAM and devices above that. Below
 * 4 GiB the firmware's MTRRs make the PCI hole uncached already; above it
 * we mark device pages PCD|PWT ourselves, since the MTRR default there may
 * be write-back.
 */
#include "kernel/mm.h"
#include "kernel/printk.h"

#define PTE_P (1ULL << 0)
#define PTE_W (1ULL << 1)
#define PTE_PWT (1ULL << 3)
#define PTE_PCD (1ULL << 4)
#define PTE_PS (1ULL << 7)
#define PTE_ADDR 0x000ffffffffff000ULL
#define HUGE_2M (2ULL << 20)
#define BOOT_MAPPED (4ULL << 30)

extern uint64_t boot_pml4[512];

static void invlpg(uint64_t va)
{
	__asm__ __volatile__("invlpg (%0)" : : "r"(va) : "memory");
}

/* The next-level table behind @entry, allocating it when absent. */
static uint64_t *next_table(uint64_t *entry)
{
	uint64_t f;

	if (*entry & PTE_P)
		return (uint64_t *)(uintptr_t)(*entry & PTE_ADDR);
	f = frame_alloc();
	if (!f)
		return NULL;
	*entry = f | PTE_P | PTE_W;
	return (uint64_t *)(uintptr_t)f;
}

static int map_2m(uint64_t pa, uint64_t flags)
{
	uint64_t *pdpt, *pd, *pde;

	pdpt = next_table(&boot_pml4[(pa >> 39) & 511]);
	if (!pdpt)
		return -1;
	pd = next_table(&pdpt[(pa >> 30) & 511]);
	if (!pd)
		return -1;
	pde = &pd[(pa >> 21) & 511];
	if ((*pde & PTE_P) && (*pde & ~(PTE_ADDR & ~(HUGE_2M - 1))) == (flags | PTE_P | PTE_PS))
		return 0;
	*pde = pa | flags | PTE_P | PTE_PS;
	invlpg(pa);
	return 0;
}

static int map_range(uint64_t phys, uint64_t size, uint64_t flags)
{
	uint64_t start = phys & ~(HUGE_2M - 1);
	uint64_t end = (phys + size + HUGE_2M - 1) & ~(HUGE_2M - 1);

	/* 48-bit virtual addresses: the identity map ends at 128 TiB */
	if (end > (1ULL << 47) || end < start)
		return -1;
	for (uint64_t pa = start; pa < end; pa += HUGE_2M) {
		if (pa < BOOT_MAPPED)
			continue; /* mapped at boot; the MTRRs decide caching */
		if (map_2m(pa, flags))
			return -1;
	}
	return 0;
}

int map_ram(uint64_t phys, uint64_t size)
{
	return map_range(phys, size, PTE_W);
}

void *ioremap(uint64_t phys, uint64_t size)
{
	if (map_range(phys, size, PTE_W | PTE_PCD | PTE_PWT)) {
		pr_err("ioremap: cannot map %#llx+%#llx\n", (unsigned long long)phys,
		       (unsigned long long)size);
		return NULL;
	}
	return (void *)(uintptr_t)phys;
}
