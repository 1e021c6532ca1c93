// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <stdio.h>

#include "kernel/config.h"
#include "kernel/cpu.h"
#include "kernel/idle.h"
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
 * With the console on its interrupt nothing needs the timer while idle:
 * the guard is the one wake-up no device owes, so a wake-up lost below
 * the guest costs at most this long.
 */
CONFIG_KEY(cfg_idle_guard) = {
	.name = "idle_guard",
	.help = "idle=halt, tick=deadline: sleep at most this many ms even when nothing is due "
		"(0: no limit)",
	.type = CONFIG_UINT,
	.min = 0,
	.max = 60000,
	.def = 1000,
};

#define TICK_US 1000
#define NS_PER_US 1000ULL
#define NS_PER_MS 1000000ULL

/*
 * The keys, as their hook last saw them (idle_wait runs on every pass),
 * shared by every CPU; what a CPU armed and counted is its own struct
 * idle_cpu (kernel/percpu.h). An AP always arms its one-shot timer:
 * tick=periodic sets the BSP's periodic tick only.
 */
static bool halt_on_idle;
static uint64_t guard_ns; /* idle_guard; UINT64_MAX: none */

/*
 * When the loop must be awake again: a poller's deadline (@asked), or a
 * device that raises no interrupt (poll_every; the console when its
 * interrupt could not be routed). UINT64_MAX: only an interrupt.
 */
static uint64_t next_wake(struct idle_cpu *ic, uint64_t now, uint64_t asked)
{
	uint64_t period = poll_period();

	if (period != UINT64_MAX && now + period < asked)
		asked = now + period;
	ic->guard_armed = guard_ns != UINT64_MAX && now + guard_ns < asked;
	return ic->guard_armed ? now + guard_ns : asked;
}

/*
 * The common halt between round trips: nobody asked for a time, no
 * device is polled by period, and the one-shot armed last (or the
 * decision that none is needed) still stands: keep it without reading
 * the clock. Nothing asked for a time then either, so whatever it was
 * armed for is no later than needed now.
 */
static bool timer_still_good(uint64_t asked)
{
	return asked == UINT64_MAX && percpu_read(idle.armed_until) &&
	       poll_period() == UINT64_MAX && lapic_timer_ticks() == percpu_read(idle.armed_ticks);
}

/*
 * Arm the one-shot timer; false if the wake-up is due already. A timer
 * still running that fires no later than needed is kept: writing the
 * LAPIC's timer registers on every halt costs the guest instructions and,
 * under QEMU, a rescheduled host timer per halt, which measurably slowed
 * ping-pong (docs/config.md, tick). With nothing due at all only the guard
 * is armed (idle_guard, or no timer when it is 0): an idle guest whose
 * console interrupts wakes about once a second.
 */
static __attribute__((noinline)) bool arm_deadline_slow(struct idle_cpu *ic, uint64_t asked)
{
	uint64_t now, wake;

	if (ic->guard_armed && lapic_timer_ticks() != ic->armed_ticks)
		ic->guard_wakes++;
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
static inline bool arm_deadline(void)
{
	uint64_t asked = poll_take_wake();

	return timer_still_good(asked) || arm_deadline_slow(&this_cpu()->idle, asked);
}

/* Interrupts off on entry: sti, then hlt in its shadow (idle_halt.S). */
void idle_halt(void);

/*
 * Interrupts off, check, then idle_halt(): an interrupt that became
 * pending after the check ends the hlt, and one the platform let in
 * before it makes the entry return past it (isr.S, HLT_SKIP). The UART's
 * interrupt raises the console poller like any other; a polled console
 * is looked at once a pass (kmain) and asks for its period (poll_every).
 */
void idle_wait(void)
{
	if (!halt_on_idle) {
		poll_pending(); /* raises the on_raise pollers that have work */
		poll_drop_wake();
		return;
	}
	irq_disable();
	if (poll_pending()) {
		poll_drop_wake();
		irq_enable();
		return;
	}
	if (!percpu_read(idle.tick_deadline))
		poll_drop_wake();
	else if (!arm_deadline()) {
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
	ic->armed_until = 0; /* periodic mode or a stop overwrote the one-shot */
	lapic_timer_periodic(halt_on_idle && !ic->tick_deadline ? TICK_US : 0);
}

static void idle_stats(void)
{
	const struct idle_cpu *ic = &this_cpu()->idle;

	printf("  idle=%s halts %llu timer_ticks %llu tick=%s due_at_sleep %llu guard_wakes %llu "
	       "shadow_breaks %llu\n",
	       config_get(&cfg_idle) == IDLE_HALT ? "halt" : "poll", (unsigned long long)ic->halts,
	       (unsigned long long)lapic_timer_ticks(), tick_choices[config_get(&cfg_tick)],
	       (unsigned long long)ic->early_wakes, (unsigned long long)ic->guard_wakes,
	       (unsigned long long)this_cpu()->shadow_breaks);
}

static void idle_stats_json(struct json_writer *w)
{
	const struct idle_cpu *ic = &this_cpu()->idle;

	json_put_string(w, "idle", config_get(&cfg_idle) == IDLE_HALT ? "halt" : "poll");
	json_put_u64(w, "halts", ic->halts);
	json_put_u64(w, "timer_ticks", lapic_timer_ticks());
	json_put_string(w, "tick", tick_choices[config_get(&cfg_tick)]);
	json_put_u64(w, "due_at_sleep", ic->early_wakes);
	json_put_u64(w, "guard_wakes", ic->guard_wakes);
	json_put_u64(w, "shadow_breaks", this_cpu()->shadow_breaks);
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
