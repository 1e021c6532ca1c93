// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/shell.h"
#include "kernel/stats.h"

#define MAX_STATS 16

static struct {
	const char *name;
	void (*print)(void);
	void (*json)(struct json_writer *w);
} sections[MAX_STATS];
static int n_sections;

void stats_register(const char *name, void (*print)(void), void (*json)(struct json_writer *w))
{
	if (n_sections < MAX_STATS) {
		sections[n_sections].name = name;
		sections[n_sections].print = print;
		sections[n_sections].json = json;
		n_sections++;
	}
}

long stats_json(char *buf, size_t cap, const char *section)
{
	struct json_writer w;
	int shown = 0;

	json_writer_init(&w, buf, cap);
	json_open(&w, NULL, '{');
	for (int i = 0; i < n_sections; i++) {
		if (!sections[i].json || (section && strcmp(section, sections[i].name)))
			continue;
		json_open(&w, sections[i].name, '{');
		sections[i].json(&w);
		json_close(&w, '}');
		shown++;
	}
	json_close(&w, '}');
	if (section && !shown)
		return -1;
	return json_end(&w);
}

static bool has_json(const char *name)
{
	for (int i = 0; i < n_sections; i++)
		if (sections[i].json && !strcmp(name, sections[i].name))
			return true;
	return false;
}

/*
 * The object is built whole before any of it is printed: the counters
 * are read in one go (the console's own move while it prints), and an
 * object too big for the buffer is an error, never a cut line.
 */
static int cmd_stats_json(int argc, char **argv)
{
	static char buf[STATS_JSON_MAX];
	const char *section = argc == 3 ? argv[2] : NULL;
	long len;

	if (section && !has_json(section))
		return shell_error("stats: no subsystem '%s'", section);
	len = stats_json(buf, sizeof(buf), section);
	if (len < 0)
		return shell_error("stats json: the object exceeds %d bytes", STATS_JSON_MAX);
	console_write(STATS_JSON_MARKER, strlen(STATS_JSON_MARKER));
	console_write(buf, (size_t)len);
	console_write("\n", 1);
	return 0;
}

static int cmd_stats(int argc, char **argv)
{
	int shown = 0, printers = 0;

	if (argc >= 2 && !strcmp(argv[1], "json") && argc <= 3)
		return cmd_stats_json(argc, argv);
	if (argc > 2)
		return shell_error("usage: stats [json] [SUBSYSTEM]");
	for (int i = 0; i < n_sections; i++) {
		if (!sections[i].print)
			continue;
		printers++;
		if (argc == 2 && strcmp(argv[1], sections[i].name))
			continue;
		printf("[%s]\n", sections[i].name);
		sections[i].print();
		shown++;
	}
	if (argc == 2 && !shown)
		return shell_error("stats: no subsystem '%s'", argv[1]);
	if (!printers)
		printf("no counters registered\n");
	return 0;
}

static const struct shell_cmd stats_cmd = {
	.name = "stats",
	.usage = "[json] [SUBSYSTEM]",
	.help = "counters of every subsystem: packets, drops by reason, queues; json: one line",
	.run = cmd_stats,
};

void stats_init(void)
{
	shell_register(&stats_cmd);
}
