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

/* The shapes of net/'s keys (net.c, udp.c), declared here as they are there. */
CONFIG_KEY(cfg_ip) = {
	.name = "ip",
	.help = "our address",
	.type = CONFIG_IPV4,
	.max = 0xffffffff,
	.def = 0x0a00020f,
};
CONFIG_KEY(cfg_prefix) = {
	.name = "prefix",
	.help = "prefix length",
	.type = CONFIG_UINT,
	.min = 1,
	.max = 32,
	.def = 24,
};
CONFIG_KEY(cfg_gw) = {
	.name = "gw",
	.help = "gateway",
	.type = CONFIG_IPV4,
	.max = 0xffffffff,
	.def = 0x0a000202,
};
CONFIG_KEY(cfg_udp_echo_port) = {
	.name = "udp_echo_port",
	.help = "echo port",
	.type = CONFIG_UINT,
	.max = 65535,
	.def = 7,
};

static int setup(void **state)
{
	config_reset();
	return 0;
}

static void test_defaults(void **state)
{
	char buf[64];

	assert_int_equal(cfg_ip.type, CONFIG_IPV4);
	assert_int_equal(config_get(&cfg_ip), 0x0a00020f);
	config_format(&cfg_ip, buf, sizeof(buf));
	assert_string_equal(buf, "ip=10.0.2.15");
	config_format(&cfg_gw, buf, sizeof(buf));
	assert_string_equal(buf, "gw=10.0.2.2");
	assert_int_equal(config_get(&cfg_prefix), 24);
	assert_int_equal(config_get(&cfg_udp_echo_port), 7);
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
		assert_int_equal(config_get(&cfg_ip), good[i].value);
	}
	config_set("gw", "172.16.0.254", err, sizeof(err));
	config_format(&cfg_gw, buf, sizeof(buf));
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
		assert_int_equal(config_get(&cfg_ip), 0x0a00020f); /* unchanged */
	}
}

static void test_cmdline(void **state)
{
	int bad = config_parse_cmdline("BOOT_IMAGE=/x ip=10.1.2.3 gw=10.1.2.300 prefix=16 "
				       "udp_echo_port=7777",
				       NULL);

	assert_int_equal(bad, 2); /* BOOT_IMAGE: not a key of ours; gw: a bad value */
	assert_int_equal(config_get(&cfg_ip), 0x0a010203);
	assert_int_equal(config_get(&cfg_gw), 0x0a000202); /* default kept */
	assert_int_equal(config_get(&cfg_prefix), 16);
	assert_int_equal(config_get(&cfg_udp_echo_port), 7777);
	assert_int_equal(config_parse_cmdline("prefix=33 prefix=0 udp_echo_port=65536", NULL), 3);
}

static int hook_calls;

static void hook(struct config_key *key)
{
	assert_ptr_equal(key, &cfg_ip);
	hook_calls++;
}

static void test_hook_on_change_only(void **state)
{
	char err[128];

	static struct config_hook ip_hook = { .fn = hook };

	config_on_change(&cfg_ip, &ip_hook);
	config_set("ip", "10.0.2.15", err, sizeof(err)); /* same value */
	assert_int_equal(hook_calls, 0);
	config_set("ip", "10.0.2.16", err, sizeof(err));
	assert_int_equal(hook_calls, 1);
	config_set("ip", "10.0.2.", err, sizeof(err));
	assert_int_equal(hook_calls, 1);
	config_remove_hook(&cfg_ip, &ip_hook);
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
