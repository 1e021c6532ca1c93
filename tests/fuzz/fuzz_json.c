// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the iperf3 server's JSON reader (app/json.c) on any
 * bytes a client could send. An accepted document must keep every token
 * inside the text and its subtree links moving forward; every lookup the
 * server makes must stay in bounds; a document the writer produces from
 * the numbers found must parse again.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/json.h"

static struct json_doc doc;

static void check_tokens(void)
{
	assert(doc.n_tokens >= 1 && doc.n_tokens <= JSON_MAX_TOKENS);
	for (unsigned int i = 0; i < doc.n_tokens; i++) {
		const struct json_token *t = &doc.tok[i];

		assert(t->start <= doc.len && t->len <= doc.len - t->start);
		assert(t->next > i && t->next <= doc.n_tokens);
		assert(t->type <= JSON_OBJECT);
		if (t->type != JSON_ARRAY && t->type != JSON_OBJECT)
			assert(t->next == i + 1 && t->count == 0);
	}
	assert(doc.tok[0].next == doc.n_tokens);
}

/* The server's own walk: parameters, then results' streams by index. */
static void walk(char *out, size_t cap)
{
	static const char *const keys[] = { "tcp",	  "reverse", "parallel", "len",	 "num",
					    "blockcount", "streams", "id",	 "bytes" };
	struct json_writer w;
	int streams = json_find(&doc, 0, "streams");
	uint64_t v;
	bool b;

	json_writer_init(&w, out, cap);
	json_open(&w, NULL, '[');
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		int t = json_find(&doc, 0, keys[k]);

		if (json_get_u64(&doc, t, &v))
			json_put_u64(&w, NULL, v);
		if (json_get_bool(&doc, t, &b))
			json_put_bool(&w, NULL, b);
	}
	for (unsigned int i = 0; streams >= 0 && i <= doc.tok[streams].count; i++) {
		int s = json_index(&doc, streams, i);

		if (s < 0) {
			/* only an array is indexed; its walk ends at count */
			assert(doc.tok[streams].type != JSON_ARRAY || i == doc.tok[streams].count);
			break;
		}
		if (json_get_u64(&doc, json_find(&doc, s, "bytes"), &v))
			json_put_u64(&w, NULL, v);
	}
	json_close(&w, ']');
	if (json_end(&w) >= 0)
		assert(json_parse(&doc, out, w.len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly @size bytes, so ASan sees any read past the end */
	char *text = malloc(size ? size : 1);
	static char out[4096];

	memcpy(text, data, size);
	if (json_parse(&doc, text, size) == 0) {
		check_tokens();
		walk(out, sizeof(out));
	}
	free(text);
	return 0;
}
