/* SPDX-License-Identifier: MIT */
/*
 * The console's line editor: bytes in, a finished line out, and the bytes
 * to echo so a terminal shows what the line holds. No hardware here.
 */
#ifndef KERNEL_LINE_EDIT_H
#define KERNEL_LINE_EDIT_H

#include <stdbool.h>
#include <stddef.h>

#define LINE_MAX_LEN 256

struct line_editor {
	char buf[LINE_MAX_LEN];
	size_t len;
	bool overflow; /* a byte of this line did not fit and was dropped */
	bool too_long; /* the line just completed had such bytes: refuse it */
	bool last_was_cr; /* swallow the LF of a CR LF pair */
	int escape; /* position inside an ANSI escape sequence */
};

void line_edit_init(struct line_editor *le);

/*
 * Feed one byte. Writes at most LINE_ECHO_MAX bytes to echo into @echo and
 * their count to @echo_len. Returns true when a line is complete; it is
 * then in le->buf (NUL-terminated) until the next call. A line longer than
 * LINE_MAX_LEN - 1 characters keeps only its start and completes with
 * le->too_long set (also until the next call): not a line to run.
 */
#define LINE_ECHO_MAX 8
bool line_edit_feed(struct line_editor *le, int c, char *echo, size_t *echo_len);

/*
 * Split @line in place at blanks. Returns the number of words, or -1 when
 * there are more than @max.
 */
int line_split(char *line, char **argv, int max);

#endif
