// SPDX-License-Identifier: MIT
/*
 * The poll contract (kernel/poll.h) against kernel/poll.c itself: a
 * context added to its CPU's loop is scheduled once; poll_schedule sets
 * its bit in its owner's word, from the owner or from another CPU; a
 * pass runs the scheduled contexts in table order, one scheduled during
 * the pass for a later slot in the same pass, one for an earlier slot
 * (or itself) in the next; a context that used its whole budget runs
 * again; one inside a blocking wait is not run again and keeps its bit,
 * and a wait outside every context holds none; poll_schedule_at
 * schedules at its time, a new time replaces the last, and the earliest
 * is the CPU's next_due; a context taken out loses its bit and its timer
 * and cannot be scheduled; poll_check gathers the watchdog's verdicts;
 * poll_wait lets the loop sleep only after a pass that did nothing and a
 * step that asked to wait. idle_wait and the clock are stub_kernel.c's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "stub_kernel.h"

/* kernel/poll.c's POLL_WAIT_STEP_NS: the longest sleep between a wait's steps */
#define WAIT_STEP_NS 1000000ULL

/* Two CPUs, each with its own loop: the BSP (index 0) and an AP. */
static struct percpu bsp, ap;

/* ---- contexts that say what they were asked ---- */

#define N_CTX (POLL_MAX + 1)

struct test_ctx {
	struct poll_ctx ctx;
	unsigned int runs, budget;
	unsigned int work; /* what its poll() returns */
	void (*during)(struct test_ctx *t); /* run inside its poll() */
	enum poll_verdict verdict; /* what its check() finds */
	const char *what; /* and names */
	unsigned int checks, counted;
};

static struct test_ctx t[N_CTX];
static unsigned int order[64], n_order; /* which contexts ran, in order */

static unsigned int test_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct test_ctx *c = (struct test_ctx *)ctx;

	c->runs++;
	c->budget = budget;
	if (n_order < 64)
		order[n_order++] = (unsigned int)(c - t);
	if (c->during)
		c->during(c);
	return c->work;
}

static enum poll_verdict test_check(struct poll_ctx *ctx, bool count, const char **what)
{
	struct test_ctx *c = (struct test_ctx *)ctx;

	c->checks++;
	c->counted += count;
	if (c->what)
		*what = c->what;
	return c->verdict;
}

static char names[N_CTX][16];

static int setup(void **state)
{
	percpu_init(&bsp, 0, 0, NULL);
	percpu_init(&ap, 1, 1, NULL);
	stub_cpu_enter(&bsp);
	memset(t, 0, sizeof(t));
	for (int i = 0; i < N_CTX; i++) {
		snprintf(names[i], sizeof(names[i]), "c%d", i);
		t[i].ctx = (struct poll_ctx){ .name = names[i], .poll = test_poll };
	}
	n_order = 0;
	stub_now = 1000;
	stub_idle_waits = 0;
	stub_idle_wake_by = 0;
	stub_idle_hook = NULL;
	stub_idle_halt = false;
	return 0;
}

static int teardown(void **state)
{
	stub_cpu_enter(&percpu_boot);
	percpu_cpus[0] = &percpu_boot;
	stub_cpu_stop(1);
	return 0;
}

/* @n contexts added on the running CPU, in slots 0..n-1, nothing scheduled. */
static void add(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(poll_ctx_add(&t[i].ctx), 0);
		assert_int_equal(t[i].ctx.bit, 1u << i);
	}
	this_cpu()->scheduled = 0;
}

static void assert_order(const unsigned int *want, unsigned int n)
{
	assert_int_equal(n_order, n);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(order[i], want[i]);
	n_order = 0;
}

/* ---- add, del, schedule ---- */

static void test_add_schedules_once_and_refuses_twice(void **state)
{
	assert_int_equal(poll_ctx_add(&t[0].ctx), 0);
	assert_ptr_equal(t[0].ctx.cpu, &bsp);
	assert_int_equal(t[0].ctx.bit, 1);
	assert_true(t[0].ctx.due_ns == UINT64_MAX);
	/* what came before it was added is looked at: scheduled once */
	assert_int_equal(bsp.scheduled, 1);
	assert_true(poll_scheduled());
	assert_int_equal(poll_ctx_add(&t[0].ctx), -EBUSY);
	assert_int_equal(poll_ctx_add(&t[1].ctx), 0);
	assert_int_equal(t[1].ctx.bit, 2);
	assert_int_equal(poll_ctx_bits(), 3);
	assert_ptr_equal(poll_ctx_at(2), &t[1].ctx);
	assert_null(poll_ctx_at(0));
	poll_once();
	assert_int_equal(t[0].runs, 1);
	assert_int_equal(t[1].runs, 1);
	assert_false(poll_scheduled());
	poll_once(); /* nothing scheduled: nothing runs */
	assert_int_equal(t[0].runs, 1);
	assert_int_equal(t[0].ctx.polls, 1);
	assert_int_equal(bsp.poll.passes, 2);
}

static void test_table_is_bounded(void **state)
{
	for (int i = 0; i < POLL_MAX; i++)
		assert_int_equal(poll_ctx_add(&t[i].ctx), 0);
	assert_int_equal(poll_ctx_add(&t[POLL_MAX].ctx), -ENOSPC);
	assert_null(t[POLL_MAX].ctx.cpu);
	/* a slot given back is taken again, the lowest first */
	poll_ctx_del(&t[3].ctx);
	assert_int_equal(poll_ctx_add(&t[POLL_MAX].ctx), 0);
	assert_int_equal(t[POLL_MAX].ctx.bit, 1u << 3);
}

static void test_schedule_from_the_owner(void **state)
{
	add(3);
	poll_schedule(&t[1].ctx);
	assert_int_equal(bsp.scheduled, 2);
	poll_schedule(&t[1].ctx); /* twice is once */
	assert_int_equal(poll_once(), 0);
	assert_int_equal(t[1].runs, 1);
	assert_int_equal(t[0].runs + t[2].runs, 0);
}

/*
 * From another CPU: the bit lands in the owner's word, not the caller's,
 * and the owner's pass runs it; the caller's pass does not.
 */
static void test_schedule_from_another_cpu(void **state)
{
	add(2);
	stub_cpu_enter(&ap);
	assert_int_equal(poll_ctx_add(&t[2].ctx), 0); /* the AP's own, its slot 0 */
	assert_int_equal(t[2].ctx.bit, 1);
	ap.scheduled = 0;
	poll_schedule(&t[1].ctx);
	assert_int_equal(bsp.scheduled, 2);
	assert_int_equal(ap.scheduled, 0);
	assert_false(poll_scheduled()); /* the AP has nothing to run */
	poll_once();
	assert_int_equal(t[1].runs, 0);
	/* the BSP schedules the AP's context in turn */
	stub_cpu_enter(&bsp);
	poll_schedule(&t[2].ctx);
	assert_int_equal(ap.scheduled, 1);
	assert_int_equal(bsp.scheduled, 2);
	poll_once();
	assert_int_equal(t[1].runs, 1);
	assert_int_equal(t[2].runs, 0);
	stub_cpu_enter(&ap);
	poll_once();
	assert_int_equal(t[2].runs, 1);
	assert_int_equal(ap.scheduled, 0);
}

/* Taken out: its bit and its timer go, and scheduling it does nothing after. */
static void test_del_clears_bit_and_timer(void **state)
{
	add(3);
	poll_schedule(&t[1].ctx);
	poll_schedule(&t[2].ctx);
	poll_schedule_at(&t[1].ctx, 5000);
	poll_schedule_at(&t[2].ctx, 7000);
	assert_true(poll_next_due() == 5000);
	poll_ctx_del(&t[1].ctx);
	assert_null(t[1].ctx.cpu);
	assert_int_equal(t[1].ctx.bit, 0);
	assert_true(t[1].ctx.due_ns == UINT64_MAX);
	assert_int_equal(bsp.scheduled, 4); /* t[2]'s alone */
	assert_true(poll_next_due() == 7000); /* the earliest left */
	assert_int_equal(poll_ctx_bits(), 5);
	assert_ptr_not_equal(poll_ctx_at(2), &t[1].ctx); /* its slot no longer names it */
	/* from its old owner and from another CPU: nothing */
	poll_schedule(&t[1].ctx);
	stub_cpu_enter(&ap);
	poll_schedule(&t[1].ctx);
	stub_cpu_enter(&bsp);
	poll_schedule_at(&t[1].ctx, 6000);
	assert_int_equal(bsp.scheduled, 4);
	assert_true(poll_next_due() == 7000);
	stub_now = 10000;
	poll_once();
	assert_int_equal(t[1].runs, 0);
	assert_int_equal(t[2].runs, 1);
	/* taken out twice, or never added: harmless */
	poll_ctx_del(&t[1].ctx);
	poll_ctx_del(&t[5].ctx);
	assert_int_equal(poll_ctx_bits(), 5);
	/* and it may come back */
	assert_int_equal(poll_ctx_add(&t[1].ctx), 0);
	assert_int_equal(t[1].ctx.bit, 2);
}

/* Only the owner takes a context out. */
static void test_del_from_another_cpu_does_nothing(void **state)
{
	add(1);
	stub_cpu_enter(&ap);
	poll_ctx_del(&t[0].ctx);
	stub_cpu_enter(&bsp);
	assert_ptr_equal(t[0].ctx.cpu, &bsp);
	assert_int_equal(poll_ctx_bits(), 1);
}

/* ---- a pass ---- */

static void test_pass_runs_in_table_order_with_the_budget(void **state)
{
	static const unsigned int want[] = { 0, 2, 3 };

	add(4);
	t[2].work = 5;
	poll_schedule(&t[3].ctx);
	poll_schedule(&t[0].ctx);
	poll_schedule(&t[2].ctx);
	assert_int_equal(poll_once(), 5);
	assert_order(want, 3);
	assert_int_equal(t[0].budget, POLL_BUDGET);
	assert_int_equal(t[0].ctx.polls + t[2].ctx.polls + t[3].ctx.polls, 3);
	assert_int_equal(t[1].ctx.polls, 0);
	assert_false(poll_scheduled()); /* less than the budget: each completed */
}

static struct test_ctx *to_schedule;

static void schedule_other(struct test_ctx *c)
{
	poll_schedule(&to_schedule->ctx);
}

/*
 * Scheduled during the pass: a later slot runs in the same pass (the
 * socket layer scheduling a service), an earlier one or itself in the
 * next, and the loop may not sleep in between.
 */
static void test_scheduled_during_the_pass(void **state)
{
	static const unsigned int later[] = { 1, 3 }, earlier[] = { 1 }, next[] = { 0 },
				  self[] = { 1 };

	add(4);
	t[1].during = schedule_other;
	to_schedule = &t[3];
	poll_schedule(&t[1].ctx);
	poll_once();
	assert_order(later, 2);
	assert_false(poll_scheduled());

	to_schedule = &t[0];
	poll_schedule(&t[1].ctx);
	poll_once();
	assert_order(earlier, 1);
	assert_true(poll_scheduled());
	t[1].during = NULL;
	poll_once();
	assert_order(next, 1);

	t[1].during = schedule_other;
	to_schedule = &t[1];
	poll_schedule(&t[1].ctx);
	poll_once();
	assert_order(self, 1);
	assert_true(poll_scheduled());
	t[1].during = NULL;
	poll_once();
	assert_order(self, 1);
	assert_false(poll_scheduled());
}

/* The budget used up: more waits, the context runs again next pass, until it completes. */
static void test_budget_used_up_stays_scheduled(void **state)
{
	add(2);
	t[0].work = POLL_BUDGET;
	poll_schedule(&t[0].ctx);
	poll_schedule(&t[1].ctx);
	assert_int_equal(poll_once(), POLL_BUDGET);
	assert_true(poll_scheduled());
	assert_int_equal(bsp.scheduled, 1);
	assert_int_equal(poll_once(), POLL_BUDGET);
	assert_int_equal(t[0].runs, 2);
	assert_int_equal(t[1].runs, 1);
	t[0].work = POLL_BUDGET - 1;
	assert_int_equal(poll_once(), POLL_BUDGET - 1);
	assert_false(poll_scheduled());
	assert_int_equal(t[0].runs, 3);
	assert_int_equal(t[0].ctx.polls, 3);
}

/* ---- timers ---- */

static void test_schedule_at_fires_at_its_time(void **state)
{
	add(3);
	assert_true(poll_next_due() == UINT64_MAX);
	poll_schedule_at(&t[1].ctx, 5000);
	poll_schedule_at(&t[2].ctx, 3000);
	assert_true(poll_next_due() == 3000); /* the earliest: what idle.c arms */
	assert_false(poll_scheduled()); /* a time is not a schedule */
	stub_now = 2999;
	poll_once();
	assert_int_equal(t[1].runs + t[2].runs, 0);
	stub_now = 3000;
	poll_once();
	assert_int_equal(t[2].runs, 1);
	assert_int_equal(t[1].runs, 0);
	assert_true(t[2].ctx.due_ns == UINT64_MAX); /* forgotten once fired */
	assert_true(poll_next_due() == 5000);
	stub_now = 6000;
	poll_once();
	assert_int_equal(t[1].runs, 1);
	assert_true(poll_next_due() == UINT64_MAX);
	poll_once(); /* fired once, not again */
	assert_int_equal(t[1].runs + t[2].runs, 2);
}

/*
 * A new time replaces the one a context asked for before, later or
 * earlier, and UINT64_MAX withdraws it; next_due follows: the earliest
 * of what is left.
 */
static void test_schedule_at_replaces(void **state)
{
	add(3);
	poll_schedule_at(&t[1].ctx, 5000);
	poll_schedule_at(&t[2].ctx, 3000);
	poll_schedule_at(&t[1].ctx, 9000);
	assert_true(t[1].ctx.due_ns == 9000);
	assert_true(poll_next_due() == 3000);
	poll_schedule_at(&t[2].ctx, 8000); /* the earliest moved on: the next is 8000 */
	assert_true(poll_next_due() == 8000);
	poll_schedule_at(&t[1].ctx, 2000);
	assert_true(poll_next_due() == 2000);
	poll_schedule_at(&t[1].ctx, UINT64_MAX);
	assert_true(t[1].ctx.due_ns == UINT64_MAX);
	assert_true(poll_next_due() == 8000);
	poll_schedule_at(&t[2].ctx, UINT64_MAX);
	assert_true(poll_next_due() == UINT64_MAX);
	stub_now = 10000;
	poll_once();
	assert_int_equal(t[1].runs + t[2].runs, 0); /* withdrawn: nothing fires */
}

/* The owner's alone: another CPU's ask changes nothing. */
static void test_schedule_at_only_on_the_owner(void **state)
{
	add(1);
	stub_cpu_enter(&ap);
	poll_schedule_at(&t[0].ctx, 2000);
	assert_true(poll_next_due() == UINT64_MAX);
	stub_cpu_enter(&bsp);
	assert_true(t[0].ctx.due_ns == UINT64_MAX);
	assert_true(poll_next_due() == UINT64_MAX);
}

/* A source without interrupts: at the next pass while the loop spins, else after 1 ms. */
static void test_schedule_polled(void **state)
{
	add(1);
	poll_schedule_polled(&t[0].ctx);
	assert_int_equal(bsp.scheduled, 1);
	poll_once();
	stub_idle_halt = true;
	poll_schedule_polled(&t[0].ctx);
	assert_false(poll_scheduled());
	assert_true(poll_next_due() == stub_now + POLL_POLLED_NS);
}

/* ---- the watchdog's look ---- */

static void test_check_gathers_verdicts(void **state)
{
	struct poll_finding f;

	add(5);
	for (int i = 0; i < 4; i++)
		t[i].ctx.check = test_check; /* t[4] has none: it finds nothing */
	t[0].verdict = POLL_IDLE;
	t[1].verdict = POLL_LOST;
	t[2].verdict = POLL_OWED;
	t[2].what = "queue 2";
	t[3].verdict = POLL_OWED;
	poll_check(poll_ctx_bits(), false, &f);
	assert_int_equal(f.lost, 2);
	assert_int_equal(f.owed, 4 | 8);
	assert_ptr_equal(f.first, &t[1].ctx); /* the first with work, in table order */
	assert_string_equal(f.what, "c1"); /* no name of its own: the context's */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(t[i].checks, 1);
		assert_int_equal(t[i].counted, 0);
	}
	/* some bits only, and the second look's count passed on */
	poll_check(4 | 8 | 16, true, &f);
	assert_int_equal(f.lost, 0);
	assert_int_equal(f.owed, 4 | 8);
	assert_ptr_equal(f.first, &t[2].ctx);
	assert_string_equal(f.what, "queue 2");
	assert_int_equal(t[1].checks, 1);
	assert_int_equal(t[2].counted, 1);
	assert_int_equal(t[3].counted, 1);
	/* bits with no context: nothing */
	poll_check(1u << 9, true, &f);
	assert_null(f.first);
	assert_int_equal(f.owed | f.lost, 0);
	assert_false(poll_scheduled()); /* looking schedules nothing */
}

/* ---- blocking waits ---- */

static unsigned int steps;

static enum poll_step done_on_third(void *arg)
{
	return ++steps == 3 ? POLL_DONE : POLL_AGAIN;
}

static enum poll_step busy(void *arg)
{
	return ++steps == 5 ? POLL_DONE : POLL_PROGRESS;
}

static enum poll_step never(void *arg)
{
	return POLL_AGAIN;
}

static void time_passes(uint64_t wake_by)
{
	stub_now += 1000; /* a tick passes while halted */
}

/*
 * A console command's wait: poll_wait inside the console's own context,
 * as the shell runs a command (the console is the last slot here).
 */
#define CONSOLE (POLL_MAX - 1)

static enum poll_step (*cmd_step)(void *arg);
static uint64_t cmd_deadline;
static bool cmd_done;

static void run_command(struct test_ctx *c)
{
	cmd_done = poll_wait(cmd_step, NULL, cmd_deadline);
}

static bool command_wait(enum poll_step (*step)(void *arg), uint64_t deadline_ns)
{
	struct test_ctx *console = &t[CONSOLE];

	if (!console->ctx.cpu) {
		assert_int_equal(poll_ctx_add(&console->ctx), 0);
		console->during = run_command;
	}
	cmd_step = step;
	cmd_deadline = deadline_ns;
	cmd_done = false;
	poll_schedule(&console->ctx);
	poll_once();
	return cmd_done;
}

/* Nothing done and nothing asked: the loop sleeps between steps, at most 1 ms. */
static void test_wait_sleeps_only_after_an_idle_pass(void **state)
{
	add(1);
	steps = 0;
	assert_true(command_wait(done_on_third, UINT64_MAX));
	assert_int_equal(steps, 3);
	assert_int_equal(t[0].runs, 0); /* nothing scheduled it */
	assert_int_equal(stub_idle_waits, 2);
	assert_true(stub_idle_wake_by == stub_now + WAIT_STEP_NS);
	assert_int_equal(bsp.poll.passes, 3); /* the console's, then two inside its wait */
}

/* Its first call schedules t[0] (work coming in while the command waits). */
static enum poll_step wake_then_done_on_third(void *arg)
{
	if (!steps)
		poll_schedule(&t[0].ctx);
	return done_on_third(arg);
}

/* A step's progress, or a pass's work, keeps the loop awake. */
static void test_progress_or_work_never_sleeps(void **state)
{
	add(1);
	steps = 0;
	assert_true(command_wait(busy, UINT64_MAX));
	assert_int_equal(stub_idle_waits, 0);
	/* a context with work each pass (the budget used up: it stays scheduled) */
	t[0].work = POLL_BUDGET;
	steps = 0;
	assert_true(command_wait(wake_then_done_on_third, UINT64_MAX));
	assert_int_equal(stub_idle_waits, 0);
	assert_int_equal(t[0].runs, 2);
	t[0].work = 1;
	poll_once(); /* it completes */
	assert_false(poll_scheduled());
	/* work once, then none: one sleep */
	steps = 0;
	assert_true(command_wait(wake_then_done_on_third, UINT64_MAX));
	assert_int_equal(stub_idle_waits, 1);
	assert_int_equal(t[0].runs, 4);
}

static void test_deadline_ends_a_wait(void **state)
{
	stub_idle_hook = time_passes;
	assert_false(command_wait(never, 10000));
	assert_true(stub_now >= 10000);
	assert_int_equal(stub_idle_waits, 9); /* 1000 ns each, from 1000 */
	assert_true(stub_idle_wake_by == 10000); /* not past the deadline */
	poll_sleep_until(20000);
	assert_true(stub_now >= 20000);
}

/*
 * A wait outside every context (boot code, before the loop runs) holds
 * none: whichever context ran last, or none at all, runs in its passes
 * when scheduled.
 */
static void test_wait_outside_any_context_holds_nothing(void **state)
{
	add(2);
	poll_schedule(&t[0].ctx);
	poll_schedule(&t[1].ctx);
	steps = 0;
	assert_true(poll_wait(done_on_third, NULL, UINT64_MAX));
	assert_int_equal(t[0].runs, 1);
	assert_int_equal(t[1].runs, 1);
	/* t[1] ran last: a second wait still runs it */
	poll_schedule(&t[1].ctx);
	steps = 0;
	assert_true(poll_wait(done_on_third, NULL, UINT64_MAX));
	assert_int_equal(t[1].runs, 2);
	assert_false(poll_scheduled());
}

/*
 * A context that blocks in a wait (a console command) is running: the
 * passes inside the wait do not run it again, its bit stays set for when
 * it returns, and the loop may sleep meanwhile (it does not count as
 * scheduled). The other contexts go on.
 */
static unsigned int inner_steps;

static enum poll_step inner_step(void *arg)
{
	if (++inner_steps == 1) {
		poll_schedule(&t[0].ctx); /* itself, from inside its wait */
		poll_schedule(&t[1].ctx);
	}
	return inner_steps == 4 ? POLL_DONE : POLL_AGAIN;
}

static bool scheduled_at_idle; /* poll_scheduled() said so when the loop went to sleep */

static void note_scheduled(uint64_t wake_by)
{
	scheduled_at_idle |= poll_scheduled();
}

static void block_in_wait(struct test_ctx *c)
{
	if (c->runs > 1)
		return;
	assert_true(poll_wait(inner_step, NULL, UINT64_MAX));
	assert_true(bsp.scheduled & 1); /* its own bit, kept */
	assert_false(bsp.scheduled & 2); /* the other's, taken by a pass inside */
}

static void test_running_context_not_rerun(void **state)
{
	static const unsigned int want[] = { 0, 1, 0 };

	add(2);
	t[0].during = block_in_wait;
	poll_schedule(&t[0].ctx);
	inner_steps = 0;
	scheduled_at_idle = false;
	stub_idle_hook = note_scheduled;
	poll_once();
	assert_int_equal(inner_steps, 4);
	assert_int_equal(t[0].runs, 1);
	assert_int_equal(t[1].runs, 1);
	/* each pass in the wait did nothing (only the held bit): the loop slept */
	assert_int_equal(stub_idle_waits, 3);
	assert_false(scheduled_at_idle);
	assert_true(poll_scheduled()); /* out of the wait: its bit counts again */
	poll_once();
	assert_int_equal(t[0].runs, 2);
	assert_order(want, 3);
	assert_false(poll_scheduled());
}

/*
 * Scheduled in the same pass as the context that then blocks (a queue's
 * interrupt and the console's Enter together): the wait's passes run it,
 * though the pass that began the wait had already taken its bit.
 */
static enum poll_step until_t1_ran(void *arg)
{
	return t[1].runs ? POLL_DONE : POLL_AGAIN;
}

static void wait_for_t1(struct test_ctx *c)
{
	if (c->runs == 1)
		assert_true(poll_wait(until_t1_ran, NULL, stub_now + 100000));
}

static void test_same_pass_runs_inside_a_wait(void **state)
{
	static const unsigned int want[] = { 0, 1 };

	stub_idle_hook = time_passes;
	add(2);
	t[0].during = wait_for_t1;
	poll_schedule(&t[0].ctx);
	poll_schedule(&t[1].ctx);
	poll_once();
	assert_int_equal(t[1].runs, 1);
	assert_order(want, 2); /* and not again after the wait */
	assert_false(poll_scheduled());
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_add_schedules_once_and_refuses_twice),
		T(test_table_is_bounded),
		T(test_schedule_from_the_owner),
		T(test_schedule_from_another_cpu),
		T(test_del_clears_bit_and_timer),
		T(test_del_from_another_cpu_does_nothing),
		T(test_pass_runs_in_table_order_with_the_budget),
		T(test_scheduled_during_the_pass),
		T(test_budget_used_up_stays_scheduled),
		T(test_schedule_at_fires_at_its_time),
		T(test_schedule_at_replaces),
		T(test_schedule_at_only_on_the_owner),
		T(test_schedule_polled),
		T(test_check_gathers_verdicts),
		T(test_wait_sleeps_only_after_an_idle_pass),
		T(test_progress_or_work_never_sleeps),
		T(test_deadline_ends_a_wait),
		T(test_wait_outside_any_context_holds_nothing),
		T(test_running_context_not_rerun),
		T(test_same_pass_runs_inside_a_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
