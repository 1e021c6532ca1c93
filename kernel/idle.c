// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "kernel/config.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/idle.h"
#include "kernel/lapic.h"
#include "kernel/poll.h"
#include "kernel/stats.h"

static const char *const idle_choices[] = { "poll", "halt", NULL };
CONFIG_KEY(cfg_idle) = {
	.name = "idle",
	.help = "nothing to do: poll on, or halt until an interrupt (MSI-X or a 1 ms tick)",
	.type = CONFIG_ENUM,
	.choices = idle_choices,
	.def = 0,
};

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
	if (config_get(&cfg_idle) != IDLE_HALT)
		return;
	irq_disable();
	if (console_rx_ready() || poll_pending()) {
		irq_enable();
		return;
	}
	halts++;
	__asm__ __volatile__("sti; hlt" ::: "memory");
}

static void idle_changed(struct config_key *key)
{
	lapic_timer_periodic(config_get(&cfg_idle) == IDLE_HALT ? TICK_US : 0);
}

static void idle_stats(void)
{
	printf("  idle=%s halts %llu timer_ticks %llu\n",
	       config_get(&cfg_idle) == IDLE_HALT ? "halt" : "poll", (unsigned long long)halts,
	       (unsigned long long)lapic_timer_ticks());
}

void idle_init(void)
{
	static struct config_hook hook = { .fn = idle_changed };

	config_on_change(&cfg_idle, &hook);
	idle_changed(&cfg_idle);
	stats_register("idle", idle_stats);
}
