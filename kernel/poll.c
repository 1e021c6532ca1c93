// SPDX-License-Identifier: MIT
#include <errno.h>
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
static unsigned int n_pollers;
static uint64_t next_wake = UINT64_MAX;

struct poll_period_req {
	const void *owner;
	uint64_t period_ns;
};

static struct poll_period_req periods[POLL_MAX];
static uint64_t shortest_period = UINT64_MAX;

int poll_register(const struct poller *p)
{
	for (unsigned int i = 0; i < n_pollers; i++)
		if (pollers[i] == p)
			return 0;
	if (n_pollers == POLL_MAX)
		return -ENOSPC;
	pollers[n_pollers++] = p;
	return 0;
}

unsigned int poll_once(void)
{
	unsigned int work = 0;

	for (unsigned int i = 0; i < n_pollers; i++)
		if (pollers[i]->poll)
			work += pollers[i]->poll(POLL_BUDGET);
	return work;
}

bool poll_pending(void)
{
	for (unsigned int i = 0; i < n_pollers; i++)
		if (pollers[i]->pending && pollers[i]->pending())
			return true;
	return false;
}

void poll_wake_at(uint64_t deadline_ns)
{
	if (deadline_ns < next_wake)
		next_wake = deadline_ns;
}

uint64_t poll_take_wake(void)
{
	uint64_t t = next_wake;

	next_wake = UINT64_MAX;
	return t;
}

static void periods_update(void)
{
	shortest_period = UINT64_MAX;
	for (unsigned int i = 0; i < POLL_MAX; i++)
		if (periods[i].owner && periods[i].period_ns < shortest_period)
			shortest_period = periods[i].period_ns;
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

uint64_t poll_period(void)
{
	return shortest_period;
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
