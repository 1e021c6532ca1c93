// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/idle.h"
#include "kernel/io.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/time.h"

/*
 * A blocking wait's step function may itself wait for time (an ARP retry,
 * a stall limit), so poll_wait() sleeps at most this long between calls.
 */
#define POLL_WAIT_STEP_NS 1000000ULL

/*
 * Each CPU's registry is its own (kernel/percpu.h): pollers[i] of
 * this_cpu()->poll, bit i in its words. A pass runs every_pass | raised
 * in table order; idle_wait asks the pending() hooks in has_pending &
 * ask_pending only. only_hook: the one hook to ask when nothing is
 * raised and it is the only one on, of a poller that is not on_raise: its
 * answer is then the check's (the vsock driver's TX queue, the common
 * case before a halt). NULL: walk.
 */
struct percpu percpu_boot = {
	.self = &percpu_boot,
	.poll = { .ask_pending = ~0u, .next_wake = UINT64_MAX, .shortest_period = UINT64_MAX },
	.idle = { .tick_deadline = true },
};

#ifdef UNIT_TEST
struct percpu *percpu_unit_cpu = &percpu_boot;
#endif

static bool no_hook(void)
{
	return false;
}

_Static_assert(POLL_MAX <= 32, "one bit per poller in a uint32_t");
_Static_assert(POLL_MAX == PERCPU_POLL_MAX, "percpu.h sizes the tables");

#define MSR_GS_BASE 0xc0000101

void percpu_init(struct percpu *p, unsigned int index)
{
	memset(p, 0, sizeof(*p));
	p->self = p;
	p->index = index;
	p->poll.ask_pending = ~0u;
	p->poll.next_wake = UINT64_MAX;
	p->poll.shortest_period = UINT64_MAX;
	p->idle.tick_deadline = true;
}

void percpu_enter(struct percpu *p)
{
#ifndef UNIT_TEST
	wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)p);
#endif
}

static unsigned int nothing_to_poll(unsigned int budget)
{
	return 0;
}

static void only_hook_update(struct poll_cpu *pc)
{
	uint32_t ask = pc->has_pending & pc->ask_pending;

	pc->only_hook = NULL;
	if (!ask)
		pc->only_hook = no_hook;
	else if (!(ask & (ask - 1)) && !(ask & pc->on_raise))
		pc->only_hook = pc->pending_fns[__builtin_ctz(ask)];
}

int poll_register(const struct poller *p)
{
	struct poll_cpu *pc = &this_cpu()->poll;
	unsigned int n = pc->n_pollers;
	uint32_t bit;

	if (poll_bit(p))
		return 0;
	if (n == POLL_MAX)
		return -ENOSPC;
	bit = 1u << n;
	pc->poll_fns[n] = p->poll ? p->poll : nothing_to_poll;
	pc->pending_fns[n] = p->pending;
	pc->pollers[n] = p;
	pc->n_pollers = n + 1;
	if (p->poll && !p->on_raise)
		pc->every_pass |= bit;
	if (p->poll && p->on_raise)
		pc->on_raise |= bit;
	if (p->pending)
		pc->has_pending |= bit;
	only_hook_update(pc);
	return 0;
}

uint32_t poll_bit(const struct poller *p)
{
	const struct poll_cpu *pc = &this_cpu()->poll;

	for (unsigned int i = 0; i < pc->n_pollers; i++)
		if (pc->pollers[i] == p)
			return 1u << i;
	return 0;
}

void poll_raise(uint32_t bits)
{
#ifdef UNIT_TEST
	__atomic_fetch_or(&this_cpu()->raised, bits, __ATOMIC_RELAXED);
#else
	__asm__ __volatile__("lock orl %0, %%gs:%c1"
			     :
			     : "r"(bits), "i"(PERCPU_RAISED)
			     : "memory", "cc");
#endif
}

void poll_raise_on(struct percpu *cpu, uint32_t bits)
{
	__atomic_fetch_or(&cpu->raised, bits, __ATOMIC_RELEASE);
}

void poll_ask_pending(uint32_t bits, bool on)
{
	struct poll_cpu *pc = &this_cpu()->poll;

	pc->ask_pending = on ? pc->ask_pending | bits : pc->ask_pending & ~bits;
	only_hook_update(pc);
}

void poll_keep(uint32_t bits, bool on)
{
	struct poll_cpu *pc = &this_cpu()->poll;

	bits &= pc->on_raise;
	pc->every_pass = on ? pc->every_pass | bits : pc->every_pass & ~bits;
}

/* Take all the raised bits: one xchg with the word through %gs. */
static inline uint32_t raised_take_all(void)
{
#ifdef UNIT_TEST
	return __atomic_exchange_n(&this_cpu()->raised, 0, __ATOMIC_ACQUIRE);
#else
	uint32_t r = 0;

	__asm__ __volatile__("xchgl %0, %%gs:%c1" : "+r"(r) : "i"(PERCPU_RAISED) : "memory");
	return r;
#endif
}

/*
 * Take the raised bits in @mask (one locked AND, only when there are),
 * through %gs: a pass keeps no base register for it.
 */
static inline uint32_t take_raised(uint32_t mask)
{
	uint32_t r = percpu_read(raised) & mask;

	if (r) {
#ifdef UNIT_TEST
		__atomic_fetch_and(&this_cpu()->raised, ~r, __ATOMIC_RELAXED);
#else
		__asm__ __volatile__("lock andl %0, %%gs:%c1"
				     :
				     : "r"(~r), "i"(PERCPU_RAISED)
				     : "memory", "cc");
#endif
	}
	return r;
}

/*
 * Lowest bit first, so pollers run in table order; a poller may raise one
 * after it (the socket layer's poller raising a service), which then runs
 * in the same pass instead of costing another. One raised for an earlier
 * slot (or itself) runs in the next pass.
 */
unsigned int poll_once(void)
{
	/* all of them at once: one xchg, no test */
	uint32_t todo = percpu_read(poll.every_pass) | raised_take_all();
	unsigned int work = 0;

	while (todo) {
		unsigned int i = (unsigned int)__builtin_ctz(todo);

		todo &= todo - 1;
		work += percpu_read_at(poll.poll_fns, i)(POLL_BUDGET);
		if (percpu_read(raised))
			todo |= take_raised(~0u << i << 1);
	}
	return work;
}

/*
 * Once one says yes the loop stays awake, so only the on_raise pollers
 * are still asked: they run on nothing else, and a device that keeps an
 * every-pass poller busy (a TX ring a broken queue never drains) must not
 * keep the recovery from being raised.
 */
static bool ask_pollers(const struct poll_cpu *pc, uint32_t ask, bool work)
{
	while (ask) {
		unsigned int i = __builtin_ctz(ask);

		ask &= ask - 1;
		if (pc->pending_fns[i]()) {
			if (pc->on_raise & (1u << i)) /* the others run next pass anyway */
				poll_raise(1u << i);
			work = true;
			ask &= ~pc->every_pass;
		}
	}
	return work;
}

/* The common check before a halt: nothing raised, only_hook's answer. */
bool poll_pending(void)
{
	struct percpu *cpu;
	const struct poll_cpu *pc;
	bool (*hook)(void) = percpu_read(poll.only_hook);
	uint32_t ask;

	if (!percpu_read(raised) && hook)
		return hook();
	cpu = this_cpu();
	pc = &cpu->poll;
	ask = pc->has_pending & pc->ask_pending;
	if (cpu->raised)
		return ask & ~pc->every_pass ? ask_pollers(pc, ask & ~pc->every_pass, true) : true;
	return ask_pollers(pc, ask, false);
}

void poll_wake_at(uint64_t deadline_ns)
{
	struct poll_cpu *pc = &this_cpu()->poll;

	if (deadline_ns < pc->next_wake)
		pc->next_wake = deadline_ns;
}

static void periods_update(struct poll_cpu *pc)
{
	pc->shortest_period = UINT64_MAX;
	for (unsigned int i = 0; i < POLL_MAX; i++)
		if (pc->periods[i].owner && pc->periods[i].period_ns < pc->shortest_period)
			pc->shortest_period = pc->periods[i].period_ns;
}

/* The owner's slot, else a free one; NULL when neither exists. */
static struct poll_period_req *period_slot(struct poll_cpu *pc, const void *owner)
{
	struct poll_period_req *free_slot = NULL;

	for (unsigned int i = 0; i < POLL_MAX; i++) {
		if (pc->periods[i].owner == owner)
			return &pc->periods[i];
		if (!pc->periods[i].owner && !free_slot)
			free_slot = &pc->periods[i];
	}
	return free_slot;
}

int poll_every(const void *owner, uint64_t period_ns)
{
	struct poll_cpu *pc = &this_cpu()->poll;
	struct poll_period_req *r = period_slot(pc, owner);

	if (!r)
		return period_ns ? -ENOSPC : 0;
	*r = period_ns ? (struct poll_period_req){ owner, period_ns } :
			 (struct poll_period_req){ NULL, 0 };
	periods_update(pc);
	return 0;
}

bool poll_wait(enum poll_step (*step)(void *arg), void *arg, uint64_t deadline_ns)
{
	for (;;) {
		enum poll_step s = step(arg);

		if (s == POLL_DONE)
			return true;
		if (now_ns() >= deadline_ns)
			return false;
		if (!poll_once() && s == POLL_AGAIN) {
			uint64_t step_at = now_ns() + POLL_WAIT_STEP_NS;

			poll_wake_at(step_at < deadline_ns ? step_at : deadline_ns);
			idle_wait();
		} else {
			/* busy: idle_wait does not ask, the on_raise pollers must be */
			poll_pending();
		}
	}
}

static enum poll_step never_done(void *arg)
{
	return POLL_AGAIN;
}

void poll_sleep_until(uint64_t deadline_ns)
{
	poll_wait(never_done, NULL, deadline_ns);
}
