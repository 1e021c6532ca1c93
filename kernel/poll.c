// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/idle.h"
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/time.h"

/*
 * A blocking wait's step function may itself wait for time (an ARP retry,
 * a stall limit), so poll_wait() sleeps at most this long between calls.
 */
#define POLL_WAIT_STEP_NS 1000000ULL

_Static_assert(POLL_MAX <= 32, "one bit per context in a uint32_t");
_Static_assert(POLL_MAX == PERCPU_POLL_MAX, "percpu.h sizes the tables");

static unsigned int nothing_to_poll(struct poll_ctx *ctx, unsigned int budget)
{
	return 0;
}

/* What an empty slot holds, so a pass never tests for one. */
static struct poll_ctx empty_slot = { .name = "-", .poll = nothing_to_poll };

struct percpu percpu_boot = {
	.self = &percpu_boot,
	.poll = { .next_due = UINT64_MAX,
		  .current = POLL_MAX,
		  .ctx = { [0 ... POLL_MAX - 1] = &empty_slot } },
	.idle = { .tick_deadline = true },
};

struct percpu *percpu_cpus[PERCPU_MAX_CPUS] = { &percpu_boot };

int poll_ipi_vector = -1;

#ifdef UNIT_TEST
struct percpu *percpu_unit_cpu = &percpu_boot;
static char percpu_section[1];
#define __percpu_start percpu_section
#define __percpu_end percpu_section
#else
/* kernel/linker.ld: the linked (CPU 0's) DEFINE_PER_CPU variables */
extern char __percpu_start[], __percpu_end[];
#endif

#define MSR_GS_BASE 0xc0000101

size_t percpu_area_size(void)
{
	return (size_t)(__percpu_end - __percpu_start);
}

void percpu_init(struct percpu *p, unsigned int index, uint32_t apic_id, void *area)
{
	memset(p, 0, sizeof(*p));
	p->self = p;
	p->index = index;
	p->apic_id = apic_id;
	p->area_offset = area ? (uintptr_t)area - (uintptr_t)__percpu_start : 0;
	p->poll.next_due = UINT64_MAX;
	p->poll.current = POLL_MAX;
	for (unsigned int i = 0; i < POLL_MAX; i++)
		p->poll.ctx[i] = &empty_slot;
	p->idle.tick_deadline = true;
	if (index < PERCPU_MAX_CPUS)
		percpu_cpus[index] = p;
}

void percpu_enter(struct percpu *p)
{
#ifndef UNIT_TEST
	wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)p);
#endif
}

/* @bits into this CPU's word: one locked OR through %gs (safe from an interrupt). */
static inline void schedule_here(uint32_t bits)
{
#ifdef UNIT_TEST
	__atomic_fetch_or(&this_cpu()->scheduled, bits, __ATOMIC_SEQ_CST);
#else
	__asm__ __volatile__("lock orl %0, %%gs:%c1"
			     :
			     : "r"(bits), "i"(PERCPU_SCHEDULED)
			     : "memory", "cc");
#endif
}

int poll_ctx_add(struct poll_ctx *ctx)
{
	struct percpu *cpu = this_cpu();
	struct poll_cpu *pc = &cpu->poll;
	uint32_t free = ~pc->used & (uint32_t)((1ull << POLL_MAX) - 1);
	struct percpu *none = NULL;
	unsigned int i;

	if (!free)
		return -ENOSPC;
	/*
	 * Claimed first, so two CPUs adding one context (a request that came
	 * late, after another CPU took its work over) cannot both win. A
	 * scheduler that sees the owner before the bit below ORs nothing:
	 * the schedule_here at the end looks at what it published.
	 */
	if (!__atomic_compare_exchange_n(&ctx->cpu, &none, cpu, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED))
		return -EBUSY;
	i = (unsigned int)__builtin_ctz(free);
	pc->ctx[i] = ctx;
	pc->used |= 1u << i;
	ctx->due_ns = UINT64_MAX;
	__atomic_store_n(&ctx->bit, 1u << i, __ATOMIC_RELEASE);
	schedule_here(ctx->bit);
	return 0;
}

static void next_due_update(struct poll_cpu *pc)
{
	uint64_t next = UINT64_MAX;

	for (uint32_t bits = pc->used; bits; bits &= bits - 1) {
		const struct poll_ctx *ctx = pc->ctx[__builtin_ctz(bits)];

		if (ctx->due_ns < next)
			next = ctx->due_ns;
	}
	pc->next_due = next;
}

void poll_ctx_del(struct poll_ctx *ctx)
{
	struct percpu *cpu = this_cpu();
	struct poll_cpu *pc = &cpu->poll;
	uint32_t bit = ctx->bit;

	if (ctx->cpu != cpu || !bit)
		return;
	__atomic_store_n(&ctx->cpu, NULL, __ATOMIC_RELEASE);
	ctx->bit = 0; /* an interrupt entry still pointing here raises nothing */
	__atomic_fetch_and(&cpu->scheduled, ~bit, __ATOMIC_SEQ_CST);
	pc->ctx[__builtin_ctz(bit)] = &empty_slot;
	pc->used &= ~bit;
	if (ctx->due_ns != UINT64_MAX) {
		ctx->due_ns = UINT64_MAX;
		next_due_update(pc);
	}
}

void poll_schedule_remote(struct poll_ctx *ctx)
{
	struct percpu *cpu;

	/*
	 * What the caller wrote for @ctx before this, then the owner: a
	 * context being added on its CPU stores its owner and then looks
	 * for work, so one of the two sides sees the other (a full barrier
	 * on each, 8.2.3.4 of SDM 3A).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	cpu = __atomic_load_n(&ctx->cpu, __ATOMIC_ACQUIRE);
	if (!cpu)
		return;
	/* a locked OR: what the caller wrote for @ctx is visible with the bit */
	__atomic_fetch_or(&cpu->scheduled, __atomic_load_n(&ctx->bit, __ATOMIC_RELAXED),
			  __ATOMIC_SEQ_CST);
#ifndef UNIT_TEST
	if (poll_ipi_vector >= 0)
		lapic_send_ipi(cpu->apic_id, (uint8_t)poll_ipi_vector);
#endif
}

void poll_schedule_at(struct poll_ctx *ctx, uint64_t deadline_ns)
{
	struct percpu *cpu = this_cpu();
	uint64_t was = ctx->due_ns;

	if (ctx->cpu != cpu || deadline_ns == was)
		return; /* the owner's alone: its table, its timer */
	ctx->due_ns = deadline_ns;
	if (deadline_ns < cpu->poll.next_due)
		cpu->poll.next_due = deadline_ns;
	else if (was == cpu->poll.next_due)
		next_due_update(&cpu->poll); /* it was the earliest: find the next */
}

void poll_schedule_polled(struct poll_ctx *ctx)
{
	if (idle_halts())
		poll_schedule_at(ctx, now_ns() + POLL_POLLED_NS);
	else
		poll_schedule(ctx);
}

/* The contexts whose time came: scheduled, their time forgotten. */
static void run_timers(struct poll_cpu *pc, uint64_t now)
{
	uint32_t due = 0;

	for (uint32_t bits = pc->used; bits; bits &= bits - 1) {
		struct poll_ctx *ctx = pc->ctx[__builtin_ctz(bits)];

		if (ctx->due_ns <= now) {
			ctx->due_ns = UINT64_MAX;
			due |= ctx->bit;
		}
	}
	next_due_update(pc);
	if (due)
		schedule_here(due);
}

/* Take the scheduled bits in @mask: one xchg when all, a locked AND otherwise. */
static inline uint32_t take_scheduled(uint32_t mask)
{
	uint32_t r = percpu_read(scheduled) & mask;

	if (r)
		__atomic_fetch_and(&this_cpu()->scheduled, ~r, __ATOMIC_SEQ_CST);
	return r;
}

static inline uint32_t take_all_scheduled(void)
{
#ifdef UNIT_TEST
	return __atomic_exchange_n(&this_cpu()->scheduled, 0, __ATOMIC_SEQ_CST);
#else
	uint32_t r = 0;

	__asm__ __volatile__("xchgl %0, %%gs:%c1" : "+r"(r) : "i"(PERCPU_SCHEDULED) : "memory");
	return r;
#endif
}

/*
 * Lowest bit first, so contexts run in table order; one scheduled for a
 * later slot during the pass (the socket layer scheduling a service)
 * runs in the same pass instead of costing another, one for an earlier
 * slot (or itself) in the next. A context inside a blocking wait (held)
 * keeps its bit for when the wait returns; a wait inside a context's
 * poll() gives its hold back before that poll() returns, so the held
 * bits read at the start stand for the whole pass. The bits the pass has
 * still to run are kept in pc->todo, where a wait that begins inside it
 * puts them back (poll_wait): they run in the wait's passes. The budget
 * used up keeps a context scheduled. A bit left for a slot emptied
 * meanwhile runs the empty slot's context, which does nothing.
 */
unsigned int poll_once(void)
{
	struct poll_cpu *pc = &this_cpu()->poll;
	unsigned int work = 0;
	uint32_t todo, held = pc->held;

	if (pc->next_due != UINT64_MAX) {
		uint64_t now = now_ns();

		if (now >= pc->next_due)
			run_timers(pc, now);
	}
	todo = take_all_scheduled();
	if (todo & held) {
		schedule_here(todo & held);
		todo &= ~held;
	}
	pc->passes++;
	while (todo) {
		unsigned int i = (unsigned int)__builtin_ctz(todo);
		struct poll_ctx *ctx = pc->ctx[i];
		unsigned int done;
		uint32_t more;

		pc->todo = todo & (todo - 1);
		pc->current = i; /* for a poll_wait inside it */
		done = ctx->poll(ctx, POLL_BUDGET);
		ctx->polls++;
		if (__builtin_expect(done >= POLL_BUDGET, 0))
			schedule_here(1u << i);
		work += done;
		todo = pc->todo;
		more = percpu_read(scheduled);
		if (more && (more &= ~held & (~0u << i << 1)))
			todo |= take_scheduled(more);
	}
	pc->todo = 0;
	pc->current = POLL_MAX; /* between passes no context runs */
	return work;
}

void poll_loop(void)
{
	for (;;) {
		poll_once();
		idle_wait(UINT64_MAX);
	}
}

uint32_t poll_ctx_bits(void)
{
	return this_cpu()->poll.used;
}

struct poll_ctx *poll_ctx_at(uint32_t bit)
{
	return bit ? this_cpu()->poll.ctx[__builtin_ctz(bit)] : NULL;
}

void poll_check(uint32_t bits, bool count, struct poll_finding *f)
{
	struct poll_cpu *pc = &this_cpu()->poll;

	memset(f, 0, sizeof(*f));
	for (bits &= pc->used; bits; bits &= bits - 1) {
		struct poll_ctx *ctx = pc->ctx[__builtin_ctz(bits)];
		const char *what = ctx->name;
		enum poll_verdict v;

		if (!ctx->check)
			continue;
		v = ctx->check(ctx, count, &what);
		if (v == POLL_IDLE)
			continue;
		if (v == POLL_OWED)
			f->owed |= ctx->bit;
		else
			f->lost |= ctx->bit;
		if (!f->first) {
			f->first = ctx;
			f->what = what;
		}
	}
}

/*
 * The context this wait runs in (the one whose poll() ran last here) is
 * held: its bit stays for when the wait returns, and a pass does not
 * run it inside its own wait. Waits nest: each releases its own hold.
 */
bool poll_wait(enum poll_step (*step)(void *arg), void *arg, uint64_t deadline_ns)
{
	struct poll_cpu *pc = &this_cpu()->poll;
	unsigned int caller = pc->current;
	uint32_t hold = caller < POLL_MAX ? (1u << caller) & pc->used & ~pc->held : 0;
	bool done = false;

	/* what the pass this wait began in had still to run: the wait's passes run it */
	if (pc->todo) {
		schedule_here(pc->todo);
		pc->todo = 0;
	}
	pc->held |= hold;
	for (;;) {
		enum poll_step s = step(arg);
		uint64_t now;

		if (s == POLL_DONE) {
			done = true;
			break;
		}
		now = now_ns();
		if (now >= deadline_ns)
			break;
		if (!poll_once() && s == POLL_AGAIN) {
			uint64_t step_at = now + POLL_WAIT_STEP_NS;

			idle_wait(step_at < deadline_ns ? step_at : deadline_ns);
		}
	}
	pc->held &= ~hold;
	pc->current = caller; /* the passes inside ran others: a second wait holds it again */
	return done;
}

static enum poll_step never_done(void *arg)
{
	return POLL_AGAIN;
}

void poll_sleep_until(uint64_t deadline_ns)
{
	poll_wait(never_done, NULL, deadline_ns);
}
