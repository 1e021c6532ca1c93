// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "kernel/shell.h"
#include "kernel/stats.h"

#define MAX_STATS 16

static struct {
	const char *name;
	void (*print)(void);
} printers[MAX_STATS];
static int n_printers;

void stats_register(const char *name, void (*print)(void))
{
	if (n_printers < MAX_STATS) {
		printers[n_printers].name = name;
		printers[n_printers].print = print;
		n_printers++;
	}
}

static int cmd_stats(int argc, char **argv)
{
	int shown = 0;

	if (argc > 2)
		return shell_error("usage: stats [SUBSYSTEM]");
	for (int i = 0; i < n_printers; i++) {
		if (argc == 2 && strcmp(argv[1], printers[i].name))
			continue;
		printf("[%s]\n", printers[i].name);
		printers[i].print();
		shown++;
	}
	if (argc == 2 && !shown)
		return shell_error("stats: no subsystem '%s'", argv[1]);
	if (!n_printers)
		printf("no counters registered\n");
	return 0;
}

static const struct shell_cmd stats_cmd = {
	.name = "stats",
	.usage = "[SUBSYSTEM]",
	.help = "counters of every subsystem: packets, drops by reason, queues",
	.run = cmd_stats,
};

void stats_init(void)
{
	shell_register(&stats_cmd);
}
