// SPDX-License-Identifier: MIT
/*
 * The CONFIG_IPV4 key type (ip=, gw=): strict dotted-quad parsing,
 * formatting back, errors that name the expected form, defaults kept on
 * bad command-line values, and change hooks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/config.h"

static int setup(void **state)
{
	config_reset();
	return 0;
}

static void test_defaults(void **state)
{
	char buf[64];

	assert_int_equal(config_key(CFG_IP)->type, CONFIG_IPV4);
	assert_int_equal(config_get(CFG_IP), 0x0a00020f);
	config_format(CFG_IP, buf, sizeof(buf));
	assert_string_equal(buf, "ip=10.0.2.15");
	config_format(CFG_GW, buf, sizeof(buf));
	assert_string_equal(buf, "gw=10.0.2.2");
	assert_int_equal(config_get(CFG_PREFIX), 24);
	assert_int_equal(config_get(CFG_UDP_ECHO_PORT), 7);
}

static void test_good_values(void **state)
{
	static const struct {
		const char *text;
		uint32_t value;
	} good[] = {
		{ "0.0.0.0", 0 },
		{ "255.255.255.255", 0xffffffff },
		{ "192.168.100.1", 0xc0a86401 },
		{ "1.2.3.4", 0x01020304 },
		{ "010.000.002.015", 0x0a00020f }, /* decimal, not octal */
	};
	char err[128], buf[64];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(config_set("ip", good[i].text, err, sizeof(err)), 0);
		assert_int_equal(config_get(CFG_IP), good[i].value);
	}
	config_set("gw", "172.16.0.254", err, sizeof(err));
	config_format(CFG_GW, buf, sizeof(buf));
	assert_string_equal(buf, "gw=172.16.0.254");
}

static void test_bad_values(void **state)
{
	static const char *const bad[] = {
		"",	      "1",	  "1.2.3",     "1.2.3.4.5", "1.2.3.",
		".1.2.3",     "1..2.3",	  "256.1.1.1", "1.2.3.256", "1.2.3.1000",
		"0001.2.3.4", "-1.2.3.4", "+1.2.3.4",  " 1.2.3.4",  "1.2.3.4 ",
		"1.2.3.4/24", "a.b.c.d",  "0x1.2.3.4", "1,2,3,4",   "99999999999",
	};
	char err[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_not_equal(config_set("ip", bad[i], err, sizeof(err)), 0);
		assert_non_null(strstr(err, "IPv4 address"));
		assert_int_equal(config_get(CFG_IP), 0x0a00020f); /* unchanged */
	}
}

static void test_cmdline(void **state)
{
	int bad = config_parse_cmdline("BOOT_IMAGE=/x ip=10.1.2.3 gw=10.1.2.300 prefix=16 "
				       "udp_echo_port=7777",
				       NULL);

	assert_int_equal(bad, 1);
	assert_int_equal(config_get(CFG_IP), 0x0a010203);
	assert_int_equal(config_get(CFG_GW), 0x0a000202); /* default kept */
	assert_int_equal(config_get(CFG_PREFIX), 16);
	assert_int_equal(config_get(CFG_UDP_ECHO_PORT), 7777);
	assert_int_equal(config_parse_cmdline("prefix=33 prefix=0 udp_echo_port=65536", NULL), 3);
}

static int hook_calls;

static void hook(enum config_id id)
{
	assert_int_equal(id, CFG_IP);
	hook_calls++;
}

static void test_hook_on_change_only(void **state)
{
	char err[128];

	config_on_change(CFG_IP, hook);
	config_set("ip", "10.0.2.15", err, sizeof(err)); /* same value */
	assert_int_equal(hook_calls, 0);
	config_set("ip", "10.0.2.16", err, sizeof(err));
	assert_int_equal(hook_calls, 1);
	config_set("ip", "10.0.2.", err, sizeof(err));
	assert_int_equal(hook_calls, 1);
	config_on_change(CFG_IP, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, setup),
		cmocka_unit_test_setup(test_good_values, setup),
		cmocka_unit_test_setup(test_bad_values, setup),
		cmocka_unit_test_setup(test_cmdline, setup),
		cmocka_unit_test_setup(test_hook_on_change_only, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
