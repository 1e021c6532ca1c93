// SPDX-License-Identifier: MIT
/*
 * The poll registry and blocking waits: every poller runs each pass,
 * idle_wait is reached only when a pass did nothing and the step asked to
 * wait, pending() of any poller counts, deadlines end a wait; an on_raise
 * poller runs only when raised, kept, or its pending() said so.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernel/idle.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/time.h"

/* ---- kernel stubs ---- */

static uint64_t fake_ns;
static unsigned int idles;

uint64_t now_ns(void)
{
	return fake_ns;
}

void idle_wait(void)
{
	idles++;
	fake_ns += 1000; /* a tick passes while halted */
}

/* ---- two pollers ---- */

static unsigned int a_polls, b_polls, a_work, last_budget, b_asked;
static bool b_has_work;

static unsigned int a_poll(unsigned int budget)
{
	unsigned int w = a_work;

	last_budget = budget;
	a_polls++;
	a_work = 0;
	return w;
}

static unsigned int b_poll(unsigned int budget)
{
	b_polls++;
	return 0;
}

static bool b_pending(void)
{
	b_asked++;
	return b_has_work;
}

static const struct poller poller_a = { .name = "a", .poll = a_poll };
static const struct poller poller_b = { .name = "b", .poll = b_poll, .pending = b_pending };
static const struct poller poller_quiet = { .name = "quiet" }; /* neither hook */

/* ---- an on_raise poller, and one before it that raises it ---- */

static unsigned int r_polls, raiser_polls;
static bool r_has_work, raise_r, raise_a;
static const struct poller poller_r;

static unsigned int raiser_poll(unsigned int budget)
{
	raiser_polls++;
	if (raise_r)
		poll_raise(poll_bit(&poller_r));
	if (raise_a) /* like a device interrupt during the pass, for an earlier poller */
		poll_raise(poll_bit(&poller_a));
	return 0;
}

static unsigned int r_poll(unsigned int budget)
{
	r_polls++;
	r_has_work = false;
	return 0;
}

static bool r_pending(void)
{
	return r_has_work;
}

static const struct poller poller_raiser = { .name = "raiser", .poll = raiser_poll };
static const struct poller poller_r = {
	.name = "r",
	.poll = r_poll,
	.pending = r_pending,
	.on_raise = true,
};

static int setup(void **state)
{
	assert_int_equal(poll_register(&poller_a), 0);
	assert_int_equal(poll_register(&poller_b), 0);
	assert_int_equal(poll_register(&poller_quiet), 0);
	assert_int_equal(poll_register(&poller_raiser), 0);
	assert_int_equal(poll_register(&poller_r), 0);
	a_polls = b_polls = a_work = idles = r_polls = raiser_polls = b_asked = 0;
	b_has_work = r_has_work = raise_r = raise_a = false;
	poll_ask_pending(~0u, true);
	fake_ns = 0;
	return 0;
}

static void test_on_raise_runs_only_when_raised(void **state)
{
	assert_true(poll_bit(&poller_r) != 0);
	assert_true(poll_bit(&poller_a) != poll_bit(&poller_r));
	assert_int_equal(poll_bit(&poller_quiet) & poll_bit(&poller_r), 0);
	poll_once();
	poll_once();
	assert_int_equal(raiser_polls, 2);
	assert_int_equal(r_polls, 0);
	assert_false(poll_pending());
	/* raised from outside a pass: the loop may not sleep, the next pass runs it once */
	poll_raise(poll_bit(&poller_r));
	assert_true(poll_pending());
	poll_once();
	assert_int_equal(r_polls, 1);
	poll_once();
	assert_int_equal(r_polls, 1);
	assert_false(poll_pending());
}

static void test_raised_by_an_earlier_poller_runs_in_the_same_pass(void **state)
{
	raise_r = true;
	poll_once();
	assert_int_equal(r_polls, 1);
	raise_r = false;
	assert_false(poll_pending()); /* nothing left raised for the next pass */
	poll_once();
	assert_int_equal(r_polls, 1);
}

static void test_pending_raises_an_on_raise_poller(void **state)
{
	r_has_work = true;
	b_has_work = true; /* an earlier yes does not hide r's */
	assert_true(poll_pending());
	b_has_work = false;
	poll_once();
	assert_int_equal(r_polls, 1);
	assert_false(poll_pending());
}

/*
 * A bit raised during a pass for a poller that already ran stays raised:
 * the check before a halt sees it (an interrupt entry only raises), and
 * the next pass runs that poller.
 */
static void test_raised_for_an_earlier_poller_keeps_the_loop_awake(void **state)
{
	raise_a = true;
	poll_once();
	raise_a = false;
	assert_int_equal(a_polls, 1);
	assert_true(poll_pending());
	poll_once();
	assert_int_equal(a_polls, 2);
	assert_false(poll_pending());
}

/*
 * A hook turned off is not called; with one hook left (an every-pass
 * poller's) its answer is the check's, and a raised bit answers alone.
 */
static void test_ask_pending_off_skips_the_hook(void **state)
{
	b_has_work = true;
	poll_ask_pending(poll_bit(&poller_b), false);
	assert_false(poll_pending());
	assert_int_equal(b_asked, 0);
	poll_ask_pending(poll_bit(&poller_b), true);
	assert_true(poll_pending());
	assert_int_equal(b_asked, 1);
	/* only b's hook: still b's answer */
	poll_ask_pending(poll_bit(&poller_r), false);
	assert_true(poll_pending());
	b_has_work = false;
	assert_false(poll_pending());
	assert_int_equal(b_asked, 3);
	/* r's hook off: its work waits for a raise, which is enough alone */
	r_has_work = true;
	assert_false(poll_pending());
	poll_raise(poll_bit(&poller_r));
	assert_true(poll_pending());
	assert_int_equal(b_asked, 4); /* raised: the every-pass hook is not asked */
	poll_once();
	assert_int_equal(r_polls, 1);
	poll_ask_pending(poll_bit(&poller_r), true);
}

static void test_keep_runs_every_pass_and_may_sleep(void **state)
{
	poll_keep(poll_bit(&poller_r), true);
	poll_once();
	poll_once();
	assert_int_equal(r_polls, 2);
	assert_false(poll_pending()); /* kept is not raised: the loop may halt */
	poll_keep(poll_bit(&poller_r), false);
	poll_once();
	assert_int_equal(r_polls, 2);
	/* keep never turns a plain poller off */
	poll_keep(poll_bit(&poller_a), false);
	poll_once();
	assert_int_equal(a_polls, 4);
}

static void test_pass_runs_every_poller_once(void **state)
{
	a_work = 3;
	assert_int_equal(poll_once(), 3);
	assert_int_equal(a_polls, 1);
	assert_int_equal(b_polls, 1);
	assert_int_equal(last_budget, POLL_BUDGET);
	/* registering again does not run a poller twice per pass */
	assert_int_equal(poll_register(&poller_a), 0);
	assert_int_equal(poll_once(), 0);
	assert_int_equal(a_polls, 2);
}

static void test_pending_asks_every_poller(void **state)
{
	assert_false(poll_pending());
	b_has_work = true;
	assert_true(poll_pending());
}

static unsigned int steps;

static enum poll_step done_on_third(void *arg)
{
	return ++steps == 3 ? POLL_DONE : POLL_AGAIN;
}

static void test_wait_runs_the_loop_and_idles(void **state)
{
	steps = 0;
	assert_true(poll_wait(done_on_third, NULL, UINT64_MAX));
	assert_int_equal(steps, 3);
	assert_int_equal(a_polls, 2); /* every poller between the steps */
	assert_int_equal(b_polls, 2);
	assert_int_equal(idles, 2); /* nothing done: the loop may sleep */
}

static enum poll_step busy(void *arg)
{
	return ++steps == 5 ? POLL_DONE : POLL_PROGRESS;
}

static void test_progress_never_idles(void **state)
{
	steps = 0;
	assert_true(poll_wait(busy, NULL, UINT64_MAX));
	assert_int_equal(idles, 0);
	steps = 0;
	a_work = 1; /* a poller's work also keeps the loop awake */
	assert_true(poll_wait(done_on_third, NULL, UINT64_MAX));
	assert_int_equal(idles, 1);
}

static enum poll_step never(void *arg)
{
	return POLL_AGAIN;
}

static void test_deadline_ends_a_wait(void **state)
{
	assert_false(poll_wait(never, NULL, 10000));
	assert_true(fake_ns >= 10000);
	assert_int_equal(idles, 10);
	poll_sleep_until(20000);
	assert_true(fake_ns >= 20000);
}

static void test_table_is_bounded(void **state)
{
	static struct poller extra[POLL_MAX];
	int full = 0;

	for (int i = 0; i < POLL_MAX; i++)
		if (poll_register(&extra[i]))
			full++;
	assert_int_equal(full, 5); /* a, b, quiet, raiser and r hold five slots */
}

static void test_periods_shortest_wins(void **state)
{
	static const int dev_a, dev_b, extra[POLL_MAX];

	assert_true(poll_period() == UINT64_MAX); /* nobody polled: sleep on */
	assert_int_equal(poll_every(&dev_a, 5000000), 0);
	assert_int_equal(poll_every(&dev_b, 1000000), 0);
	assert_true(poll_period() == 1000000);
	assert_int_equal(poll_every(&dev_b, 3000000), 0); /* an owner updates its slot */
	assert_true(poll_period() == 3000000);
	assert_int_equal(poll_every(&dev_b, 0), 0);
	assert_true(poll_period() == 5000000);
	assert_int_equal(poll_every(&dev_b, 0), 0); /* withdrawing twice is harmless */
	/* a full table refuses a new owner and keeps what it has */
	for (int i = 0; i < POLL_MAX - 1; i++)
		assert_int_equal(poll_every(&extra[i], 7000000), 0);
	assert_int_equal(poll_every(&dev_b, 100), -ENOSPC);
	assert_true(poll_period() == 5000000);
	assert_int_equal(poll_every(&dev_a, 0), 0);
	for (int i = 0; i < POLL_MAX - 1; i++)
		assert_int_equal(poll_every(&extra[i], 0), 0);
	assert_true(poll_period() == UINT64_MAX);
}

/*
 * Two CPUs' loops: each its own registry, raised bits, wake-up and
 * periods (kernel/percpu.h). A poller registered on one is unknown to
 * the other; a raise for one (poll_raise_on) runs nothing on the other.
 */
static void test_each_cpu_has_its_own_loop(void **state)
{
	static struct percpu ap;
	static const int dev;
	unsigned int a_before = a_polls;

	poll_take_wake(); /* what the tests before asked for */
	percpu_init(&ap, 1);
	percpu_unit_cpu = &ap;
	assert_int_equal(poll_bit(&poller_a), 0); /* the BSP's, not this CPU's */
	assert_int_equal(poll_once(), 0);
	assert_int_equal(poll_register(&poller_r), 0);
	assert_int_equal(poll_bit(&poller_r), 1); /* slot 0 here, not the BSP's slot */
	assert_false(poll_pending());
	assert_int_equal(poll_every(&dev, 2000), 0);
	poll_wake_at(123);
	assert_true(poll_period() == 2000);

	/* the BSP: its pass does not run the AP's, its wake-up and periods are its own */
	percpu_unit_cpu = &percpu_boot;
	assert_true(poll_period() == UINT64_MAX);
	assert_true(poll_take_wake() == UINT64_MAX);
	poll_raise_on(&ap, 1);
	r_has_work = false;
	poll_once();
	assert_int_equal(a_polls, a_before + 1);
	assert_int_equal(r_polls, 0);

	/* the AP: the raise from the BSP runs its poller, once */
	percpu_unit_cpu = &ap;
	assert_true(poll_pending());
	poll_once();
	assert_int_equal(r_polls, 1);
	assert_int_equal(a_polls, a_before + 1);
	assert_true(poll_take_wake() == 123);
	assert_int_equal(poll_every(&dev, 0), 0);
	percpu_unit_cpu = &percpu_boot;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_pass_runs_every_poller_once, setup),
		cmocka_unit_test_setup(test_pending_asks_every_poller, setup),
		cmocka_unit_test_setup(test_wait_runs_the_loop_and_idles, setup),
		cmocka_unit_test_setup(test_progress_never_idles, setup),
		cmocka_unit_test_setup(test_deadline_ends_a_wait, setup),
		cmocka_unit_test_setup(test_on_raise_runs_only_when_raised, setup),
		cmocka_unit_test_setup(test_raised_by_an_earlier_poller_runs_in_the_same_pass,
				       setup),
		cmocka_unit_test_setup(test_pending_raises_an_on_raise_poller, setup),
		cmocka_unit_test_setup(test_keep_runs_every_pass_and_may_sleep, setup),
		cmocka_unit_test_setup(test_raised_for_an_earlier_poller_keeps_the_loop_awake,
				       setup),
		cmocka_unit_test_setup(test_ask_pending_off_skips_the_hook, setup),
		cmocka_unit_test_setup(test_table_is_bounded, setup),
		cmocka_unit_test_setup(test_periods_shortest_wins, setup),
		cmocka_unit_test_setup(test_each_cpu_has_its_own_loop, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
