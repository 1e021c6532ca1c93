/* SPDX-License-Identifier: MIT */
/*
 * Each CPU's own state: one struct percpu per CPU, which its
 * IA32_GS_BASE points at (SDM 3A 3.4.4.1), so code reaches the running
 * CPU's with one %gs-relative load and interrupt entries (kernel/isr.S)
 * write it with no lookup. Only its CPU writes a struct percpu, except
 * the raised word, which any CPU may OR into with a locked instruction;
 * nothing in it is read by another CPU on the data path (`cpus stats`
 * asks the CPU itself through a request, kernel/xcpu.h).
 *
 * Per CPU: the poll registry (pollers, every_pass / raised / on_raise /
 * ask_pending bits, the next wake-up, the periods asked for), idle and
 * its timer bookkeeping, and the counters of both. Shared and read-only
 * after boot: the configuration keys, the IDT, the vectors.
 */
#ifndef KERNEL_PERCPU_H
#define KERNEL_PERCPU_H

/* Offsets isr.S uses through %gs (checked against struct percpu below). */
#define PERCPU_RAISED 0
#define PERCPU_MAIL_RAISE 4
#define PERCPU_IPIS 8
#define PERCPU_SELF 16
#define PERCPU_SHADOW_BREAKS 24

#define PERCPU_POLL_MAX 16

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct poller;

struct poll_period_req {
	const void *owner;
	uint64_t period_ns;
};

/* kernel/poll.c's state for one CPU (poll.h says what each part is for). */
struct poll_cpu {
	uint32_t every_pass, has_pending, on_raise, ask_pending;
	unsigned int n_pollers;
	bool (*only_hook)(void);
	uint64_t next_wake; /* poll_take_wake(), inline */
	uint64_t shortest_period; /* poll_period(), inline */
	unsigned int (*poll_fns[PERCPU_POLL_MAX])(unsigned int budget);
	bool (*pending_fns[PERCPU_POLL_MAX])(void);
	const struct poller *pollers[PERCPU_POLL_MAX];
	struct poll_period_req periods[PERCPU_POLL_MAX];
};

/* kernel/idle.c's state for one CPU. */
struct idle_cpu {
	bool tick_deadline; /* one-shot timer; the BSP's follows the tick key */
	bool guard_armed; /* the timer armed is the guard's */
	uint64_t halts, early_wakes, guard_wakes;
	uint64_t armed_until; /* 0: not armed; UINT64_MAX: none needed */
	uint64_t armed_ticks; /* timer interrupts counted when it was armed */
};

struct percpu {
	volatile uint32_t raised; /* PERCPU_RAISED: poll bits to run */
	uint32_t mail_raise; /* PERCPU_MAIL_RAISE: what the mail IPI raises */
	volatile uint64_t ipis; /* PERCPU_IPIS: mail IPIs taken */
	struct percpu *self; /* PERCPU_SELF: this_cpu() */
	/* PERCPU_SHADOW_BREAKS: interrupts taken on the hlt (idle_halt.S) */
	volatile uint64_t shadow_breaks;
	unsigned int index; /* 0: the BSP */
	int lvt_mode; /* lapic.c: what its LVT timer entry was set to */
	volatile uint64_t timer_ticks; /* its LAPIC timer interrupts */
	struct poll_cpu poll;
	struct idle_cpu idle;
	uint64_t irqs[256]; /* interrupts taken here, per vector (irq_dispatch) */
};

_Static_assert(offsetof(struct percpu, raised) == PERCPU_RAISED, "isr.S: raised");
_Static_assert(offsetof(struct percpu, mail_raise) == PERCPU_MAIL_RAISE, "isr.S: mail");
_Static_assert(offsetof(struct percpu, ipis) == PERCPU_IPIS, "isr.S: ipis");
_Static_assert(offsetof(struct percpu, self) == PERCPU_SELF, "this_cpu");
_Static_assert(offsetof(struct percpu, shadow_breaks) == PERCPU_SHADOW_BREAKS, "isr.S: hlt");

/* The BSP's, static so it is there before anything else runs. */
extern struct percpu percpu_boot;

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
 * member designator (poll.every_pass); percpu_read_at indexes an array
 * of 8-byte members. The memory clobber orders them like the volatile
 * accesses they replace. The value written is always in a register: an
 * immediate into memory has no size the assembler can see, and it would
 * store 32 bits of a 64-bit field (UINT64_MAX over a deadline left its
 * upper half, a wake-up in the past for good: the loop never halted).
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

/* @p ready for CPU @index: empty registry, nothing armed (poll.c). */
void percpu_init(struct percpu *p, unsigned int index);
/* On the CPU itself: IA32_GS_BASE to @p (poll.c). */
void percpu_enter(struct percpu *p);

#endif /* __ASSEMBLER__ */
#endif
