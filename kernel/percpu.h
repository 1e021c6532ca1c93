/* SPDX-License-Identifier: MIT */
/*
 * Each CPU's own state: one struct percpu per CPU, which its
 * IA32_GS_BASE points at (SDM 3A 3.4.4.1), so code reaches the running
 * CPU's with one %gs-relative load and interrupt entries (kernel/isr.S)
 * write it with no lookup. Only its CPU writes a struct percpu, except
 * the scheduled word, which any CPU may OR into with a locked
 * instruction (poll_schedule); another CPU reads the rest only as
 * statistics (a value that may be stale, never used to decide).
 *
 * Beside it, each CPU has a copy of every DEFINE_PER_CPU variable of the
 * layers above (net/'s protocol counters, a pktgen sender's state, ...):
 * CPU 0's is the linked one, in .bss; an AP's is a zeroed copy CPU 0
 * allocates before the AP starts. this_cpu_ptr(&var) is the running
 * CPU's, per_cpu_ptr(&var, cpu) another's (read for sums only).
 */
#ifndef KERNEL_PERCPU_H
#define KERNEL_PERCPU_H

/* Offsets isr.S uses through %gs (checked against struct percpu below). */
#define PERCPU_SCHEDULED 0
#define PERCPU_PV_EOI 4
#define PERCPU_IPIS 8
#define PERCPU_SELF 16
#define PERCPU_SHADOW_BREAKS 24
#define PERCPU_IRQS 64

#define PERCPU_POLL_MAX 16

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct poll_ctx;

/* kernel/poll.c's state for one CPU (poll.h says what each part is for). */
struct poll_cpu {
	uint32_t used; /* bits with a context in ctx[] */
	uint32_t held; /* contexts waiting inside their poll() (poll_wait): not run */
	unsigned int current; /* the slot whose poll() runs; POLL_MAX between passes */
	uint32_t todo; /* the running pass's bits not yet run (poll_wait gives them back) */
	uint64_t next_due; /* the earliest poll_schedule_at(); UINT64_MAX: none */
	uint64_t passes;
	struct poll_ctx *ctx[PERCPU_POLL_MAX];
};

/* What the idle watchdog found last on a CPU (idle.c), copied: a driver's names may go. */
struct idle_finding {
	char ctx[24], what[48]; /* the context and its queue */
	uint64_t waited_ns; /* the work waited at least that long */
	bool owed; /* a notification the device owed; else a wake-up the guest lost */
};

/* kernel/idle.c's state for one CPU. */
struct idle_cpu {
	bool tick_deadline; /* one-shot timer; the BSP's follows the tick key */
	uint64_t halts, early_wakes;
	uint64_t armed_until; /* 0: not armed; UINT64_MAX: none needed */
	uint64_t armed_ticks; /* timer interrupts counted when it was armed */
	/* the watchdog */
	uint32_t watch_gen; /* the idle_guard setting watch_at was set for */
	uint32_t suspects; /* contexts with work at the first look */
	uint64_t watch_at; /* its next look (ns); UINT64_MAX: none */
	uint64_t looks, missed, lost; /* first looks; findings: the device's, the guest's */
	uint64_t seen_at; /* the last first look (ns) */
	uint64_t seen_polls[PERCPU_POLL_MAX]; /* each slot's runs then */
	uint64_t since[PERCPU_POLL_MAX]; /* a suspect's work waited from then at least */
	struct idle_finding last[2]; /* the last of each kind: [0] lost, [1] owed */
};

struct percpu {
	volatile uint32_t scheduled; /* PERCPU_SCHEDULED: poll contexts to run */
	volatile uint32_t pv_eoi; /* PERCPU_PV_EOI: KVM's paravirtual EOI flag (lapic.c) */
	volatile uint64_t ipis; /* PERCPU_IPIS: wake-up IPIs taken */
	struct percpu *self; /* PERCPU_SELF: this_cpu() */
	/* PERCPU_SHADOW_BREAKS: interrupts taken on the hlt (idle_halt.S) */
	volatile uint64_t shadow_breaks;
	unsigned int index; /* 0: the BSP */
	uint32_t apic_id; /* where poll_schedule sends the wake-up IPI */
	uintptr_t area_offset; /* this CPU's DEFINE_PER_CPU copies, from the linked ones */
	int lvt_mode; /* lapic.c: what its LVT timer entry was set to */
	volatile uint64_t prints_refused; /* console writes it may not make (cpu_rules.h) */
	/* PERCPU_IRQS: interrupts taken here, per vector (isr.S, irq_dispatch) */
	volatile uint64_t irqs[256] __attribute__((aligned(64)));
	volatile uint64_t timer_ticks; /* its LAPIC timer interrupts */
	struct poll_cpu poll;
	struct idle_cpu idle;
};

_Static_assert(offsetof(struct percpu, scheduled) == PERCPU_SCHEDULED, "isr.S: scheduled");
_Static_assert(offsetof(struct percpu, pv_eoi) == PERCPU_PV_EOI, "isr.S: pv_eoi");
_Static_assert(offsetof(struct percpu, ipis) == PERCPU_IPIS, "isr.S: ipis");
_Static_assert(offsetof(struct percpu, self) == PERCPU_SELF, "this_cpu");
_Static_assert(offsetof(struct percpu, shadow_breaks) == PERCPU_SHADOW_BREAKS, "isr.S: hlt");
_Static_assert(offsetof(struct percpu, irqs) == PERCPU_IRQS, "isr.S: irqs");

/* The BSP's, static so it is there before anything else runs. */
extern struct percpu percpu_boot;

/*
 * Every CPU's, by index (NULL: none), set by CPU 0 before that CPU
 * starts and not changed after.
 */
#define PERCPU_MAX_CPUS 64
extern struct percpu *percpu_cpus[PERCPU_MAX_CPUS];

static inline struct percpu *percpu_of(unsigned int cpu)
{
	return cpu < PERCPU_MAX_CPUS ? percpu_cpus[cpu] : NULL;
}

#ifdef UNIT_TEST
/* Host unit tests: the CPU they pretend to run on (the BSP's at first). */
extern struct percpu *percpu_unit_cpu;
#endif

/* The running CPU's: one load through %gs. */
static inline struct percpu *this_cpu(void)
{
#ifdef UNIT_TEST
	return percpu_unit_cpu;
#else
	struct percpu *p;

	__asm__("movq %%gs:%c1, %0" : "=r"(p) : "i"(PERCPU_SELF));
	return p;
#endif
}

/*
 * One field of the running CPU's struct percpu in one %gs-relative
 * instruction, no base register: the hot path (a pass, the check before
 * a halt) then costs what it did with static variables. @field is a
 * member designator (poll.next_due); percpu_read_at indexes an array
 * of 8-byte members. The memory clobber orders them like the volatile
 * accesses they replace. The value written is always in a register: an
 * immediate into memory has no size the assembler can see, and it would
 * store 32 bits of a 64-bit field, leaving the upper half.
 */
#define PERCPU_OFF(field) offsetof(struct percpu, field)
#ifdef UNIT_TEST
#define percpu_read(field) (this_cpu()->field)
#define percpu_write(field, v) (this_cpu()->field = (v))
#define percpu_read_at(field, i) (this_cpu()->field[i])
#define percpu_inc(field) (this_cpu()->field++)
#else
#define percpu_read(field)                                    \
	({                                                    \
		__typeof__((void)0, percpu_boot.field) v_;    \
		__asm__ __volatile__("mov %%gs:%c1, %0"       \
				     : "=r"(v_)               \
				     : "i"(PERCPU_OFF(field)) \
				     : "memory");             \
		v_;                                           \
	})
#define percpu_write(field, v)                                         \
	do {                                                           \
		__typeof__((void)0, percpu_boot.field) w_ = (v);       \
		__asm__ __volatile__("mov %0, %%gs:%c1"                \
				     :                                 \
				     : "r"(w_), "i"(PERCPU_OFF(field)) \
				     : "memory");                      \
	} while (0)
#define percpu_read_at(field, i)                                                  \
	({                                                                        \
		__typeof__(percpu_boot.field[0]) v_;                              \
		_Static_assert(sizeof(v_) == 8, "8-byte members");                \
		__asm__ __volatile__("mov %%gs:%c1(,%2,8), %0"                    \
				     : "=r"(v_)                                   \
				     : "i"(PERCPU_OFF(field)), "r"((uint64_t)(i)) \
				     : "memory");                                 \
		v_;                                                               \
	})
#define percpu_inc(field) \
	__asm__ __volatile__("incq %%gs:%c0" ::"i"(PERCPU_OFF(field)) : "memory", "cc")
#endif

/*
 * A variable with a copy per CPU: zero at start on every CPU (the AP's
 * copies are allocated zeroed), reached with this_cpu_ptr(). The section
 * name makes it .bss (no file space), kept together by kernel/linker.ld.
 */
#define DEFINE_PER_CPU(type, name) __attribute__((section(".bss.percpu"))) type name
#define DECLARE_PER_CPU(type, name) extern type name

static inline uintptr_t percpu_area_offset(void)
{
	return percpu_read(area_offset);
}

#define this_cpu_ptr(ptr) ((__typeof__(ptr))((uintptr_t)(ptr) + percpu_area_offset()))
#define per_cpu_ptr(ptr, cpu) ((__typeof__(ptr))((uintptr_t)(ptr) + percpu_of(cpu)->area_offset))

/* The bytes an AP's copy of the DEFINE_PER_CPU variables takes (poll.c). */
size_t percpu_area_size(void);

/* @p ready for CPU @index, its area at @area (NULL: the linked one, CPU 0). */
void percpu_init(struct percpu *p, unsigned int index, uint32_t apic_id, void *area);
/* On the CPU itself: IA32_GS_BASE to @p (poll.c). */
void percpu_enter(struct percpu *p);

#endif /* __ASSEMBLER__ */
#endif
