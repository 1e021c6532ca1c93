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

#define JSON_MAX_TOKENS 512
#define JSON_MAX_DEPTH 16
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

/*
 * The writer: appends to a caller's buffer and remembers overflow rather
 * than failing each call; check json_end() once. @key is NULL inside
 * arrays and for the root.
 */
struct json_writer {
	char *buf;
	size_t cap, len;
	bool overflow;
	unsigned int depth;
	bool first[JSON_MAX_DEPTH]; /* no member written yet at this depth */
};

void json_writer_init(struct json_writer *w, char *buf, size_t cap);
void json_open(struct json_writer *w, const char *key, char bracket);
void json_close(struct json_writer *w, char bracket);
void json_put_u64(struct json_writer *w, const char *key, uint64_t v);
void json_put_i64(struct json_writer *w, const char *key, int64_t v);
/* @micro / 10^6 as a decimal fraction: seconds from microseconds. */
void json_put_micro(struct json_writer *w, const char *key, uint64_t micro);
void json_put_bool(struct json_writer *w, const char *key, bool v);
void json_put_string(struct json_writer *w, const char *key, const char *s);
/* The text's length, or -1 if it did not fit or brackets do not balance. */
long json_end(struct json_writer *w);

#endif
