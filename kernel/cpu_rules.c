// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "kernel/cpu_rules.h"
#include "kernel/idle.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"

/*
 * CPU 0's, scheduled by an AP that broke a rule or whose idle watchdog
 * found something: says so, a rule once per new break, a finding once
 * per kind and CPU (as CPU 0 says its own).
 */
static unsigned int report_poll(struct poll_ctx *ctx, unsigned int budget)
{
	static uint64_t reported[PERCPU_MAX_CPUS];
	static bool said[PERCPU_MAX_CPUS][2];
	unsigned int n = 0;

	for (unsigned int i = 1; i < PERCPU_MAX_CPUS; i++) {
		const struct percpu *p = percpu_of(i);
		uint64_t broke = p ? __atomic_load_n(&p->prints_refused, __ATOMIC_RELAXED) : 0;

		for (unsigned int k = 0; p && k < 2; k++) {
			const uint64_t *found = k ? &p->idle.missed : &p->idle.lost;

			/* a moment stale at most: the AP writes its finding before the count */
			if (!said[i][k] && __atomic_load_n(found, __ATOMIC_ACQUIRE)) {
				idle_say(i, &p->idle.last[k]);
				said[i][k] = true;
				n++;
			}
		}
		if (broke == reported[i])
			continue;
		printf("BUG: cpu %u wrote to the console, which is cpu 0's: %llu writes dropped\n",
		       i, (unsigned long long)broke);
		reported[i] = broke;
		n++;
	}
	return n;
}

static struct poll_ctx report_ctx = {
	.name = "cpu-rules",
	.poll = report_poll,
};

void cpu_rules_init(void)
{
	poll_ctx_add(&report_ctx);
}

void cpu_rules_tell(void)
{
	poll_schedule(&report_ctx);
}

bool cpu_may_print(void)
{
	if (!percpu_read(index))
		return true;
	percpu_inc(prints_refused);
	poll_schedule(&report_ctx);
	return false;
}
