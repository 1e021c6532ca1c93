// SPDX-License-Identifier: MIT
/* The configuration table: set/get, value checking, the command line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/config.h"

static int reset(void **state)
{
	config_reset();
	return 0;
}

static void test_defaults(void **state)
{
	char buf[64];

	assert_int_equal(config_get(CFG_LOGLEVEL), 4);
	assert_int_equal(config_lookup("loglevel"), CFG_LOGLEVEL);
	assert_int_equal(config_lookup("nosuchkey"), -1);
	config_format(CFG_LOGLEVEL, buf, sizeof(buf));
	assert_string_equal(buf, "loglevel=4");
}

static void test_set_valid(void **state)
{
	char err[128] = "";

	assert_int_equal(config_set("loglevel", "7", err, sizeof(err)), 0);
	assert_int_equal(config_get(CFG_LOGLEVEL), 7);
	assert_int_equal(config_set("loglevel", "0x2", err, sizeof(err)), 0);
	assert_int_equal(config_get(CFG_LOGLEVEL), 2);
	assert_string_equal(err, "");
}

static void test_set_invalid_keeps_value(void **state)
{
	static const char *const bad[] = { "8", "-1", "",   "4x",
					   "x", " 4", "+4", "99999999999999999999999" };
	char err[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_not_equal(config_set("loglevel", bad[i], err, sizeof(err)), 0);
		assert_non_null(strstr(err, "expected a number from 0 to 7"));
		assert_int_equal(config_get(CFG_LOGLEVEL), 4);
	}
	assert_int_equal(config_set("nosuchkey", "1", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "unknown key 'nosuchkey' (try 'config')");
}

static void test_check_does_not_apply(void **state)
{
	char err[128];
	uint64_t v = 0;

	assert_int_equal(config_check("loglevel", "6", &v, err, sizeof(err)), CFG_LOGLEVEL);
	assert_int_equal(v, 6);
	assert_int_equal(config_get(CFG_LOGLEVEL), 4);
	assert_true(config_check("loglevel", "9", &v, err, sizeof(err)) < 0);
	assert_int_equal(config_check("nosuchkey", "1", NULL, err, sizeof(err)), -ENOENT);
	assert_int_equal(config_check("ring", "split", &v, err, sizeof(err)), CFG_RING);
	assert_int_equal(v, 0);
	assert_true(config_check("ring", "spilt", &v, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "expected split|packed"));
}

static void fired_hook(enum config_id id);
static int hook_calls;

static void fired_hook(enum config_id id)
{
	assert_int_equal(id, CFG_TXPOLL);
	hook_calls++;
}

static void test_change_hook(void **state)
{
	char err[128];

	hook_calls = 0;
	config_on_change(CFG_TXPOLL, fired_hook);
	assert_int_equal(config_set("txpoll", "off", err, sizeof(err)), 0);
	assert_int_equal(config_set("txpoll", "0", err, sizeof(err)), 0); /* no change */
	assert_true(config_set("txpoll", "2", err, sizeof(err)) < 0);
	assert_int_equal(hook_calls, 1);
	assert_int_equal(config_get(CFG_TXPOLL), 0);
	config_on_change(CFG_TXPOLL, NULL);
}

static void test_error_truncates_safely(void **state)
{
	char err[8];

	assert_int_not_equal(config_set("loglevel", "12345678901234567890", err, sizeof(err)), 0);
	assert_int_equal(strlen(err), sizeof(err) - 1);
}

static int reports;
static char last_report[160];

static void report(const char *msg)
{
	reports++;
	strncpy(last_report, msg, sizeof(last_report) - 1);
}

static void test_cmdline(void **state)
{
	reports = 0;
	assert_int_equal(
		config_parse_cmdline("BOOT_IMAGE=/boot/x  loglevel=6 quiet foo=bar", report), 0);
	assert_int_equal(config_get(CFG_LOGLEVEL), 6);
	assert_int_equal(reports, 0);

	/* a bad value for a known key is reported and the value kept */
	assert_int_equal(config_parse_cmdline("\tloglevel=42 ", report), 1);
	assert_int_equal(reports, 1);
	assert_non_null(strstr(last_report, "bad value '42' for loglevel"));
	assert_int_equal(config_get(CFG_LOGLEVEL), 6);

	/* the last of repeated keys wins; empty and blank lines are fine */
	assert_int_equal(config_parse_cmdline("loglevel=1 loglevel=3", report), 0);
	assert_int_equal(config_get(CFG_LOGLEVEL), 3);
	assert_int_equal(config_parse_cmdline("", report), 0);
	assert_int_equal(config_parse_cmdline("   ", NULL), 0);
	assert_int_equal(config_parse_cmdline("loglevel= =5 loglevel", NULL), 1);
	assert_int_equal(config_get(CFG_LOGLEVEL), 3);
}

static void test_cmdline_long_word(void **state)
{
	char line[1024];

	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	memcpy(line + 600, " loglevel=2 ", 12);
	assert_int_equal(config_parse_cmdline(line, NULL), 0);
	assert_int_equal(config_get(CFG_LOGLEVEL), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, reset),
		cmocka_unit_test_setup(test_set_valid, reset),
		cmocka_unit_test_setup(test_set_invalid_keeps_value, reset),
		cmocka_unit_test_setup(test_error_truncates_safely, reset),
		cmocka_unit_test_setup(test_check_does_not_apply, reset),
		cmocka_unit_test_setup(test_change_hook, reset),
		cmocka_unit_test_setup(test_cmdline, reset),
		cmocka_unit_test_setup(test_cmdline_long_word, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
