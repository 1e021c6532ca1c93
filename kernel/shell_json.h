/* SPDX-License-Identifier: MIT */
/*
 * A console command's JSON form, for programs: `COMMAND ... json` prints
 * one line, "COMMAND-json: " and one JSON object, where the command
 * prints text for people otherwise (as `stats json` does with its
 * "stats-json: " line). The host reads it with ringside.guest_stats.json_of()
 * and never scrapes the text.
 */
#ifndef KERNEL_SHELL_JSON_H
#define KERNEL_SHELL_JSON_H

#include <stdbool.h>

#include "kernel/json_writer.h"

/* The longest object a command prints, in bytes (the buffer it is built in). */
#define SHELL_JSON_MAX 16384

/* True, and "json" taken off the arguments, when the last one is "json". */
bool shell_json_wanted(int *argc, char **argv);
/*
 * The writer for one command's object, its root object open: the caller
 * puts members in, then shell_json_end() prints the line. One command at
 * a time (the shell runs one), so one buffer serves them all.
 */
struct json_writer *shell_json_begin(void);
/*
 * Close the root and print "@cmd-json: {...}" on one line; an object that
 * did not fit is an error line instead (never a cut object). 0 or -1.
 */
int shell_json_end(const char *cmd);

#endif
