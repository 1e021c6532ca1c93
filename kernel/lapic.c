// SPDX-License-Identifier: MIT
/*
 * xAPIC mode, memory-mapped at the base IA32_APIC_BASE names. We enable it
 * with the spurious vector 0xff (SDM 3A 11.9) and mask the 8259 PICs, so
 * the only interrupts are the MSI-X vectors drivers ask for.
 */
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/mm.h"

#define MSR_APIC_BASE 0x1b
#define APIC_BASE_ENABLE (1ULL << 11)
#define APIC_ID 0x20
#define APIC_TPR 0x80
#define APIC_EOI 0xb0
#define APIC_SVR 0xf0
#define SVR_ENABLE (1u << 8)

static volatile uint8_t *regs;
static uint64_t base;

static void pic_mask_all(void)
{
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

void lapic_init(void)
{
	uint64_t msr = rdmsr(MSR_APIC_BASE);

	pic_mask_all();
	base = msr & 0xffffff000ULL;
	wrmsr(MSR_APIC_BASE, msr | APIC_BASE_ENABLE);
	regs = ioremap(base, 4096);
	if (!regs)
		return;
	mmio_write32(regs + APIC_TPR, 0);
	mmio_write32(regs + APIC_SVR, SVR_ENABLE | 0xff);
}

uint32_t lapic_id(void)
{
	return regs ? mmio_read32(regs + APIC_ID) >> 24 : 0;
}

uint64_t lapic_base(void)
{
	return base;
}

void lapic_eoi(void)
{
	if (regs)
		mmio_write32(regs + APIC_EOI, 0);
}
