// SPDX-License-Identifier: MIT
/*
 * `stats poll`: the poll contexts of CPU 0's loop, in table order, with
 * the times each ran and the work it reported, and every CPU's passes
 * (another CPU's counts are read as statistics, a moment old at most).
 */
#include <stdio.h>

#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/stats.h"

static void poll_stats(void)
{
	const struct poll_cpu *pc = &percpu_boot.poll;

	for (uint32_t bits = pc->used; bits; bits &= bits - 1) {
		const struct poll_ctx *ctx = pc->ctx[__builtin_ctz(bits)];

		printf("  cpu 0 %-24s polls %llu%s\n", ctx->name, (unsigned long long)ctx->polls,
		       ctx->due_ns != UINT64_MAX ? " (timer set)" : "");
	}
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++) {
		const struct percpu *p = percpu_of(c);

		if (p)
			printf("  cpu %u passes %llu contexts %u\n", c,
			       (unsigned long long)p->poll.passes,
			       (unsigned int)__builtin_popcount(p->poll.used));
	}
}

static void poll_stats_json(struct json_writer *w)
{
	const struct poll_cpu *pc = &percpu_boot.poll;

	json_open(w, "contexts", '[');
	for (uint32_t bits = pc->used; bits; bits &= bits - 1) {
		const struct poll_ctx *ctx = pc->ctx[__builtin_ctz(bits)];

		json_open(w, NULL, '{');
		json_put_string(w, "name", ctx->name);
		json_put_u64(w, "polls", ctx->polls);
		json_close(w, '}');
	}
	json_close(w, ']');
	json_open(w, "cpus", '[');
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++) {
		const struct percpu *p = percpu_of(c);

		if (!p)
			continue;
		json_open(w, NULL, '{');
		json_put_u64(w, "cpu", c);
		json_put_u64(w, "passes", p->poll.passes);
		json_close(w, '}');
	}
	json_close(w, ']');
}

void poll_show_init(void)
{
	stats_register("poll", poll_stats, poll_stats_json);
}
