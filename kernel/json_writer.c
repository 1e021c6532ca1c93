// SPDX-License-Identifier: MIT
/*
 * The JSON writer (kernel/json_writer.h): text appended to a fixed
 * buffer, overflow remembered and reported once by json_end().
 */
#include <stdio.h>
#include <string.h>

#include "kernel/json_writer.h"

void json_writer_init(struct json_writer *w, char *buf, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->cap = cap;
	w->first[0] = true;
}

static void put_raw(struct json_writer *w, const char *s, size_t n)
{
	if (w->overflow || w->cap - w->len < n + 1) {
		w->overflow = true;
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void put_quoted(struct json_writer *w, const char *s)
{
	put_raw(w, "\"", 1);
	for (; *s; s++) {
		char esc[8];
		unsigned char c = *s;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = c;
			put_raw(w, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put_raw(w, esc, 6);
		} else {
			put_raw(w, s, 1);
		}
	}
	put_raw(w, "\"", 1);
}

/* The comma before a member and its key, if it has one. */
static void put_key(struct json_writer *w, const char *key)
{
	if (!w->first[w->depth])
		put_raw(w, ",", 1);
	w->first[w->depth] = false;
	if (key) {
		put_quoted(w, key);
		put_raw(w, ":", 1);
	}
}

void json_open(struct json_writer *w, const char *key, char bracket)
{
	put_key(w, key);
	put_raw(w, &bracket, 1);
	if (w->depth + 1 >= JSON_MAX_DEPTH) {
		w->overflow = true;
		return;
	}
	w->first[++w->depth] = true;
}

void json_close(struct json_writer *w, char bracket)
{
	if (!w->depth) {
		w->overflow = true;
		return;
	}
	w->depth--;
	put_raw(w, &bracket, 1);
}

void json_put_u64(struct json_writer *w, const char *key, uint64_t v)
{
	char num[24];

	put_key(w, key);
	put_raw(w, num, snprintf(num, sizeof(num), "%llu", (unsigned long long)v));
}

void json_put_i64(struct json_writer *w, const char *key, int64_t v)
{
	char num[24];

	put_key(w, key);
	put_raw(w, num, snprintf(num, sizeof(num), "%lld", (long long)v));
}

void json_put_micro(struct json_writer *w, const char *key, uint64_t micro)
{
	char num[32];

	put_key(w, key);
	put_raw(w, num,
		snprintf(num, sizeof(num), "%llu.%06llu", (unsigned long long)(micro / 1000000),
			 (unsigned long long)(micro % 1000000)));
}

void json_put_bool(struct json_writer *w, const char *key, bool v)
{
	put_key(w, key);
	put_raw(w, v ? "true" : "false", v ? 4 : 5);
}

void json_put_string(struct json_writer *w, const char *key, const char *s)
{
	put_key(w, key);
	put_quoted(w, s);
}

long json_end(struct json_writer *w)
{
	if (w->overflow || w->depth)
		return -1;
	return (long)w->len;
}
