// SPDX-License-Identifier: MIT
/* The bounded JSON reader and writer (app/json.c) used by the iperf3 server. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "app/json.h"

static struct json_doc doc;

static int parse(const char *text)
{
	return json_parse(&doc, text, strlen(text));
}

/* What iperf3 3.12 sends as its parameters for `-c ... -R -P 2 -t 2`. */
static const char params[] =
	"{\"tcp\":true,\"omit\":0,\"time\":2,\"num\":0,\"blockcount\":0,"
	"\"parallel\":2,\"reverse\":true,\"len\":131072,\"pacing_timer\":1000,"
	"\"client_version\":\"3.12\",\"title\":\"a \\\"quoted\\\" \\u00e9 title\","
	"\"extra\":[1,-2.5e3,null,{\"x\":[]}]}";

static void test_iperf_params(void **state)
{
	uint64_t v;
	bool b;

	assert_int_equal(parse(params), 0);
	assert_int_equal(doc.tok[0].type, JSON_OBJECT);
	assert_int_equal(doc.tok[0].count, 12);
	assert_true(json_get_u64(&doc, json_find(&doc, 0, "parallel"), &v));
	assert_int_equal(v, 2);
	assert_true(json_get_u64(&doc, json_find(&doc, 0, "len"), &v));
	assert_int_equal(v, 131072);
	assert_true(json_get_bool(&doc, json_find(&doc, 0, "reverse"), &b));
	assert_true(b);
	assert_true(json_get_bool(&doc, json_find(&doc, 0, "tcp"), &b));
	assert_true(b);
	assert_true(json_str_equal(&doc, json_find(&doc, 0, "client_version"), "3.12"));
	/* a key after nested containers is still found */
	assert_int_equal(json_find(&doc, 0, "nosuch"), -1);
	assert_int_equal(doc.tok[json_find(&doc, 0, "extra")].count, 4);
	/* wrong types are refused, not converted */
	assert_false(json_get_u64(&doc, json_find(&doc, 0, "tcp"), &v));
	assert_false(json_get_bool(&doc, json_find(&doc, 0, "time"), &b));
	assert_false(json_str_equal(&doc, json_find(&doc, 0, "time"), "2"));
}

static void test_arrays_and_index(void **state)
{
	int streams, s1;
	uint64_t v;

	assert_int_equal(parse(" {\"streams\":[{\"id\":1,\"bytes\":10},"
			       "{\"id\":3,\"bytes\":18446744073709551615}]} \n"),
			 0);
	streams = json_find(&doc, 0, "streams");
	assert_int_equal(doc.tok[streams].type, JSON_ARRAY);
	assert_int_equal(doc.tok[streams].count, 2);
	s1 = json_index(&doc, streams, 1);
	assert_true(json_get_u64(&doc, json_find(&doc, s1, "id"), &v));
	assert_int_equal(v, 3);
	assert_true(json_get_u64(&doc, json_find(&doc, s1, "bytes"), &v));
	assert_true(v == UINT64_MAX);
	assert_int_equal(json_index(&doc, streams, 2), -1);
	assert_int_equal(json_index(&doc, 0, 0), -1); /* not an array */
	assert_int_equal(json_find(&doc, streams, "id"), -1); /* not an object */
}

static void test_numbers(void **state)
{
	uint64_t v = 7;

	assert_int_equal(parse("18446744073709551616"), 0); /* valid JSON ... */
	assert_false(json_get_u64(&doc, 0, &v)); /* ... too big for 64 bits */
	assert_int_equal(v, 7);
	assert_int_equal(parse("-1"), 0);
	assert_false(json_get_u64(&doc, 0, &v));
	assert_int_equal(parse("1.5"), 0);
	assert_false(json_get_u64(&doc, 0, &v));
	assert_int_equal(parse("0"), 0);
	assert_true(json_get_u64(&doc, 0, &v));
	assert_int_equal(v, 0);
	assert_int_equal(parse("1e9"), 0);
	assert_int_equal(parse("-0.0E-1"), 0);
}

static void test_malformed_rejected(void **state)
{
	static const char *const bad[] = {
		"",	    " ",	   "{",		"}",
		"[",	    "[1,]",	   "[,1]",	"{\"a\"}",
		"{\"a\":}", "{\"a\":1,}",  "{a:1}",	"{\"a\" 1}",
		"[1 2]",    "01",	   "-",		"1.",
		".5",	    "1e",	   "1e+",	"+1",
		"tru",	    "truex",	   "nul",	"\"abc",
		"\"\\x\"",  "\"\\u12g4\"", "\"\\u12\"", "\"tab\there\"",
		"\"\\",	    "{\"a\":1}}",  "[1]x",	"'a'",
		"{1:2}",    "[}",	   "{]",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i]);

		if (r != -EINVAL)
			fail_msg("accepted or wrong error for %s: %d", bad[i], r);
	}
	/* an embedded NUL ends nothing: it is just an invalid byte */
	assert_int_equal(json_parse(&doc, "[1]\0", 4), -EINVAL);
	assert_int_equal(json_parse(&doc, "\"a\0b\"", 5), -EINVAL);
}

static void test_limits(void **state)
{
	static char text[JSON_MAX_TEXT + 2];
	size_t n = 0;

	/* nesting one past the limit */
	for (int i = 0; i <= JSON_MAX_DEPTH; i++)
		text[n++] = '[';
	for (int i = 0; i <= JSON_MAX_DEPTH; i++)
		text[n++] = ']';
	assert_int_equal(json_parse(&doc, text, n), -E2BIG);
	assert_int_equal(json_parse(&doc, text + 1, n - 2), 0);

	/* more values than tokens */
	n = 0;
	text[n++] = '[';
	for (int i = 0; i < JSON_MAX_TOKENS; i++) {
		text[n++] = '0';
		text[n++] = ',';
	}
	text[n - 1] = ']';
	assert_int_equal(json_parse(&doc, text, n), -E2BIG);
	text[n - 3] = ']'; /* one value fewer: the array and 511 zeros fit */
	assert_int_equal(json_parse(&doc, text, n - 2), 0);

	/* text longer than allowed, whatever it holds */
	memset(text, ' ', sizeof(text));
	text[0] = '0';
	assert_int_equal(json_parse(&doc, text, JSON_MAX_TEXT + 1), -E2BIG);
	assert_int_equal(json_parse(&doc, text, JSON_MAX_TEXT), 0);
}

static void test_writer_roundtrip(void **state)
{
	char buf[256];
	struct json_writer w;
	uint64_t v;
	long len;
	int s0;

	json_writer_init(&w, buf, sizeof(buf));
	json_open(&w, NULL, '{');
	json_put_u64(&w, "bytes", 123456789012ull);
	json_put_i64(&w, "neg", -5);
	json_put_bool(&w, "ok", true);
	json_put_micro(&w, "end_time", 2000123);
	json_put_string(&w, "s", "q\"b\\\n");
	json_open(&w, "streams", '[');
	json_open(&w, NULL, '{');
	json_put_u64(&w, "id", 1);
	json_close(&w, '}');
	json_close(&w, ']');
	json_close(&w, '}');
	len = json_end(&w);
	assert_true(len > 0);
	assert_string_equal(buf, "{\"bytes\":123456789012,\"neg\":-5,\"ok\":true,"
				 "\"end_time\":2.000123,\"s\":\"q\\\"b\\\\\\u000a\","
				 "\"streams\":[{\"id\":1}]}");
	assert_int_equal(json_parse(&doc, buf, len), 0);
	s0 = json_index(&doc, json_find(&doc, 0, "streams"), 0);
	assert_true(json_get_u64(&doc, json_find(&doc, s0, "id"), &v));
	assert_int_equal(v, 1);
}

static void test_writer_overflow_and_balance(void **state)
{
	char buf[16];
	struct json_writer w;

	json_writer_init(&w, buf, sizeof(buf));
	json_open(&w, NULL, '{');
	json_put_u64(&w, "a_long_key", 1234567890);
	json_close(&w, '}');
	assert_int_equal(json_end(&w), -1);
	assert_true(strlen(buf) < sizeof(buf));

	json_writer_init(&w, buf, sizeof(buf));
	json_open(&w, NULL, '[');
	assert_int_equal(json_end(&w), -1); /* unclosed */
	json_writer_init(&w, buf, sizeof(buf));
	json_close(&w, ']');
	assert_int_equal(json_end(&w), -1); /* closed what was never opened */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iperf_params),
		cmocka_unit_test(test_arrays_and_index),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_malformed_rejected),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_writer_roundtrip),
		cmocka_unit_test(test_writer_overflow_and_balance),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
