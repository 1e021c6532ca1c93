// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernel/config.h"
#include "kernel/cpu.h"
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
 * The idle watchdog: a CPU halted this long with a context that had work
 * woke for nothing but this timer, so the wake-up that work needed never
 * came. It is looked for (kernel/poll.h, check()), counted and reported,
 * never silent; 0 turns the watchdog off and nothing then bounds such a
 * sleep.
 */
CONFIG_KEY(cfg_idle_guard) = {
	.name = "idle_guard",
	.help = "idle=halt, tick=deadline: the idle watchdog's ms: a CPU halted this long with "
		"work waiting reports the lost wake-up and does the work (0: no watchdog)",
	.type = CONFIG_UINT,
	.min = 0,
	.max = 60000,
	.def = 1000,
};

#define TICK_US 1000
#define NS_PER_US 1000ULL
#define NS_PER_MS 1000000ULL
/*
 * Work found owed by a device gets this long for its notification to
 * arrive after all (one in flight as the guard fired) before it counts
 * as missed; its context is scheduled then either way.
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

bool idle_halts(void)
{
	return halt_on_idle;
}

/*
 * When the loop must be awake again: a context's time or the caller's
 * (@asked), else the watchdog's: at its set time (a second look, or the
 * first for a halt that began after it was armed), or a guard from now.
 * UINT64_MAX: only an interrupt.
 */
static uint64_t next_wake(struct idle_cpu *ic, uint64_t now, uint64_t asked)
{
	uint64_t guard = ic->guard_at;

	if (!guard)
		guard = guard_ns != UINT64_MAX ? now + guard_ns : UINT64_MAX;
	ic->guard_armed = guard < asked;
	if (ic->guard_armed)
		ic->guard_at = 0; /* armed: the timer keeps it */
	return ic->guard_armed ? guard : asked;
}

/*
 * The common halt between round trips: nobody asked for a time, and the
 * one-shot armed last (or the decision that none is needed) still
 * stands: keep it without reading the clock. Nothing asked for a time
 * then either, so whatever it was armed for is no later than needed now.
 */
static bool timer_still_good(uint64_t asked)
{
	return asked == UINT64_MAX && percpu_read(idle.armed_until) &&
	       !percpu_read(idle.guard_at) && lapic_timer_ticks() == percpu_read(idle.armed_ticks);
}

/*
 * Arm the one-shot timer; false if the wake-up is due already. A timer
 * still running that fires no later than needed is kept: writing the
 * LAPIC's timer registers on every halt costs the guest instructions and,
 * under QEMU, a rescheduled host timer per halt, which measurably slowed
 * ping-pong (docs/config.md, tick). With nothing due at all only the
 * watchdog is armed (idle_guard, or no timer when it is 0): an idle
 * guest whose console interrupts wakes about once a second.
 */
static __attribute__((noinline)) bool arm_deadline_slow(struct idle_cpu *ic, uint64_t asked)
{
	uint64_t now, wake;

	now = now_ns();
	wake = next_wake(ic, now, asked);
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

static void report(struct idle_cpu *ic, const struct poll_finding *f, bool owed, uint64_t waited)
{
	uint64_t *count = owed ? &ic->missed : &ic->lost;

	ic->last = (struct idle_finding){ f->first->name, f->what, waited, owed };
	/* each kind once per boot, and only where printing is allowed (CPU 0) */
	if ((*count)++ || percpu_read(index))
		return;
	if (owed)
		printf("idle: watchdog after %llu ms: %s had work its device owed a notification for "
		       "and never sent (missed notification: the device did not send it or the "
		       "host lost it; counted per queue in `virtio`)\n",
		       (unsigned long long)(waited / NS_PER_MS), f->what);
	else
		printf("idle: watchdog after %llu ms: %s had work nothing scheduled (a wake-up the "
		       "guest lost; `stats idle`)\n",
		       (unsigned long long)(waited / NS_PER_MS), f->what);
}

/*
 * The guard's timer ended a halt. First look, once the CPU was halted a
 * whole guard: work nothing scheduled is a wake-up the guest lost, done
 * at once; work a device owed a notification for gets the grace, in
 * which a late notification still schedules it as usual. Second look,
 * after the grace: still owed is a missed notification. A halt shorter
 * than the guard (the timer was armed before it began) is looked at
 * when it has lasted one.
 */
static __attribute__((noinline)) void watchdog(struct idle_cpu *ic)
{
	uint64_t halted = tsc_to_ns(rdtsc() - ic->halted_at), now = now_ns();
	struct poll_finding f;

	ic->guard_wakes++;
	if (ic->suspects) {
		poll_check(ic->suspects, true, &f);
		ic->suspects = 0;
		if (f.owed | f.lost)
			report(ic, &f, f.owed != 0, now - ic->suspect_since);
		for (uint32_t b = f.owed | f.lost; b; b &= b - 1)
			poll_schedule(poll_ctx_at(b & -b));
		return;
	}
	if (guard_ns == UINT64_MAX)
		return;
	if (halted + NS_PER_MS < guard_ns) {
		ic->guard_at = now + guard_ns - halted;
		return;
	}
	poll_check(poll_ctx_bits(), false, &f);
	if (f.lost) {
		struct poll_finding lost = f;

		lost.owed = 0;
		report(ic, &lost, false, halted);
		for (uint32_t b = f.lost; b; b &= b - 1)
			poll_schedule(poll_ctx_at(b & -b));
	}
	if (f.owed) {
		ic->suspects = f.owed;
		ic->suspect_since = now - halted;
		ic->guard_at = now + WATCHDOG_GRACE_NS;
	}
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
	struct idle_cpu *ic;

	if (!halt_on_idle)
		return;
	irq_disable();
	if (poll_scheduled()) {
		irq_enable();
		return;
	}
	if (percpu_read(idle.tick_deadline) && !arm_deadline(wake_by)) {
		irq_enable();
		return;
	}
	percpu_inc(idle.halts);
	percpu_write(idle.halted_at, rdtsc());
	idle_halt();
	ic = &this_cpu()->idle;
	if (__builtin_expect(ic->guard_armed && lapic_timer_ticks() != ic->armed_ticks, 0))
		watchdog(ic);
}

/* On the BSP (a key set from the shell): its timer and the shared keys. */
static void idle_changed(struct config_key *key)
{
	struct idle_cpu *ic = &this_cpu()->idle;

	halt_on_idle = config_get(&cfg_idle) == IDLE_HALT;
	ic->tick_deadline = config_get(&cfg_tick) == TICK_DEADLINE;
	guard_ns = config_get(&cfg_idle_guard) ? config_get(&cfg_idle_guard) * NS_PER_MS :
						 UINT64_MAX;
	ic->armed_until = 0; /* periodic mode or a stop overwrote the one-shot */
	lapic_timer_periodic(halt_on_idle && !ic->tick_deadline ? TICK_US : 0);
}

/* Every CPU's counters, read as statistics (another CPU's may be a little stale). */
struct idle_sums {
	uint64_t halts, guard_wakes, shadow_breaks, missed, lost;
};

static void idle_sum(struct idle_sums *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned int i = 0; i < PERCPU_MAX_CPUS; i++) {
		const struct percpu *p = percpu_of(i);

		if (!p)
			continue;
		t->halts += p->idle.halts;
		t->guard_wakes += p->idle.guard_wakes;
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
	printf("  idle=%s halts %llu timer_ticks %llu tick=%s due_at_sleep %llu guard_wakes %llu "
	       "shadow_breaks %llu\n",
	       config_get(&cfg_idle) == IDLE_HALT ? "halt" : "poll", (unsigned long long)t.halts,
	       (unsigned long long)lapic_timer_ticks(), tick_choices[config_get(&cfg_tick)],
	       (unsigned long long)ic->early_wakes, (unsigned long long)t.guard_wakes,
	       (unsigned long long)t.shadow_breaks);
	printf("  watchdog: missed_notifications %llu lost_wakeups %llu\n",
	       (unsigned long long)t.missed, (unsigned long long)t.lost);
	for (unsigned int i = 0; i < PERCPU_MAX_CPUS; i++) {
		const struct percpu *p = percpu_of(i);

		if (p && p->idle.last.ctx)
			printf("  cpu %u last: %s (%s) waited %llu ms: %s\n", i, p->idle.last.what,
			       p->idle.last.ctx,
			       (unsigned long long)(p->idle.last.waited_ns / NS_PER_MS),
			       p->idle.last.owed ? "missed notification" : "lost wake-up");
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
	json_put_u64(w, "guard_wakes", t.guard_wakes);
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
