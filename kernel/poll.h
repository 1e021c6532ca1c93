/* SPDX-License-Identifier: MIT */
/*
 * The poll contract, the one way work reaches a CPU's loop (NAPI's
 * shape: napi_schedule, poll(budget), napi_complete_done).
 *
 * A poll context is a unit of work something can wake: a device's
 * queues, the socket layer, a service, the console, another CPU's
 * requests. It belongs to one CPU, its owner, and only that CPU's loop
 * calls its poll(). Everything that has work for it calls
 * poll_schedule(): an interrupt entry (kernel/isr.S ORs the context's
 * bit into the taking CPU's word), code on the owner, or another CPU,
 * which then sends the owner the wake-up IPI. The owner's loop runs the
 * scheduled contexts in table order, each with a budget, and halts only
 * when none is scheduled (idle.c checks the word with interrupts off).
 *
 * poll(ctx, budget) does at most @budget units of work and returns the
 * units done. Returning @budget means there is more: the context stays
 * scheduled and runs again next pass. Returning less completes it, and
 * completing is the context's own: it re-arms whatever announces its
 * work (re-enables the queue's notifications, 2.7.7.2; an owner's ready
 * list), with a full barrier, looks once more, and schedules itself
 * again if work raced in. No other mechanism exists: a context that
 * waits for a time asks for one (poll_schedule_at), and one whose
 * source never interrupts asks for a time too.
 *
 * The idle watchdog (idle.c, idle_guard) asks each context's check()
 * whether it has work nothing scheduled. That is a bug, counted: the
 * device's when it owed a notification it never sent (check() says
 * POLL_OWED: a missed notification), the guest's otherwise.
 */
#ifndef KERNEL_POLL_H
#define KERNEL_POLL_H

/* isr.S reads a context's bit through a raise slot's context pointer. */
#define POLL_CTX_BIT_OFFSET 32

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

#include "kernel/percpu.h"

#define POLL_BUDGET 64
#define POLL_MAX PERCPU_POLL_MAX

/* What a context's check() found (the idle watchdog asks it). */
enum poll_verdict {
	POLL_IDLE, /* nothing waiting */
	POLL_OWED, /* work its source had to announce and did not (a missed notification) */
	POLL_LOST, /* work nothing announced that the guest should have scheduled */
};

struct poll_ctx {
	const char *name;
	unsigned int (*poll)(struct poll_ctx *ctx, unsigned int budget);
	/*
	 * Optional, for the watchdog only, on the owner with nothing
	 * scheduled: whether work waits. @what gets a name for it (a
	 * queue), for the report; @count: the watchdog's second look,
	 * which counts a POLL_OWED as the source's missed notification.
	 */
	enum poll_verdict (*check)(struct poll_ctx *ctx, bool count, const char **what);

	/* poll.c's: set by poll_ctx_add, read by poll_schedule on any CPU */
	struct percpu *volatile cpu; /* the owner; NULL: not added */
	uint32_t bit; /* its bit in the owner's scheduled word */
	uint64_t due_ns; /* poll_schedule_at(); UINT64_MAX: none */
	uint64_t polls; /* the owner's count of its runs, for `stats poll` */
};

_Static_assert(__builtin_offsetof(struct poll_ctx, bit) == POLL_CTX_BIT_OFFSET, "isr.S: bit");

/*
 * On the CPU that will own @ctx: add it to this CPU's loop and schedule
 * it once (anything that came before it was added is looked at).
 * -ENOSPC when the table is full, -EBUSY when it is added already.
 */
int poll_ctx_add(struct poll_ctx *ctx);
/*
 * On the owner: take @ctx out of the loop (not from its own poll()).
 * Scheduling it does nothing from then on; what may still call
 * poll_schedule on another CPU (an interrupt in flight) is the
 * caller's to quiesce before the memory goes (xcpu_sync).
 */
void poll_ctx_del(struct poll_ctx *ctx);

/* poll_schedule from a CPU that is not (or not known to be) @ctx's owner. */
void poll_schedule_remote(struct poll_ctx *ctx);

/*
 * Run @ctx's poll() soon, from anywhere: an interrupt, its owner (one
 * locked OR into this CPU's word, inline), or another CPU (a locked OR
 * into the owner's word, then the wake-up IPI, since the owner may be
 * halted). Nothing for a context not added.
 */
static inline void poll_schedule(struct poll_ctx *ctx)
{
	if (__atomic_load_n(&ctx->cpu, __ATOMIC_ACQUIRE) != this_cpu()) {
		poll_schedule_remote(ctx);
		return;
	}
#ifdef UNIT_TEST
	__atomic_fetch_or(&this_cpu()->scheduled, ctx->bit, __ATOMIC_SEQ_CST);
#else
	__asm__ __volatile__("lock orl %0, %%gs:%c1"
			     :
			     : "r"(ctx->bit), "i"(PERCPU_SCHEDULED)
			     : "memory", "cc");
#endif
}

/*
 * On the owner: schedule @ctx once now_ns() reaches @deadline_ns, which
 * replaces the time it asked for before (UINT64_MAX: none; a context
 * with several times asks for the earliest). Forgotten once it fires.
 * The loop is awake by then: idle.c arms the timer for the earliest of
 * its contexts' times, and a pass reads the clock only while one is set.
 */
void poll_schedule_at(struct poll_ctx *ctx, uint64_t deadline_ns);

/* One pass: the timers due, then every context scheduled; the work they did. */
unsigned int poll_once(void);
/* The CPU's loop, CPU 0's and every AP's alike. */
void poll_loop(void) __attribute__((noreturn));

/* The earliest poll_schedule_at() this CPU has pending (UINT64_MAX: none). */
static inline uint64_t poll_next_due(void)
{
	return percpu_read(poll.next_due);
}

/*
 * Whether a context of this CPU is scheduled that the loop would run
 * (idle.c, interrupts off): one inside a blocking wait is not.
 */
static inline bool poll_scheduled(void)
{
	return percpu_read(scheduled) & ~percpu_read(poll.held);
}

/*
 * A source with no interrupt (irq=poll, a refused vector): look at @ctx
 * again at the next pass while the loop spins (idle=poll), else after
 * POLL_POLLED_NS, the 1 ms a periodic tick would give. On the owner.
 */
#define POLL_POLLED_NS 1000000ULL
void poll_schedule_polled(struct poll_ctx *ctx);

/* What the watchdog's look at some contexts found (poll_check). */
struct poll_finding {
	uint32_t owed, lost; /* the contexts with each verdict */
	struct poll_ctx *first; /* the first with work, and its queue */
	const char *what;
};

/*
 * The watchdog's look (idle.c): check() of this CPU's contexts in @bits
 * (those without a check() find nothing), @count passed on.
 */
void poll_check(uint32_t bits, bool count, struct poll_finding *f);
/* The contexts of this CPU (bits), and the one with bit @bit. */
uint32_t poll_ctx_bits(void);
struct poll_ctx *poll_ctx_at(uint32_t bit);

/*
 * What a blocking wait's step function says after each pass: the wait is
 * over, or not yet (and whether the step itself made progress, so the
 * loop must not sleep before calling it again).
 */
enum poll_step {
	POLL_AGAIN, /* nothing yet: the loop may idle until something is scheduled */
	POLL_PROGRESS, /* did work: call again at once */
	POLL_DONE,
};

/*
 * Block the caller (a console command) until @step says POLL_DONE or
 * now_ns() reaches @deadline_ns, running the loop between calls so no
 * context freezes; the context the caller runs in is not run again
 * meanwhile (it is running). After a pass that did work the step is
 * called again before the loop may halt. Returns true when @step
 * finished the wait, false on the deadline.
 */
bool poll_wait(enum poll_step (*step)(void *arg), void *arg, uint64_t deadline_ns);

/* Wait until @deadline_ns (ns since boot), serving everything meanwhile. */
void poll_sleep_until(uint64_t deadline_ns);

/* `stats poll` (poll_show.c); after stats_init. */
void poll_show_init(void);

/* The wake-up IPI's vector (set up by xcpu_init; -1: APs cannot be woken). */
extern int poll_ipi_vector;

#endif /* __ASSEMBLER__ */
#endif
