// SPDX-License-Identifier: MIT
/* The configuration table: set/get, value checking, the command line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/config.h"

/*
 * Keys declared here as a subsystem would declare its own; the same
 * shapes as the kernel's loglevel, ring and txpoll.
 */
CONFIG_KEY(cfg_loglevel) = {
	.name = "loglevel",
	.help = "messages up to this level",
	.type = CONFIG_UINT,
	.min = 0,
	.max = 7,
	.def = 4,
};
static const char *const ring_choices[] = { "split", "packed", NULL };
CONFIG_KEY(cfg_ring) = {
	.name = "ring",
	.help = "layout",
	.type = CONFIG_ENUM,
	.choices = ring_choices,
	.def = 1,
};
CONFIG_KEY(cfg_txpoll) = {
	.name = "txpoll",
	.help = "reclaim in the loop",
	.type = CONFIG_BOOL,
	.def = 1,
};

static int reset(void **state)
{
	config_reset();
	return 0;
}

static void test_defaults(void **state)
{
	char buf[64];

	assert_int_equal(config_get(&cfg_loglevel), 4);
	assert_ptr_equal(config_lookup("loglevel"), &cfg_loglevel);
	assert_null(config_lookup("nosuchkey"));
	config_format(&cfg_loglevel, buf, sizeof(buf));
	assert_string_equal(buf, "loglevel=4");
}

static void test_set_valid(void **state)
{
	char err[128] = "";

	assert_int_equal(config_set("loglevel", "7", err, sizeof(err)), 0);
	assert_int_equal(config_get(&cfg_loglevel), 7);
	assert_int_equal(config_set("loglevel", "0x2", err, sizeof(err)), 0);
	assert_int_equal(config_get(&cfg_loglevel), 2);
	assert_string_equal(err, "");
}

/* Numbers with k, m and g (powers of 1024), and everything refused. */
static void test_parse_uint_suffixes(void **state)
{
	static const struct {
		const char *text;
		uint64_t value;
	} good[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "4k", 4096 },
		{ "4K", 4096 },
		{ "64k", 65536 },
		{ "1m", 1 << 20 },
		{ "2G", 2ULL << 30 },
		{ "0x10k", 16 << 10 },
		{ "17179869183g", 17179869183ULL << 30 },
	};
	static const char *const bad[] = {
		"",    "k",   "-1", "+1",	    " 1",
		"4kb", "4 k", "1t", "17179869184g", "99999999999999999999",
		"0x"
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(config_parse_uint(good[i].text, &v), 0);
		assert_int_equal(v, good[i].value);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(config_parse_uint(bad[i], &v), -EINVAL);
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
		assert_int_equal(config_get(&cfg_loglevel), 4);
	}
	assert_int_equal(config_set("nosuchkey", "1", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "unknown key 'nosuchkey' (try 'config')");
}

/* The longest console line quoted in a reason: the reason is whole. */
static void test_long_value_reason_whole(void **state)
{
	char value[255 - 13 + 1], err[CONFIG_ERR_MAX];
	const char *tail;

	memset(value, '9', sizeof(value) - 1); /* "set loglevel=" plus this is 255 */
	value[sizeof(value) - 1] = '\0';
	assert_true(config_set("loglevel", value, err, sizeof(err)) < 0);
	tail = "' for loglevel: expected a number from 0 to 7";
	assert_int_equal(strlen(err), strlen("bad value '") + strlen(value) + strlen(tail));
	assert_string_equal(err + strlen(err) - strlen(tail), tail);
	assert_int_equal(config_set(value, "1", err, sizeof(err)), -ENOENT);
	assert_string_equal(err + strlen(err) - strlen("' (try 'config')"), "' (try 'config')");
}

static void test_check_does_not_apply(void **state)
{
	char err[128];
	uint64_t v = 0;

	assert_int_equal(config_check("loglevel", "6", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 6);
	assert_int_equal(config_get(&cfg_loglevel), 4);
	assert_true(config_check("loglevel", "9", &v, err, sizeof(err)) < 0);
	assert_int_equal(config_check("nosuchkey", "1", NULL, err, sizeof(err)), -ENOENT);
	assert_int_equal(config_check("ring", "split", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 0);
	assert_true(config_check("ring", "spilt", &v, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "expected split|packed"));
}

static int hook_calls, other_calls;

static void fired_hook(struct config_key *key)
{
	assert_ptr_equal(key, &cfg_txpoll);
	assert_int_equal(config_get(key), 0); /* called after the change */
	hook_calls++;
}

static void other_hook(struct config_key *key)
{
	assert_int_equal(hook_calls, other_calls + 1); /* in the order added */
	other_calls++;
}

static void test_change_hooks(void **state)
{
	static struct config_hook first = { .fn = fired_hook }, second = { .fn = other_hook };
	char err[128];

	hook_calls = other_calls = 0;
	config_on_change(&cfg_txpoll, &first);
	config_on_change(&cfg_txpoll, &second); /* a second hook adds, not replaces */
	config_on_change(&cfg_txpoll, &first); /* adding it again changes nothing */
	assert_int_equal(config_set("txpoll", "off", err, sizeof(err)), 0);
	assert_int_equal(config_set("txpoll", "0", err, sizeof(err)), 0); /* no change */
	assert_true(config_set("txpoll", "2", err, sizeof(err)) < 0);
	assert_int_equal(hook_calls, 1);
	assert_int_equal(other_calls, 1);
	assert_int_equal(config_get(&cfg_txpoll), 0);
	config_remove_hook(&cfg_txpoll, &first);
	config_remove_hook(&cfg_txpoll, &second);
	assert_int_equal(config_set("txpoll", "1", err, sizeof(err)), 0);
	assert_int_equal(hook_calls, 1);
}

static void test_every_key_listed(void **state)
{
	bool seen_loglevel = false, seen_ring = false, seen_txpoll = false;
	int n = 0;

	for (struct config_key *k = config_next(NULL); k; k = config_next(k)) {
		seen_loglevel |= k == &cfg_loglevel;
		seen_ring |= k == &cfg_ring;
		seen_txpoll |= k == &cfg_txpoll;
		n++;
	}
	assert_int_equal(n, 3);
	assert_true(seen_loglevel && seen_ring && seen_txpoll);
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
	assert_int_equal(config_parse_cmdline("quiet  loglevel=6 ring=split", report), 0);
	assert_int_equal(config_get(&cfg_loglevel), 6);
	assert_int_equal(reports, 0);

	/* a key that does not exist is named, whatever its value */
	assert_int_equal(config_parse_cmdline("rign=split loglevel=5 BOOT_IMAGE=/x", report), 2);
	assert_int_equal(reports, 2);
	assert_string_equal(last_report, "unknown key 'BOOT_IMAGE' (ignored)");
	assert_int_equal(config_get(&cfg_loglevel), 5);

	/* a bad value for a known key is reported and the value kept */
	assert_int_equal(config_parse_cmdline("\tloglevel=42 ", report), 1);
	assert_int_equal(reports, 3);
	assert_string_equal(last_report,
			    "bad value '42' for loglevel: expected a number from 0 to 7 "
			    "(default kept)");
	assert_int_equal(config_get(&cfg_loglevel), 5);

	/* the last of repeated keys wins; empty and blank lines are fine */
	assert_int_equal(config_parse_cmdline("loglevel=1 loglevel=3", report), 0);
	assert_int_equal(config_get(&cfg_loglevel), 3);
	assert_int_equal(config_parse_cmdline("", report), 0);
	assert_int_equal(config_parse_cmdline("   ", NULL), 0);
	/* an empty value is a bad one, an empty key an unknown one */
	assert_int_equal(config_parse_cmdline("loglevel= =5 loglevel", NULL), 2);
	assert_int_equal(config_get(&cfg_loglevel), 3);
}

static void test_cmdline_long_word(void **state)
{
	char line[1024];

	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	memcpy(line + 600, " loglevel=2 ", 12);
	assert_int_equal(config_parse_cmdline(line, NULL), 0);
	assert_int_equal(config_get(&cfg_loglevel), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, reset),
		cmocka_unit_test_setup(test_set_valid, reset),
		cmocka_unit_test_setup(test_parse_uint_suffixes, reset),
		cmocka_unit_test_setup(test_set_invalid_keeps_value, reset),
		cmocka_unit_test_setup(test_error_truncates_safely, reset),
		cmocka_unit_test_setup(test_check_does_not_apply, reset),
		cmocka_unit_test_setup(test_change_hooks, reset),
		cmocka_unit_test_setup(test_every_key_listed, reset),
		cmocka_unit_test_setup(test_cmdline, reset),
		cmocka_unit_test_setup(test_cmdline_long_word, reset),
		cmocka_unit_test_setup(test_long_value_reason_whole, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
