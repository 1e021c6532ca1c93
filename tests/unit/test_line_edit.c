// SPDX-License-Identifier: MIT
/* The console line editor and the word splitter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/line_edit.h"

/* Feed @in; return the number of completed lines, the last one in @line. */
static int feed(struct line_editor *le, const char *in, size_t n, char *line, char *echo_all)
{
	int lines = 0;

	if (echo_all)
		echo_all[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char echo[LINE_ECHO_MAX + 1];
		size_t len;

		if (line_edit_feed(le, (unsigned char)in[i], echo, &len)) {
			strcpy(line, le->buf);
			lines++;
		}
		assert_true(len <= LINE_ECHO_MAX);
		echo[len] = '\0';
		if (echo_all)
			strcat(echo_all, echo);
	}
	return lines;
}

#define FEED(le, s, line, echo) feed(le, s, sizeof(s) - 1, line, echo)

static void test_plain_lines(void **state)
{
	struct line_editor le;
	char line[LINE_MAX_LEN], echo[1024];

	line_edit_init(&le);
	assert_int_equal(FEED(&le, "help\r", line, echo), 1);
	assert_string_equal(line, "help");
	assert_string_equal(echo, "help\n");
	/* CR LF is one line end, LF alone is one too */
	assert_int_equal(FEED(&le, "a\r\nb\n", line, NULL), 2);
	assert_string_equal(line, "b");
	assert_int_equal(FEED(&le, "\n", line, NULL), 1);
	assert_string_equal(line, "");
}

static void test_backspace_and_ctrl_u(void **state)
{
	struct line_editor le;
	char line[LINE_MAX_LEN], echo[1024];

	line_edit_init(&le);
	assert_int_equal(FEED(&le, "helx\x7fp\r", line, echo), 1);
	assert_string_equal(line, "help");
	assert_string_equal(echo, "helx\b \bp\n");
	assert_int_equal(FEED(&le, "\b\bab\b\bcd\r", line, NULL), 1);
	assert_string_equal(line, "cd");
	assert_int_equal(FEED(&le, "garbage\x15info\r", line, NULL), 1);
	assert_string_equal(line, "info");
}

static void test_escape_and_controls_dropped(void **state)
{
	struct line_editor le;
	char line[LINE_MAX_LEN];

	line_edit_init(&le);
	/* arrow keys, a lone ESC pair, NUL, bell, high bytes */
	assert_int_equal(FEED(&le, "\x1b[Ami\x1b[1;5Cn\x1bOf\x00\x07\xffo\r", line, NULL), 1);
	assert_string_equal(line, "mino");
}

/* Feed @n bytes of 'x' and the line end @end; true if a line completed. */
static bool feed_xs(struct line_editor *le, size_t n, int end)
{
	char echo[LINE_ECHO_MAX];
	size_t len;

	for (size_t i = 0; i < n; i++) {
		assert_false(line_edit_feed(le, 'x', echo, &len));
		/* what does not fit is not echoed either */
		assert_int_equal(len, i < LINE_MAX_LEN - 1 ? 1 : 0);
	}
	return line_edit_feed(le, end, echo, &len);
}

static void test_overlong_line_refused(void **state)
{
	struct line_editor le;
	char line[LINE_MAX_LEN];

	line_edit_init(&le);
	/* the longest line that fits is a line */
	assert_true(feed_xs(&le, LINE_MAX_LEN - 1, '\r'));
	assert_false(le.too_long);
	assert_int_equal(strlen(le.buf), LINE_MAX_LEN - 1);
	/* one more: completes, flagged, its start kept in bounds */
	assert_true(feed_xs(&le, LINE_MAX_LEN, '\n'));
	assert_true(le.too_long);
	assert_int_equal(strlen(le.buf), LINE_MAX_LEN - 1);
	/* twice the limit, and backspacing what is shown does not make it fit */
	assert_false(feed_xs(&le, LINE_MAX_LEN * 2, '\b'));
	assert_int_equal(FEED(&le, "\r", line, NULL), 1);
	assert_true(le.too_long);
	/* the next line is judged on its own */
	assert_int_equal(FEED(&le, "help\r", line, NULL), 1);
	assert_false(le.too_long);
	assert_string_equal(line, "help");
	/* Ctrl-U erases an overlong line and its flag */
	assert_false(feed_xs(&le, LINE_MAX_LEN + 5, 0x15));
	assert_int_equal(FEED(&le, "info\r", line, NULL), 1);
	assert_false(le.too_long);
	assert_string_equal(line, "info");
}

static void test_split(void **state)
{
	char line[] = "  set  a=1\tb=2  ";
	char *argv[4];

	assert_int_equal(line_split(line, argv, 4), 3);
	assert_string_equal(argv[0], "set");
	assert_string_equal(argv[1], "a=1");
	assert_string_equal(argv[2], "b=2");

	char empty[] = "   ";

	assert_int_equal(line_split(empty, argv, 4), 0);

	char many[] = "a b c d e";

	assert_int_equal(line_split(many, argv, 4), -1);

	char exact[] = "a b c d";

	assert_int_equal(line_split(exact, argv, 4), 4);
	assert_string_equal(argv[3], "d");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_lines),
		cmocka_unit_test(test_backspace_and_ctrl_u),
		cmocka_unit_test(test_escape_and_controls_dropped),
		cmocka_unit_test(test_overlong_line_refused),
		cmocka_unit_test(test_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
