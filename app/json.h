/* SPDX-License-Identifier: MIT */
/*
 * A small, bounded JSON (RFC 8259) reader and writer for the iperf3
 * control protocol. The reader checks the whole text against the grammar
 * and records one token per value in a fixed table: no allocation, no
 * recursion beyond JSON_MAX_DEPTH, and any malformed or oversized input is
 * rejected whole. Strings are not unescaped: lookups compare raw text, so
 * a key spelled with escapes matches nothing.
 */
#ifndef APP_JSON_H
#define APP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/json_writer.h" /* the writer, and JSON_MAX_DEPTH */

#define JSON_MAX_TOKENS 512
#define JSON_MAX_TEXT 65536

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_token {
	uint8_t type; /* enum json_type */
	uint32_t start, len; /* the value's text; a string's without quotes */
	uint16_t next; /* the token after this value and everything inside it */
	uint16_t count; /* array: elements; object: members */
};

struct json_doc {
	const char *text;
	size_t len;
	unsigned int n_tokens;
	struct json_token tok[JSON_MAX_TOKENS];
};

/* 0, or -EINVAL (not JSON) / -E2BIG (a limit above); token 0 is the root. */
int json_parse(struct json_doc *doc, const char *text, size_t len);

/* The value of member @key in object token @obj; -1 if none or not an object. */
int json_find(const struct json_doc *doc, int obj, const char *key);
/* Element @i of array token @arr; -1 if none. */
int json_index(const struct json_doc *doc, int arr, unsigned int i);

/* A non-negative integer without fraction or exponent that fits in 64 bits. */
bool json_get_u64(const struct json_doc *doc, int tok, uint64_t *v);
bool json_get_bool(const struct json_doc *doc, int tok, bool *v);
/* The string's raw text equals @s. */
bool json_str_equal(const struct json_doc *doc, int tok, const char *s);

#endif
