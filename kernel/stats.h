/* SPDX-License-Identifier: MIT */
/*
 * The `stats` command: every subsystem registers a printer for its
 * counters, so one command shows every drop, retry and error by name.
 * `stats json` shows the same counters as one line of JSON, one object
 * member a section, for programs (host/ringside/guest_stats.py).
 */
#ifndef KERNEL_STATS_H
#define KERNEL_STATS_H

#include <stddef.h>

#include "kernel/json_writer.h"

/* What `stats json` prints before the object, on the same line. */
#define STATS_JSON_MARKER "stats-json: "
/*
 * The longest object `stats json` prints, in bytes. The console has no
 * line limit (console_write sends every byte, and the host reads a
 * stream), so this is only the buffer the text is built in: an object
 * that would not fit is not printed at all, the command fails with an
 * error line instead of printing a cut line.
 */
#define STATS_JSON_MAX 16384

/*
 * @name's counters: @print writes lines for `stats` (NULL: the section is
 * only in `stats json`, e.g. `net`, which has its own text command);
 * @json writes the section's members into its open object.
 */
void stats_register(const char *name, void (*print)(void), void (*json)(struct json_writer *w));
/*
 * Every section with a JSON writer (or only @section if not NULL) as one
 * object in @buf: its length, or -1 if it did not fit in @cap bytes
 * (with the NUL) or no section is named @section.
 */
long stats_json(char *buf, size_t cap, const char *section);
void stats_init(void);

#endif
