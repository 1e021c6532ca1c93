// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "kernel/config.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/idle.h"
#include "kernel/lapic.h"
#include "kernel/poll.h"
#include "kernel/stats.h"

#define IDLE_HALT 1
#define TICK_US 1000

static uint64_t halts;

/*
 * Interrupts off, check, then `sti; hlt`: sti takes effect after the next
 * instruction, so an interrupt that became pending after the check still
 * ends the hlt instead of being taken before it (SDM 2B, STI).
 */
void idle_wait(void)
{
	if (config_get(CFG_IDLE) != IDLE_HALT)
		return;
	irq_disable();
	if (console_rx_ready() || poll_pending()) {
		irq_enable();
		return;
	}
	halts++;
	__asm__ __volatile__("sti; hlt" ::: "memory");
}

static void idle_changed(enum config_id id)
{
	lapic_timer_periodic(config_get(CFG_IDLE) == IDLE_HALT ? TICK_US : 0);
}

static void idle_stats(void)
{
	printf("  idle=%s halts %llu timer_ticks %llu\n",
	       config_get(CFG_IDLE) == IDLE_HALT ? "halt" : "poll", (unsigned long long)halts,
	       (unsigned long long)lapic_timer_ticks());
}

void idle_init(void)
{
	config_on_change(CFG_IDLE, idle_changed);
	idle_changed(CFG_IDLE);
	stats_register("idle", idle_stats);
}
