// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stddef.h>

#include "kernel/idle.h"
#include "kernel/poll.h"
#include "kernel/time.h"

static const struct poller *pollers[POLL_MAX];
static unsigned int n_pollers;

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

bool poll_wait(enum poll_step (*step)(void *arg), void *arg, uint64_t deadline_ns)
{
	for (;;) {
		enum poll_step s = step(arg);

		if (s == POLL_DONE)
			return true;
		if (now_ns() >= deadline_ns)
			return false;
		if (!poll_once() && s == POLL_AGAIN)
			idle_wait();
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
