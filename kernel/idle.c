// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernel/config.h"
#include "kernel/cpu.h"
#include "kernel/cpu_rules.h"
#include "kernel/idle.h"
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/stats.h"
#include "kernel/time.h"

enum idle_choice { IDLE_POLL, IDLE_HALT, IDLE_CHOICES };
static const char *const idle_choices[IDLE_CHOICES + 1] = {
	[IDLE_POLL] = "poll",
	[IDLE_HALT] = "halt",
};
CONFIG_KEY(cfg_idle) = {
	.name = "idle",
	.help = "nothing to do: poll on, or halt until an interrupt (MSI-X or the timer, see tick)",
	.type = CONFIG_ENUM,
	.choices = idle_choices,
	.def = IDLE_HALT,
};

enum tick_choice { TICK_PERIODIC, TICK_DEADLINE, TICK_CHOICES };
static const char *const tick_choices[TICK_CHOICES + 1] = {
	[TICK_PERIODIC] = "periodic",
	[TICK_DEADLINE] = "deadline",
};
CONFIG_KEY(cfg_tick) = {
	.name = "tick",
	.help = "idle=halt timer: a periodic 1 ms tick, or one-shot to the next deadline "
		"(a timeout, a device without interrupts, a polled console), idle_guard when nothing is due",
	.type = CONFIG_ENUM,
	.choices = tick_choices,
	.def = TICK_DEADLINE,
};

/*
 * The idle watchdog's period (below): work that waited that long with
 * nothing scheduled for it is a wake-up that never came. It is looked
 * for (kernel/poll.h, check()), counted and reported, never silent; 0
 * turns the watchdog off and nothing then bounds such a wait.
 */
CONFIG_KEY(cfg_idle_guard) = {
	.name = "idle_guard",
	.help = "the idle watchdog's period, ms: work nothing scheduled is found within it, "
		"reported as a lost wake-up or a missed notification and done (0: no watchdog)",
	.type = CONFIG_UINT,
	.min = 0,
	.max = 60000,
	.def = 1000,
};

#define TICK_US 1000
#define NS_PER_US 1000ULL
#define NS_PER_MS 1000000ULL
/*
 * Work found at the watchdog's look is looked at again this much later:
 * a wake-up in flight (an interrupt, an IPI) has scheduled it by then,
 * and a notification the device owed still counts when it comes late.
 */
#define WATCHDOG_GRACE_NS (10 * NS_PER_MS)

/*
 * The keys, as their hook last saw them (idle_wait runs on every pass),
 * shared by every CPU and written only by CPU 0's hook; what a CPU armed
 * and counted is its own struct idle_cpu (kernel/percpu.h). An AP
 * always arms its one-shot timer: tick=periodic sets the BSP's periodic
 * tick only.
 */
static volatile bool halt_on_idle = true; /* the key's default, before idle_init */
static volatile uint64_t guard_ns = UINT64_MAX; /* idle_guard; UINT64_MAX: none */
static volatile uint32_t guard_gen = 1; /* moves with idle_guard: each CPU re-times its look */

bool idle_halts(void)
{
	return halt_on_idle;
}

/*
 * The watchdog (idle_guard). Every guard it looks at the contexts of
 * this CPU that are neither scheduled nor running, and asks each one's
 * check() whether work waits (kernel/poll.h). Work found is looked at
 * again after the grace: still there, and its context not run in
 * between, nothing scheduled it: its device owed a notification and
 * did not send it (a missed notification), or the guest had to and did
 * not (a wake-up the guest lost). Either is counted, said once per
 * boot, and the context scheduled. The look costs nothing per pass: it
 * runs when the CPU is about to halt and its clock says the look is due
 * (the timer is armed for it), so a lost wake-up is found within a
 * guard and a grace, whatever else the CPU waits for meanwhile.
 */
static uint64_t guard_from(uint64_t now)
{
	uint64_t guard = guard_ns;

	return guard == UINT64_MAX ? UINT64_MAX : now + guard;
}

static uint64_t watch_time(struct idle_cpu *ic, uint64_t now)
{
	if (ic->watch_gen != guard_gen) {
		ic->watch_gen = guard_gen;
		ic->suspects = 0;
		ic->seen_at = 0;
		ic->watch_at = guard_from(now);
	}
	return ic->watch_at;
}

/* The contexts the watchdog may blame: added, not scheduled, not inside a wait. */
static uint32_t watchable(void)
{
	return poll_ctx_bits() & ~percpu_read(scheduled) & ~percpu_read(poll.held);
}

void idle_say(unsigned int cpu, const struct idle_finding *f)
{
	char where[24] = "";

	if (cpu)
		snprintf(where, sizeof(where), "cpu %u: ", cpu);
	if (f->owed)
		printf("idle: watchdog: %s%s had work for %llu ms its device owed a notification "
		       "for and never sent (missed notification: the device did not send it or "
		       "the host lost it; counted per queue in `virtio`)\n",
		       where, f->what, (unsigned long long)(f->waited_ns / NS_PER_MS));
	else
		printf("idle: watchdog: %s%s had work for %llu ms that nothing scheduled (a "
		       "wake-up the guest lost; `stats idle`)\n",
		       where, f->what, (unsigned long long)(f->waited_ns / NS_PER_MS));
}

/*
 * Counted, kept, and said once per kind: on CPU 0 at once, an AP's by
 * CPU 0 (the console is its; kernel/cpu_rules.c reads the counts).
 */
static void report(struct idle_cpu *ic, uint32_t bits, bool owed, uint64_t now)
{
	uint64_t *count = owed ? &ic->missed : &ic->lost;
	unsigned int i = (unsigned int)__builtin_ctz(bits);
	struct poll_ctx *ctx = poll_ctx_at(bits & -bits);
	const char *what = ctx->name;
	struct idle_finding *f = &ic->last[owed];

	ctx->check(ctx, false, &what); /* its queue's name, counted already */
	snprintf(f->ctx, sizeof(f->ctx), "%s", ctx->name);
	snprintf(f->what, sizeof(f->what), "%s", what);
	f->waited_ns = now - ic->since[i];
	f->owed = owed;
	__atomic_store_n(count, *count + (uint64_t)__builtin_popcount(bits), __ATOMIC_RELEASE);
	if (percpu_read(index))
		cpu_rules_tell();
	else if (*count == (uint64_t)__builtin_popcount(bits))
		idle_say(0, f);
}

/* First look: what has work, and since when at least (not run since the last look). */
static void first_look(struct idle_cpu *ic, uint64_t now)
{
	struct poll_finding f;

	ic->looks++;
	poll_check(watchable(), false, &f);
	ic->suspects = f.owed | f.lost;
	for (uint32_t b = poll_ctx_bits(); b; b &= b - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(b);
		uint64_t polls = poll_ctx_at(b & -b)->polls;
		bool not_run = ic->seen_at && polls == ic->seen_polls[i]; /* since the last look */

		if (ic->suspects & (b & -b))
			ic->since[i] = not_run ? ic->seen_at : now;
		ic->seen_polls[i] = polls;
	}
	ic->seen_at = now;
	ic->watch_at = ic->suspects ? now + WATCHDOG_GRACE_NS : guard_from(now);
}

/* Second look: the suspects not run since that still have work. */
static void second_look(struct idle_cpu *ic, uint64_t now)
{
	uint32_t still = 0;
	struct poll_finding f;

	for (uint32_t b = ic->suspects & watchable(); b; b &= b - 1)
		if (poll_ctx_at(b & -b)->polls == ic->seen_polls[__builtin_ctz(b)])
			still |= b & -b;
	ic->suspects = 0;
	ic->watch_at = guard_from(now);
	if (!still)
		return;
	poll_check(still, true, &f);
	if (f.lost)
		report(ic, f.lost, false, now);
	if (f.owed)
		report(ic, f.owed, true, now);
	for (uint32_t b = f.owed | f.lost; b; b &= b - 1)
		poll_schedule(poll_ctx_at(b & -b));
}

static __attribute__((noinline)) void watchdog(struct idle_cpu *ic, uint64_t now)
{
	if (ic->suspects)
		second_look(ic, now);
	else
		first_look(ic, now);
}

/*
 * The common halt between round trips: nobody asked for a time, and the
 * one-shot armed last (or the decision that none is needed) still
 * stands: keep it without reading the clock. It was armed for the
 * watchdog's look at the latest, so the look is not late either.
 */
static bool timer_still_good(uint64_t asked)
{
	return asked == UINT64_MAX && percpu_read(idle.armed_until) &&
	       lapic_timer_ticks() == percpu_read(idle.armed_ticks);
}

/*
 * Arm the one-shot timer for the earlier of @asked and the watchdog's
 * look (which runs first when due); false if the loop has work again or
 * the wake-up is due already. A timer still running that fires no later
 * than needed is kept: writing the LAPIC's timer registers on every halt
 * costs the guest instructions and, under QEMU, a host timer rescheduled
 * per halt. With nothing due at all only the watchdog's look is armed
 * (none with idle_guard=0): an idle guest wakes about once a guard.
 */
static __attribute__((noinline)) bool arm_deadline_slow(struct idle_cpu *ic, uint64_t asked)
{
	uint64_t now = now_ns(), wake;

	if (watch_time(ic, now) <= now) {
		watchdog(ic, now);
		if (poll_scheduled())
			return false;
	}
	wake = asked < ic->watch_at ? asked : ic->watch_at;
	if (wake <= now) {
		ic->early_wakes++;
		return false;
	}
	/* not fired yet: the LAPIC and the TSC may disagree by a little */
	if (ic->armed_until > now && ic->armed_until <= wake &&
	    lapic_timer_ticks() == ic->armed_ticks)
		return true;
	if (wake != UINT64_MAX)
		lapic_timer_oneshot((wake - now + NS_PER_US - 1) / NS_PER_US);
	ic->armed_until = wake;
	ic->armed_ticks = lapic_timer_ticks();
	return true;
}

/* The common case inline in idle_wait, which then keeps no registers. */
static inline bool arm_deadline(uint64_t wake_by)
{
	uint64_t asked = poll_next_due();

	if (wake_by < asked)
		asked = wake_by;
	return timer_still_good(asked) || arm_deadline_slow(&this_cpu()->idle, asked);
}

/*
 * idle=poll and tick=periodic arm no timer for the look: it goes by the
 * clock at every idle moment instead. Whether the loop has work now.
 */
static __attribute__((noinline)) bool watch_by_clock(void)
{
	struct idle_cpu *ic = &this_cpu()->idle;
	uint64_t now = now_ns();

	if (watch_time(ic, now) > now)
		return false;
	watchdog(ic, now);
	return poll_scheduled();
}

/*
 * Interrupts off, check, then idle_halt(): an interrupt that became
 * pending after the check ends the hlt, and one the platform let in
 * before it makes the entry return past it (isr.S, HLT_SKIP). Nothing
 * but a scheduled context keeps the loop awake: everything that has
 * work schedules one (kernel/poll.h).
 */
void idle_halt(void);

void idle_wait(uint64_t wake_by)
{
	if (!halt_on_idle) {
		watch_by_clock();
		return;
	}
	irq_disable();
	if (poll_scheduled() ||
	    (percpu_read(idle.tick_deadline) ? !arm_deadline(wake_by) : watch_by_clock())) {
		irq_enable();
		return;
	}
	percpu_inc(idle.halts);
	idle_halt();
}

/* On the BSP (a key set from the shell): its timer and the shared keys. */
static void idle_changed(struct config_key *key)
{
	struct idle_cpu *ic = &this_cpu()->idle;

	halt_on_idle = config_get(&cfg_idle) == IDLE_HALT;
	ic->tick_deadline = config_get(&cfg_tick) == TICK_DEADLINE;
	guard_ns = config_get(&cfg_idle_guard) ? config_get(&cfg_idle_guard) * NS_PER_MS :
						 UINT64_MAX;
	guard_gen++;
	ic->armed_until = 0; /* periodic mode or a stop overwrote the one-shot */
	lapic_timer_periodic(halt_on_idle && !ic->tick_deadline ? TICK_US : 0);
}

/* Every CPU's counters, read as statistics (another CPU's may be a little stale). */
struct idle_sums {
	uint64_t halts, watchdog_looks, shadow_breaks, missed, lost;
};

static void idle_sum(struct idle_sums *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned int i = 0; i < PERCPU_MAX_CPUS; i++) {
		const struct percpu *p = percpu_of(i);

		if (!p)
			continue;
		t->halts += p->idle.halts;
		t->watchdog_looks += p->idle.looks;
		t->shadow_breaks += p->shadow_breaks;
		t->missed += p->idle.missed;
		t->lost += p->idle.lost;
	}
}

static void idle_stats(void)
{
	const struct idle_cpu *ic = &this_cpu()->idle;
	struct idle_sums t;

	idle_sum(&t);
	printf("  idle=%s halts %llu timer_ticks %llu tick=%s due_at_sleep %llu watchdog_looks %llu "
	       "shadow_breaks %llu\n",
	       config_get(&cfg_idle) == IDLE_HALT ? "halt" : "poll", (unsigned long long)t.halts,
	       (unsigned long long)lapic_timer_ticks(), tick_choices[config_get(&cfg_tick)],
	       (unsigned long long)ic->early_wakes, (unsigned long long)t.watchdog_looks,
	       (unsigned long long)t.shadow_breaks);
	printf("  watchdog: missed_notifications %llu lost_wakeups %llu\n",
	       (unsigned long long)t.missed, (unsigned long long)t.lost);
	for (unsigned int i = 0; i < PERCPU_MAX_CPUS; i++) {
		const struct percpu *p = percpu_of(i);

		for (unsigned int k = 0; p && k < 2; k++) {
			const struct idle_finding *f = &p->idle.last[k];

			if (f->ctx[0])
				printf("  cpu %u last %s: %s (%s) waited %llu ms\n", i,
				       f->owed ? "missed notification" : "lost wake-up", f->what,
				       f->ctx, (unsigned long long)(f->waited_ns / NS_PER_MS));
		}
	}
}

static void idle_stats_json(struct json_writer *w)
{
	const struct idle_cpu *ic = &this_cpu()->idle;
	struct idle_sums t;

	idle_sum(&t);
	json_put_string(w, "idle", config_get(&cfg_idle) == IDLE_HALT ? "halt" : "poll");
	json_put_u64(w, "halts", t.halts);
	json_put_u64(w, "timer_ticks", lapic_timer_ticks());
	json_put_string(w, "tick", tick_choices[config_get(&cfg_tick)]);
	json_put_u64(w, "due_at_sleep", ic->early_wakes);
	json_put_u64(w, "watchdog_looks", t.watchdog_looks);
	json_put_u64(w, "shadow_breaks", t.shadow_breaks);
	json_put_u64(w, "missed_notifications", t.missed);
	json_put_u64(w, "lost_wakeups", t.lost);
}

void idle_init(void)
{
	static struct config_hook hooks[3] = { { .fn = idle_changed },
					       { .fn = idle_changed },
					       { .fn = idle_changed } };

	config_on_change(&cfg_idle, &hooks[0]);
	config_on_change(&cfg_tick, &hooks[1]);
	config_on_change(&cfg_idle_guard, &hooks[2]);
	idle_changed(&cfg_idle);
	stats_register("idle", idle_stats, idle_stats_json);
}
