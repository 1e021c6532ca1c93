/* SPDX-License-Identifier: MIT */
/*
 * A small JSON (RFC 8259) writer, in the kernel layer so that every layer
 * can describe itself in JSON: the iperf3 control protocol (app/) and
 * `stats json`, whose sections come from kernel/, drivers/, net/ and
 * app/. The reader is app/json.h's.
 */
#ifndef KERNEL_JSON_WRITER_H
#define KERNEL_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nesting limit of the writer here and of app/json.h's reader. */
#define JSON_MAX_DEPTH 16

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
