// SPDX-License-Identifier: MIT
/*
 * xAPIC mode, memory-mapped at the base IA32_APIC_BASE names. We enable it
 * with the spurious vector 0xff (SDM 3A 11.9) and mask the 8259 PICs, so
 * the only interrupts are the MSI-X vectors drivers ask for.
 */
#include <stdbool.h>

#include "kernel/cpu.h"
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/mm.h"
#include "kernel/time.h"

#define MSR_APIC_BASE 0x1b
#define APIC_BASE_ENABLE (1ULL << 11)
#define APIC_ID 0x20
#define APIC_TPR 0x80
#define APIC_EOI 0xb0
#define APIC_SVR 0xf0
#define SVR_ENABLE (1u << 8)
#define APIC_LVT_TIMER 0x320
#define APIC_TIMER_INIT 0x380
#define APIC_TIMER_CUR 0x390
#define APIC_TIMER_DIV 0x3e0
#define LVT_MASKED (1u << 16)
#define LVT_PERIODIC (1u << 17)
#define TIMER_DIV_16 0x3
#define CALIBRATE_US 10000

static volatile uint8_t *regs;
static uint64_t base;
static uint64_t timer_hz; /* LAPIC timer ticks per second at divide 16 */
static int timer_vector = -1;
static const uint64_t no_ticks;
const volatile uint64_t *lapic_timer_count = &no_ticks;
volatile uint32_t *lapic_eoi_reg;

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
	lapic_eoi_reg = (volatile uint32_t *)(regs + APIC_EOI);
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

/* Timer ticks per second, counted against the TSC (SDM 3A 11.5.4). */
static void timer_calibrate(void)
{
	uint32_t left;

	mmio_write32(regs + APIC_TIMER_DIV, TIMER_DIV_16);
	mmio_write32(regs + APIC_LVT_TIMER, LVT_MASKED);
	mmio_write32(regs + APIC_TIMER_INIT, 0xffffffff);
	udelay(CALIBRATE_US);
	left = mmio_read32(regs + APIC_TIMER_CUR);
	mmio_write32(regs + APIC_TIMER_INIT, 0);
	timer_hz = (uint64_t)(0xffffffffu - left) * (1000000 / CALIBRATE_US);
}

/* The tick only wakes the CPU; the interrupt itself has nothing to do. */
static void timer_tick(void *arg)
{
}

/* Calibrated and with a vector: false if the timer cannot be used. */
static bool timer_ready(void)
{
	if (!regs)
		return false;
	if (!timer_hz)
		timer_calibrate();
	if (timer_vector < 0) {
		timer_vector = irq_alloc_vector(timer_tick, NULL);
		if (timer_vector >= 0)
			lapic_timer_count = &irq_slots[timer_vector].count;
	}
	return timer_vector >= 0;
}

/* Timer counts for @us, at least 1, at most the 32-bit register holds. */
static uint32_t timer_count(uint64_t us)
{
	uint64_t count = us > UINT64_MAX / timer_hz ? UINT64_MAX : timer_hz * us / 1000000;

	if (!count)
		return 1;
	return count > 0xffffffffu ? 0xffffffffu : (uint32_t)count;
}

void lapic_timer_periodic(uint32_t period_us)
{
	if (!regs)
		return;
	if (!period_us) {
		mmio_write32(regs + APIC_LVT_TIMER, LVT_MASKED);
		mmio_write32(regs + APIC_TIMER_INIT, 0);
		return;
	}
	if (!timer_ready())
		return;
	mmio_write32(regs + APIC_TIMER_DIV, TIMER_DIV_16);
	mmio_write32(regs + APIC_LVT_TIMER, LVT_PERIODIC | (uint32_t)timer_vector);
	mmio_write32(regs + APIC_TIMER_INIT, timer_count(period_us));
}

/*
 * One-shot mode (SDM 3A 11.5.4): the count runs down once and interrupts;
 * writing the initial count again restarts it. A count too large for the
 * register ends early, which only costs one extra wake-up.
 */
void lapic_timer_oneshot(uint64_t us)
{
	if (!timer_ready())
		return;
	mmio_write32(regs + APIC_TIMER_DIV, TIMER_DIV_16);
	mmio_write32(regs + APIC_LVT_TIMER, (uint32_t)timer_vector);
	mmio_write32(regs + APIC_TIMER_INIT, timer_count(us));
}
