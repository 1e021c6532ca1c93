// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/idle.h"
#include "kernel/poll.h"
#include "kernel/time.h"

/*
 * A blocking wait's step function may itself wait for time (an ARP retry,
 * a stall limit), so poll_wait() sleeps at most this long between calls.
 */
#define POLL_WAIT_STEP_NS 1000000ULL

static const struct poller *pollers[POLL_MAX];
/* pollers[i]->poll, or one that does nothing: a pass loads one pointer */
static unsigned int (*poll_fns[POLL_MAX])(unsigned int budget);
static bool (*pending_fns[POLL_MAX])(void); /* pollers[i]->pending */
static unsigned int n_pollers;
uint64_t poll_next_wake = UINT64_MAX; /* poll_take_wake(), inline */

/*
 * Bit i stands for pollers[i]. A pass runs every_pass | raised in table
 * order; idle_wait asks the pending() hooks in has_pending & ask_pending
 * only.
 */
static uint32_t every_pass, has_pending, on_raise;
static uint32_t ask_pending = ~0u;
volatile uint32_t poll_raised;
/*
 * The one hook to ask when nothing is raised and it is the only one on,
 * of a poller that is not on_raise: its answer is then the check's (the
 * vsock driver's TX queue, the common case before a halt). NULL: walk.
 */
static bool (*only_hook)(void);
static bool no_hook(void)
{
	return false;
}

struct poll_period_req {
	const void *owner;
	uint64_t period_ns;
};

static struct poll_period_req periods[POLL_MAX];
uint64_t poll_shortest_period = UINT64_MAX; /* poll_period(), inline */

_Static_assert(POLL_MAX <= 32, "one bit per poller in a uint32_t");

static unsigned int nothing_to_poll(unsigned int budget)
{
	return 0;
}

static void only_hook_update(void)
{
	uint32_t ask = has_pending & ask_pending;

	only_hook = NULL;
	if (!ask)
		only_hook = no_hook;
	else if (!(ask & (ask - 1)) && !(ask & on_raise))
		only_hook = pending_fns[__builtin_ctz(ask)];
}

int poll_register(const struct poller *p)
{
	uint32_t bit;

	if (poll_bit(p))
		return 0;
	if (n_pollers == POLL_MAX)
		return -ENOSPC;
	bit = 1u << n_pollers;
	poll_fns[n_pollers] = p->poll ? p->poll : nothing_to_poll;
	pending_fns[n_pollers] = p->pending;
	pollers[n_pollers++] = p;
	if (p->poll && !p->on_raise)
		every_pass |= bit;
	if (p->poll && p->on_raise)
		on_raise |= bit;
	if (p->pending)
		has_pending |= bit;
	only_hook_update();
	return 0;
}

uint32_t poll_bit(const struct poller *p)
{
	for (unsigned int i = 0; i < n_pollers; i++)
		if (pollers[i] == p)
			return 1u << i;
	return 0;
}

void poll_raise(uint32_t bits)
{
	__atomic_fetch_or(&poll_raised, bits, __ATOMIC_RELAXED);
}

void poll_ask_pending(uint32_t bits, bool on)
{
	ask_pending = on ? ask_pending | bits : ask_pending & ~bits;
	only_hook_update();
}

void poll_keep(uint32_t bits, bool on)
{
	bits &= on_raise;
	every_pass = on ? every_pass | bits : every_pass & ~bits;
}

/* Take the raised bits in @mask (one locked AND, only when there are). */
static uint32_t take_raised(uint32_t mask)
{
	uint32_t r = poll_raised & mask;

	if (r)
		__atomic_fetch_and(&poll_raised, ~r, __ATOMIC_RELAXED);
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
	uint32_t todo = every_pass | __atomic_exchange_n(&poll_raised, 0, __ATOMIC_RELAXED);
	unsigned int work = 0;

	while (todo) {
		unsigned int i = __builtin_ctz(todo);

		todo &= todo - 1;
		work += poll_fns[i](POLL_BUDGET);
		if (poll_raised)
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
static bool ask_pollers(uint32_t ask, bool work)
{
	while (ask) {
		unsigned int i = __builtin_ctz(ask);

		ask &= ask - 1;
		if (pending_fns[i]()) {
			if (on_raise & (1u << i)) /* the others run next pass anyway */
				poll_raise(1u << i);
			work = true;
			ask &= ~every_pass;
		}
	}
	return work;
}

/* The common check before a halt: nothing raised, only_hook's answer. */
bool poll_pending(void)
{
	uint32_t ask;

	if (!poll_raised && only_hook)
		return only_hook();
	ask = has_pending & ask_pending;
	if (poll_raised)
		return ask & ~every_pass ? ask_pollers(ask & ~every_pass, true) : true;
	return ask_pollers(ask, false);
}

void poll_wake_at(uint64_t deadline_ns)
{
	if (deadline_ns < poll_next_wake)
		poll_next_wake = deadline_ns;
}

static void periods_update(void)
{
	poll_shortest_period = UINT64_MAX;
	for (unsigned int i = 0; i < POLL_MAX; i++)
		if (periods[i].owner && periods[i].period_ns < poll_shortest_period)
			poll_shortest_period = periods[i].period_ns;
}

/* The owner's slot, else a free one; NULL when neither exists. */
static struct poll_period_req *period_slot(const void *owner)
{
	struct poll_period_req *free_slot = NULL;

	for (unsigned int i = 0; i < POLL_MAX; i++) {
		if (periods[i].owner == owner)
			return &periods[i];
		if (!periods[i].owner && !free_slot)
			free_slot = &periods[i];
	}
	return free_slot;
}

int poll_every(const void *owner, uint64_t period_ns)
{
	struct poll_period_req *r = period_slot(owner);

	if (!r)
		return period_ns ? -ENOSPC : 0;
	*r = period_ns ? (struct poll_period_req){ owner, period_ns } :
			 (struct poll_period_req){ NULL, 0 };
	periods_update();
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
