// SPDX-License-Identifier: MIT
#include <string.h>

#include "kernel/line_edit.h"

#define CTRL_U 0x15
#define BACKSPACE 0x08
#define DELETE 0x7f
#define ESC 0x1b

void line_edit_init(struct line_editor *le)
{
	memset(le, 0, sizeof(*le));
}

/*
 * Escape sequences (ECMA-48): CSI is ESC [ params final-byte (0x40..0x7e),
 * SS3 is ESC O and one byte, anything else ESC and one byte. Arrow keys
 * and the like: we have no history or cursor movement, so they are dropped.
 */
enum { ESC_NONE, ESC_START, ESC_CSI, ESC_SS3 };

static bool in_escape(struct line_editor *le, int c)
{
	switch (le->escape) {
	case ESC_NONE:
		if (c != ESC)
			return false;
		le->escape = ESC_START;
		return true;
	case ESC_START:
		le->escape = c == '[' ? ESC_CSI : c == 'O' ? ESC_SS3 : ESC_NONE;
		return true;
	case ESC_CSI:
		if (c >= 0x40 && c <= 0x7e)
			le->escape = ESC_NONE;
		return true;
	default:
		le->escape = ESC_NONE;
		return true;
	}
}

bool line_edit_feed(struct line_editor *le, int c, char *echo, size_t *echo_len)
{
	bool was_cr = le->last_was_cr;

	*echo_len = 0;
	le->last_was_cr = false;
	le->too_long = false;
	c &= 0xff;

	if (in_escape(le, c))
		return false;

	switch (c) {
	case '\n':
		if (was_cr)
			return false;
		/* fall through */
	case '\r':
		le->last_was_cr = c == '\r';
		le->buf[le->len] = '\0';
		le->len = 0;
		le->too_long = le->overflow;
		le->overflow = false;
		echo[(*echo_len)++] = '\n'; /* the console adds the CR */
		return true;
	case BACKSPACE:
	case DELETE:
		if (le->len) {
			le->len--;
			memcpy(echo, "\b \b", 3);
			*echo_len = 3;
		}
		return false;
	case CTRL_U:
		le->len = 0;
		le->overflow = false;
		/* erase the whole terminal line, then the prompt is redrawn */
		memcpy(echo, "\r\x1b[K", 4);
		*echo_len = 4;
		return false;
	}
	if (c < 0x20 || c > 0x7e)
		return false;
	if (le->len >= LINE_MAX_LEN - 1) {
		/*
		 * Full: drop the byte, and refuse the line at its end. Running
		 * its start would run something the user did not type.
		 */
		le->overflow = true;
		return false;
	}
	le->buf[le->len++] = (char)c;
	echo[(*echo_len)++] = (char)c;
	return false;
}

int line_split(char *line, char **argv, int max)
{
	int argc = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			return argc;
		if (argc == max)
			return -1;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
}
