// SPDX-License-Identifier: MIT
/*
 * The idle watchdog (kernel/idle.c) against kernel/poll.c, with a clock
 * and a LAPIC timer of the test's own: a halt lasts until the timer
 * armed for it fires. Work a context's check() finds that nothing
 * scheduled is looked at twice, a grace apart: still there, its context
 * not run in between, it is counted once (a lost wake-up, or a
 * notification the device owed, passed to check() as @count on the
 * second look only) and its context scheduled; a context run between
 * the looks is not blamed; short timers of other contexts (a polled
 * queue, a wait's steps) do not keep the watchdog from looking;
 * idle_guard=0 arms nothing for it; idle=poll looks by the clock.
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

#include "kernel/config.h"
#include "kernel/idle.h"
#include "kernel/lapic.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/stats.h"
#include "kernel/time.h"

#define MS 1000000ULL
#define GUARD (1000 * MS) /* idle_guard's default */
#define GRACE (10 * MS)

/* ---- the clock and the timer ---- */

static uint64_t clock_ns;
static uint64_t timer_at; /* the one-shot's deadline; 0: not armed */
static unsigned int halts;

uint64_t now_ns(void)
{
	return clock_ns;
}

void lapic_timer_oneshot(uint64_t us)
{
	timer_at = clock_ns + us * 1000;
}

void lapic_timer_periodic(uint32_t period_us)
{
}

void stats_register(const char *name, void (*print)(void), void (*json)(struct json_writer *w))
{
}

/* An AP's finding goes to CPU 0 to be said (kernel/cpu_rules.c). */
static unsigned int tells;

void cpu_rules_tell(void)
{
	tells++;
}

/* A halt ends when the timer fires: the clock moves to it. */
void idle_halt(void)
{
	halts++;
	assert_true(timer_at > clock_ns); /* else the CPU would sleep for good */
	clock_ns = timer_at;
	timer_at = 0;
	this_cpu()->timer_ticks++;
}

/* ---- contexts whose work the test decides ---- */

struct test_ctx {
	struct poll_ctx ctx;
	unsigned int runs, checks, counted;
	enum poll_verdict verdict; /* what check() finds */
	uint64_t every_ns; /* a polled source: it asks to run this often */
};

static struct test_ctx a, b;

static unsigned int test_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct test_ctx *c = (struct test_ctx *)ctx;

	c->runs++;
	c->verdict = POLL_IDLE; /* it did its work */
	if (c->every_ns)
		poll_schedule_at(ctx, now_ns() + c->every_ns);
	return 0;
}

static enum poll_verdict test_check(struct poll_ctx *ctx, bool count, const char **what)
{
	struct test_ctx *c = (struct test_ctx *)ctx;

	c->checks++;
	c->counted += count;
	*what = "a queue";
	return c->verdict;
}

static struct percpu cpu;

static int setup(void **state)
{
	char err[64];

	config_reset();
	percpu_init(&cpu, 0, 0, NULL);
	percpu_unit_cpu = &cpu;
	clock_ns = 5 * MS;
	timer_at = 0;
	halts = 0;
	tells = 0;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.ctx = (struct poll_ctx){ .name = "a", .poll = test_poll, .check = test_check };
	b.ctx = (struct poll_ctx){ .name = "b", .poll = test_poll, .check = test_check };
	idle_init();
	assert_int_equal(config_set("idle", "halt", err, sizeof(err)), 0);
	assert_int_equal(poll_ctx_add(&a.ctx), 0);
	assert_int_equal(poll_ctx_add(&b.ctx), 0);
	poll_once(); /* each added context runs once */
	return 0;
}

/* The loop until @until: a pass, then idle; what the loop does on a CPU. */
static void run_until(uint64_t until)
{
	while (clock_ns < until) {
		poll_once();
		idle_wait(UINT64_MAX);
	}
}

static const struct idle_cpu *ic(void)
{
	return &this_cpu()->idle;
}

/* Work nothing scheduled: found at the first look, blamed at the second. */
static void test_lost_wakeup_found_and_done(void **state)
{
	unsigned int runs = a.runs;

	run_until(100 * MS); /* idle: it sleeps to the first look */
	assert_int_equal(halts, 1);
	a.verdict = POLL_LOST; /* work came and nothing scheduled it */
	run_until(GUARD + GRACE + 10 * MS);
	assert_int_equal(ic()->lost, 1);
	assert_int_equal(ic()->missed, 0);
	assert_int_equal(a.runs, runs + 1); /* the watchdog scheduled it */
	assert_int_equal(a.counted, 1); /* only the second look counts */
	assert_string_equal(ic()->last[0].ctx, "a");
	assert_string_equal(ic()->last[0].what, "a queue");
	assert_false(ic()->last[0].owed);
	/* it waited from the look before the first that saw it, or that look */
	assert_true(ic()->last[0].waited_ns >= GRACE);
	assert_int_equal(b.counted, 0);
}

/* One pass and one idle entry: where the watchdog looks. */
static void step(void)
{
	poll_once();
	idle_wait(UINT64_MAX);
}

/*
 * Work its device owed a notification for: missed, the device's fault.
 * It came after a look that found nothing, its context not run since:
 * it waited from that look on at least.
 */
static void test_missed_notification(void **state)
{
	run_until(GUARD);
	step(); /* the first look: nothing */
	assert_int_equal(b.checks, 1);
	b.verdict = POLL_OWED;
	run_until(2 * GUARD + 3 * GRACE);
	assert_int_equal(ic()->missed, 1);
	assert_int_equal(ic()->lost, 0);
	assert_true(ic()->last[1].owed);
	assert_string_equal(ic()->last[1].ctx, "b");
	assert_true(ic()->last[1].waited_ns >= GUARD);
}

/* A wake-up in flight at the first look (it comes in the grace): no blame. */
static void test_run_between_the_looks_is_no_finding(void **state)
{
	a.verdict = POLL_OWED;
	run_until(GUARD);
	step(); /* the first look saw it */
	assert_int_equal(a.checks, 1);
	poll_schedule(&a.ctx); /* the interrupt arrives */
	run_until(GUARD + 3 * GRACE);
	assert_int_equal(ic()->missed + ic()->lost, 0);
	assert_int_equal(a.counted, 0);
}

/*
 * Other contexts' short timers wake the CPU every millisecond (a polled
 * queue): no halt lasts a guard, and the watchdog still looks.
 */
static void test_short_timers_do_not_blind_it(void **state)
{
	a.every_ns = 1 * MS;
	poll_schedule(&a.ctx);
	poll_once();
	b.verdict = POLL_LOST;
	run_until(GUARD + 3 * GRACE);
	assert_true(halts > 900);
	assert_int_equal(ic()->lost, 1);
	assert_string_equal(ic()->last[0].ctx, "b");
}

/* A context scheduled or inside a wait is running: not looked at. */
static void test_scheduled_is_not_looked_at(void **state)
{
	a.verdict = POLL_LOST;
	for (unsigned int i = 0; i < 3000; i++) {
		clock_ns += MS;
		poll_schedule(&a.ctx); /* scheduled whenever the watchdog looks */
		idle_wait(UINT64_MAX); /* returns at once: work is scheduled */
		a.verdict = POLL_LOST;
	}
	assert_int_equal(a.checks, 0);
	assert_int_equal(ic()->lost, 0);
}

/* idle_guard=0: nothing armed for it, no look, and a lost wake-up stays lost. */
static void test_guard_off(void **state)
{
	char err[64];

	assert_int_equal(config_set("idle_guard", "0", err, sizeof(err)), 0);
	a.every_ns = 100 * MS; /* something to wake for, so the test's halts end */
	poll_schedule(&a.ctx);
	poll_once();
	b.verdict = POLL_LOST;
	run_until(5 * GUARD);
	assert_int_equal(b.checks, 0);
	assert_int_equal(ic()->lost, 0);
	/* on again: it looks within a guard and a grace of the change */
	assert_int_equal(config_set("idle_guard", "1000", err, sizeof(err)), 0);
	run_until(6 * GUARD + GRACE + 200 * MS);
	assert_int_equal(ic()->lost, 1);
}

/* On an AP the finding is kept for CPU 0 to say: the AP tells it, once a finding. */
static void test_ap_tells_cpu0(void **state)
{
	this_cpu()->index = 1;
	b.verdict = POLL_LOST;
	run_until(GUARD + 3 * GRACE);
	assert_int_equal(ic()->lost, 1);
	assert_int_equal(tells, 1);
	assert_string_equal(ic()->last[0].what, "a queue");
	assert_false(ic()->last[0].owed);
	assert_int_equal(ic()->last[1].ctx[0], 0); /* no missed notification */
}

/* idle=poll: no halt and no timer; the look goes by the clock. */
static void test_idle_poll_looks_by_the_clock(void **state)
{
	char err[64];

	assert_int_equal(config_set("idle", "poll", err, sizeof(err)), 0);
	b.verdict = POLL_LOST;
	while (clock_ns < GUARD + 3 * GRACE) {
		poll_once();
		idle_wait(UINT64_MAX);
		clock_ns += 100000; /* the spinning loop's time */
	}
	assert_int_equal(halts, 0);
	assert_int_equal(ic()->lost, 1);
}

#define T(f) cmocka_unit_test_setup(f, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_lost_wakeup_found_and_done),
		T(test_missed_notification),
		T(test_run_between_the_looks_is_no_finding),
		T(test_short_timers_do_not_blind_it),
		T(test_scheduled_is_not_looked_at),
		T(test_guard_off),
		T(test_ap_tells_cpu0),
		T(test_idle_poll_looks_by_the_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
