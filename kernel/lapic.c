// SPDX-License-Identifier: MIT
/*
 * The local APIC: x2APIC mode when CPUID offers it, registers as MSRs
 * (SDM 3A 11.12), else xAPIC mode, memory-mapped at the base
 * IA32_APIC_BASE names. We enable it with the spurious vector 0xff (SDM
 * 3A 11.9) and mask the 8259 PICs, so the only interrupts are the MSI-X
 * vectors drivers ask for, the timer and the I/O APIC's (ioapic.c).
 *
 * Under KVM an xAPIC access is an emulated MMIO exit, an x2APIC access a
 * WRMSR exit that KVM handles without decoding an instruction, and with
 * KVM's paravirtual EOI most EOIs are no exit at all: the EOI is the
 * common case, one per interrupt.
 */
#include <stdbool.h>

#include "kernel/cpu.h"
#include "kernel/hypervisor.h"
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/mm.h"
#include "kernel/percpu.h"
#include "kernel/time.h"

#define MSR_APIC_BASE 0x1b
#define APIC_BASE_ENABLE (1ULL << 11)
#define APIC_BASE_X2APIC (1ULL << 10) /* EXTD (SDM 3A 11.12.1) */
#define MSR_X2APIC_FIRST 0x800 /* xAPIC register offset >> 4 on top */
#define MSR_TSC_DEADLINE 0x6e0
#define MSR_KVM_PV_EOI_EN 0x4b564d04
#define KVM_PV_EOI_ENABLED 1ULL
#define APIC_ID 0x20
#define APIC_TPR 0x80
#define APIC_EOI 0xb0
#define APIC_SVR 0xf0
#define APIC_ICR_LO 0x300
#define APIC_ICR_HI 0x310
#define ICR_FIXED (0u << 8)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define ICR_PENDING (1u << 12) /* xAPIC delivery status: send pending */
#define ICR_ASSERT (1u << 14)
#define ICR_PENDING_US 1000
#define SVR_ENABLE (1u << 8)
#define APIC_LVT_TIMER 0x320
#define APIC_TIMER_INIT 0x380
#define APIC_TIMER_CUR 0x390
#define APIC_TIMER_DIV 0x3e0
#define LVT_MASKED (1u << 16)
#define LVT_PERIODIC (1u << 17)
#define LVT_TSC_DEADLINE (2u << 17) /* timer mode bits 18:17 = 10b */
#define TIMER_DIV_16 0x3
#define CALIBRATE_US 10000

/* What the LVT timer entry was last set to: a re-arm writes no more. */
enum lvt_mode { LVT_OFF, LVT_ONESHOT_MODE, LVT_PERIODIC_MODE, LVT_DEADLINE_MODE };

static volatile uint8_t *regs;
static uint64_t base;
static bool x2apic, tsc_deadline;
/* Each CPU's LVT timer mode is its own: struct percpu's lvt_mode. */
static uint64_t timer_hz; /* LAPIC timer ticks per second at divide 16 */
static int timer_vector = -1;
volatile uint32_t *lapic_eoi_reg;
/* isr.S reads these two: how to EOI when KVM's flag says one is needed */
uint8_t lapic_x2apic;
uint8_t lapic_pv_eoi;
static enum lapic_eoi_kind eoi_kind;

/*
 * KVM's paravirtual EOI flag (Linux Documentation/virt/kvm/x86/msr.rst,
 * MSR_KVM_PV_EOI_EN), one per vCPU: struct percpu's pv_eoi, registered
 * by each CPU for itself. KVM sets bit 0 when it injects an interrupt
 * whose EOI it can notice by itself; the guest then clears the bit
 * instead of writing the EOI register. Four-byte aligned, zero when
 * registered, and its address is physical: the kernel is
 * identity-mapped (paging.c) and an AP's struct percpu is heap memory.
 */
static void pv_eoi_register(void)
{
	struct percpu *p = this_cpu();

	p->pv_eoi = 0;
	wrmsr(MSR_KVM_PV_EOI_EN, (uint64_t)(uintptr_t)&p->pv_eoi | KVM_PV_EOI_ENABLED);
}

static void pic_mask_all(void)
{
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

static uint32_t apic_read(unsigned int reg)
{
	if (x2apic)
		return (uint32_t)rdmsr(MSR_X2APIC_FIRST + (reg >> 4));
	return mmio_read32(regs + reg);
}

static void apic_write(unsigned int reg, uint32_t v)
{
	if (x2apic)
		wrmsr(MSR_X2APIC_FIRST + (reg >> 4), v);
	else
		mmio_write32(regs + reg, v);
}

/*
 * xAPIC first, then x2APIC: SDM 3A 11.12.5 allows x2APIC mode to be
 * entered only from xAPIC mode (from disabled it is an invalid
 * transition and faults).
 */
static bool enable_x2apic(uint64_t msr)
{
	if (!cpu_features.x2apic)
		return false;
	wrmsr(MSR_APIC_BASE, msr | APIC_BASE_ENABLE | APIC_BASE_X2APIC);
	return true;
}

void lapic_init(void)
{
	uint64_t msr = rdmsr(MSR_APIC_BASE);

	pic_mask_all();
	base = msr & 0xffffff000ULL;
	msr |= APIC_BASE_ENABLE;
	wrmsr(MSR_APIC_BASE, msr);
	x2apic = enable_x2apic(msr);
	lapic_x2apic = x2apic;
	if (!x2apic) {
		regs = ioremap(base, 4096);
		if (!regs)
			return;
		lapic_eoi_reg = (volatile uint32_t *)(regs + APIC_EOI);
	}
	apic_write(APIC_TPR, 0);
	apic_write(APIC_SVR, SVR_ENABLE | 0xff);
	tsc_deadline = cpu_features.tsc_deadline;
	eoi_kind = x2apic ? LAPIC_EOI_X2APIC : LAPIC_EOI_XAPIC;
	if (cpu_features.kvm_pv_eoi) {
		pv_eoi_register();
		eoi_kind = LAPIC_EOI_KVM_PV;
		lapic_pv_eoi = 1;
	}
}

/*
 * An application processor's LAPIC, in the mode the BSP chose: the BSP
 * ran hypervisor_init and lapic_init, so x2apic and regs (the same
 * physical page for every CPU) are set, and with KVM's PV EOI the AP
 * registers its own flag, so every interrupt entry EOIs one way on
 * every CPU. Its timer is armed by its own idle_wait.
 */
void lapic_init_ap(void)
{
	uint64_t msr = rdmsr(MSR_APIC_BASE) | APIC_BASE_ENABLE;

	wrmsr(MSR_APIC_BASE, msr);
	if (x2apic)
		wrmsr(MSR_APIC_BASE, msr | APIC_BASE_X2APIC);
	else if (!regs)
		return;
	apic_write(APIC_TPR, 0);
	apic_write(APIC_SVR, SVR_ENABLE | 0xff);
	if (eoi_kind == LAPIC_EOI_KVM_PV)
		pv_eoi_register();
}

bool lapic_x2apic_mode(void)
{
	return x2apic;
}

/*
 * One IPI to @apic_id (SDM 3A 11.6.1, ICR). In x2APIC mode the ICR is
 * one 64-bit MSR with the destination on top (11.12.9); its WRMSR is
 * not serializing and may complete before earlier stores are globally
 * visible (11.12.3), so MFENCE; LFENCE first, as that section says: the
 * receiver must see what was written for it (the trampoline, a message
 * in its ring) once the IPI arrives. In xAPIC mode the destination
 * register comes first, the low word sends (an uncached store, not
 * reordered with earlier stores); we wait for the delivery status to
 * clear before the next.
 */
/*
 * The xAPIC ICR is two registers: an interrupt handler that sends an IPI
 * of its own (a steered queue vector forwarded to its owner) between the
 * two writes would send the interrupted one to its destination, so the
 * pair is written with interrupts off (restored as they were).
 */
static bool send_ipi_xapic(uint32_t apic_id, uint32_t icr)
{
	uint64_t flags, end;
	bool done = true;

	__asm__ __volatile__("pushfq; popq %0; cli" : "=r"(flags)::"memory");
	mmio_write32(regs + APIC_ICR_HI, apic_id << 24);
	mmio_write32(regs + APIC_ICR_LO, icr);
	end = now_ns() + ICR_PENDING_US * 1000ULL;
	while (mmio_read32(regs + APIC_ICR_LO) & ICR_PENDING)
		if (now_ns() > end) {
			done = false;
			break;
		}
	if (flags & (1u << 9)) /* IF (SDM 1 3.4.3.3) */
		__asm__ __volatile__("sti" ::: "memory");
	return done;
}

static bool send_ipi(uint32_t apic_id, uint32_t icr)
{
	if (x2apic) {
		__asm__ __volatile__("mfence; lfence" ::: "memory");
		wrmsr(MSR_X2APIC_FIRST + (APIC_ICR_LO >> 4), (uint64_t)apic_id << 32 | icr);
		return true;
	}
	if (!regs || apic_id > 0xfe)
		return false; /* 0xff is the xAPIC broadcast */
	return send_ipi_xapic(apic_id, icr);
}

bool lapic_send_init(uint32_t apic_id)
{
	return send_ipi(apic_id, ICR_INIT | ICR_ASSERT);
}

bool lapic_send_startup(uint32_t apic_id, uint8_t page)
{
	return send_ipi(apic_id, ICR_STARTUP | ICR_ASSERT | page);
}

/* Delivery mode fixed (000b), physical destination, edge (SDM 3A 11.6.1). */
bool lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
	return send_ipi(apic_id, ICR_FIXED | ICR_ASSERT | vector);
}

enum lapic_eoi_kind lapic_eoi_kind(void)
{
	return eoi_kind;
}

const char *lapic_mode_name(void)
{
	return x2apic ? "x2apic" : regs ? "xapic" : "none";
}

const char *lapic_eoi_name(void)
{
	static const char *const names[] = { "none", "xapic-mmio", "x2apic-msr", "kvm-pv" };

	return names[eoi_kind];
}

const char *lapic_timer_name(void)
{
	return tsc_deadline ? "tsc-deadline" : "count";
}

uint32_t lapic_id(void)
{
	if (x2apic)
		return apic_read(APIC_ID); /* all 32 bits (SDM 3A 11.12.5.1) */
	return regs ? mmio_read32(regs + APIC_ID) >> 24 : 0;
}

uint64_t lapic_base(void)
{
	return base;
}

/*
 * The flag is read and cleared in one instruction: KVM may set or clear
 * it whenever it runs this vCPU, so a test and a separate clear could
 * lose an EOI in between (the same document). No lock prefix: KVM writes
 * it only while this vCPU is not running.
 */
static inline bool pv_eoi_take(void)
{
	bool was_set;

#ifdef UNIT_TEST
	was_set = __atomic_fetch_and(&this_cpu()->pv_eoi, ~1u, __ATOMIC_RELAXED) & 1;
#else
	__asm__ __volatile__("btrl $0, %%gs:%c1"
			     : "=@ccc"(was_set)
			     : "i"(PERCPU_PV_EOI)
			     : "memory");
#endif
	return was_set;
}

void lapic_eoi(void)
{
	if (eoi_kind == LAPIC_EOI_KVM_PV && pv_eoi_take())
		return;
	if (x2apic)
		wrmsr(MSR_X2APIC_FIRST + (APIC_EOI >> 4), 0);
	else if (regs)
		mmio_write32(regs + APIC_EOI, 0);
}

/* Timer ticks per second, counted against the TSC (SDM 3A 11.5.4). */
static void timer_calibrate(void)
{
	uint32_t left;

	apic_write(APIC_TIMER_DIV, TIMER_DIV_16);
	apic_write(APIC_LVT_TIMER, LVT_MASKED);
	apic_write(APIC_TIMER_INIT, 0xffffffff);
	udelay(CALIBRATE_US);
	left = apic_read(APIC_TIMER_CUR);
	apic_write(APIC_TIMER_INIT, 0);
	timer_hz = (uint64_t)(0xffffffffu - left) * (1000000 / CALIBRATE_US);
	this_cpu()->lvt_mode = LVT_OFF;
}

/*
 * The tick only wakes the CPU; counted in the taking CPU's struct percpu,
 * since idle.c compares the count to tell whether its own timer fired.
 */
static void timer_tick(void *arg)
{
	this_cpu()->timer_ticks++;
}

static const struct irq_action timer_action = { .handler = timer_tick };

/* A vector for the timer: false if the timer cannot be used. */
static bool timer_ready(void)
{
	if (!regs && !x2apic)
		return false;
	if (timer_vector < 0) {
		timer_vector = irq_alloc_vector(&timer_action);
	}
	return timer_vector >= 0;
}

/* The same, calibrated: the counting modes need the timer's rate. */
static bool timer_ready_counting(void)
{
	if (!timer_ready())
		return false;
	if (!timer_hz)
		timer_calibrate();
	return timer_hz;
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
	if (!regs && !x2apic)
		return;
	if (!period_us) {
		apic_write(APIC_LVT_TIMER, LVT_MASKED);
		apic_write(APIC_TIMER_INIT, 0);
		if (this_cpu()->lvt_mode == LVT_DEADLINE_MODE)
			wrmsr(MSR_TSC_DEADLINE, 0);
		this_cpu()->lvt_mode = LVT_OFF;
		return;
	}
	if (!timer_ready_counting())
		return;
	apic_write(APIC_TIMER_DIV, TIMER_DIV_16);
	apic_write(APIC_LVT_TIMER, LVT_PERIODIC | (uint32_t)timer_vector);
	apic_write(APIC_TIMER_INIT, timer_count(period_us));
	this_cpu()->lvt_mode = LVT_PERIODIC_MODE;
}

/*
 * TSC-deadline mode (SDM 3A 11.5.4.1): the LVT entry once, then each arm
 * is one WRMSR of the TSC value to interrupt at. In xAPIC mode the MMIO
 * write switching the mode must be ordered before that WRMSR, which
 * MFENCE does (same section); x2APIC writes are WRMSRs themselves.
 */
static void deadline_arm(uint64_t us)
{
	uint64_t hz = tsc_hz();
	uint64_t cycles = us > UINT64_MAX / 2 / hz ? UINT64_MAX / 2 : hz * us / 1000000;

	if (this_cpu()->lvt_mode != LVT_DEADLINE_MODE) {
		apic_write(APIC_LVT_TIMER, LVT_TSC_DEADLINE | (uint32_t)timer_vector);
		if (!x2apic)
			__asm__ __volatile__("mfence" ::: "memory");
		this_cpu()->lvt_mode = LVT_DEADLINE_MODE;
	}
	wrmsr(MSR_TSC_DEADLINE, rdtsc() + (cycles ? cycles : 1));
}

/*
 * On the BSP before the APs start: the timer's vector (and its rate when
 * the APs will count it down), so an AP's first halt allocates nothing.
 */
void lapic_timer_prepare(void)
{
	if (tsc_deadline && tsc_hz())
		timer_ready();
	else
		timer_ready_counting();
}

/*
 * One-shot mode (SDM 3A 11.5.4): the count runs down once and interrupts;
 * writing the initial count again restarts it, so the divider and the
 * LVT entry are written only when the mode changes. A count too large for
 * the register ends early, which only costs one extra wake-up.
 */
void lapic_timer_oneshot(uint64_t us)
{
	if (tsc_deadline && tsc_hz()) {
		if (timer_ready())
			deadline_arm(us);
		return;
	}
	if (!timer_ready_counting())
		return;
	if (this_cpu()->lvt_mode != LVT_ONESHOT_MODE) {
		apic_write(APIC_TIMER_DIV, TIMER_DIV_16);
		apic_write(APIC_LVT_TIMER, (uint32_t)timer_vector);
		this_cpu()->lvt_mode = LVT_ONESHOT_MODE;
	}
	apic_write(APIC_TIMER_INIT, timer_count(us));
}
