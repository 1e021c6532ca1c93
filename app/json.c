// SPDX-License-Identifier: MIT
/*
 * JSON reader (app/json.h; the writer is kernel/json_writer.c): a
 * recursive descent over RFC 8259's grammar, with the depth, token count and text length
 * bounded so a peer's message costs at most a fixed amount of work.
 */
#include <errno.h>
#include <string.h>

#include "app/json.h"

struct json_parser {
	struct json_doc *doc;
	size_t pos;
	int err; /* first error; parsing stops there */
};

static int parse_value(struct json_parser *p, unsigned int depth);

static bool at_end(const struct json_parser *p)
{
	return p->pos >= p->doc->len;
}

static char peek(const struct json_parser *p)
{
	return at_end(p) ? '\0' : p->doc->text[p->pos];
}

static void skip_space(struct json_parser *p)
{
	while (!at_end(p)) {
		char c = peek(p);

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return;
		p->pos++;
	}
}

static int fail(struct json_parser *p, int err)
{
	if (!p->err)
		p->err = err;
	return -1;
}

static int new_token(struct json_parser *p, enum json_type type)
{
	struct json_doc *d = p->doc;
	struct json_token *t;

	if (d->n_tokens == JSON_MAX_TOKENS)
		return fail(p, -E2BIG);
	t = &d->tok[d->n_tokens];
	memset(t, 0, sizeof(*t));
	t->type = type;
	t->start = p->pos;
	return d->n_tokens++;
}

static void end_token(struct json_parser *p, int i, size_t start)
{
	p->doc->tok[i].start = start;
	p->doc->tok[i].len = p->pos - start;
	p->doc->tok[i].next = p->doc->n_tokens;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int skip_digits(struct json_parser *p)
{
	size_t start = p->pos;

	while (is_digit(peek(p)))
		p->pos++;
	return p->pos > start ? 0 : fail(p, -EINVAL);
}

/* -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int parse_number(struct json_parser *p)
{
	size_t start = p->pos;
	int i = new_token(p, JSON_NUMBER);

	if (i < 0)
		return -1;
	if (peek(p) == '-')
		p->pos++;
	if (peek(p) == '0')
		p->pos++;
	else if (skip_digits(p))
		return -1;
	if (peek(p) == '.') {
		p->pos++;
		if (skip_digits(p))
			return -1;
	}
	if (peek(p) == 'e' || peek(p) == 'E') {
		p->pos++;
		if (peek(p) == '+' || peek(p) == '-')
			p->pos++;
		if (skip_digits(p))
			return -1;
	}
	end_token(p, i, start);
	return 0;
}

static int skip_escape(struct json_parser *p)
{
	char c = peek(p);

	p->pos++;
	if (strchr("\"\\/bfnrt", c) && c)
		return 0;
	if (c != 'u')
		return fail(p, -EINVAL);
	for (int k = 0; k < 4; k++, p->pos++) {
		if (!is_hex(peek(p)))
			return fail(p, -EINVAL);
	}
	return 0;
}

/* Bytes 0x80 and up pass as they are: UTF-8 is not checked, only carried. */
static int parse_string(struct json_parser *p)
{
	int i = new_token(p, JSON_STRING);
	size_t start;

	if (i < 0)
		return -1;
	start = ++p->pos; /* the opening quote */
	for (;;) {
		unsigned char c = peek(p);

		if (at_end(p) || c < 0x20)
			return fail(p, -EINVAL);
		if (c == '"')
			break;
		p->pos++;
		if (c == '\\' && skip_escape(p))
			return -1;
	}
	end_token(p, i, start);
	p->pos++; /* the closing quote */
	return 0;
}

static int parse_word(struct json_parser *p, const char *word, enum json_type type)
{
	size_t n = strlen(word);
	size_t start = p->pos;
	int i;

	if (p->doc->len - p->pos < n || memcmp(p->doc->text + p->pos, word, n))
		return fail(p, -EINVAL);
	if ((i = new_token(p, type)) < 0)
		return -1;
	p->pos += n;
	end_token(p, i, start);
	return 0;
}

static int expect(struct json_parser *p, char c)
{
	skip_space(p);
	if (peek(p) != c || at_end(p))
		return fail(p, -EINVAL);
	p->pos++;
	return 0;
}

/* Arrays and objects: members separated by commas, @close ends them. */
static int parse_container(struct json_parser *p, unsigned int depth, bool object)
{
	char close = object ? '}' : ']';
	size_t start = p->pos;
	int i = new_token(p, object ? JSON_OBJECT : JSON_ARRAY);
	unsigned int count = 0;

	if (i < 0)
		return -1;
	if (depth >= JSON_MAX_DEPTH)
		return fail(p, -E2BIG);
	p->pos++;
	skip_space(p);
	if (peek(p) == close && !at_end(p)) {
		p->pos++;
		goto out;
	}
	for (;;) {
		skip_space(p);
		if (object && (peek(p) != '"' || parse_string(p) || expect(p, ':')))
			return fail(p, -EINVAL);
		if (parse_value(p, depth + 1))
			return -1;
		if (count++ == UINT16_MAX)
			return fail(p, -E2BIG);
		skip_space(p);
		if (peek(p) == ',' && !at_end(p)) {
			p->pos++;
			continue;
		}
		if (expect(p, close))
			return -1;
		break;
	}
out:
	end_token(p, i, start);
	p->doc->tok[i].count = count;
	return 0;
}

static int parse_value(struct json_parser *p, unsigned int depth)
{
	skip_space(p);
	if (at_end(p))
		return fail(p, -EINVAL);
	switch (peek(p)) {
	case '{':
		return parse_container(p, depth, true);
	case '[':
		return parse_container(p, depth, false);
	case '"':
		return parse_string(p);
	case 't':
		return parse_word(p, "true", JSON_BOOL);
	case 'f':
		return parse_word(p, "false", JSON_BOOL);
	case 'n':
		return parse_word(p, "null", JSON_NULL);
	default:
		if (peek(p) == '-' || is_digit(peek(p)))
			return parse_number(p);
		return fail(p, -EINVAL);
	}
}

int json_parse(struct json_doc *doc, const char *text, size_t len)
{
	struct json_parser p = { .doc = doc };

	doc->text = text;
	doc->len = len;
	doc->n_tokens = 0;
	if (len > JSON_MAX_TEXT)
		return -E2BIG;
	if (parse_value(&p, 0))
		return p.err ? p.err : -EINVAL;
	skip_space(&p);
	if (!at_end(&p)) {
		doc->n_tokens = 0;
		return -EINVAL;
	}
	return 0;
}

static bool valid(const struct json_doc *doc, int tok)
{
	return tok >= 0 && (unsigned int)tok < doc->n_tokens;
}

int json_find(const struct json_doc *doc, int obj, const char *key)
{
	int t;

	if (!valid(doc, obj) || doc->tok[obj].type != JSON_OBJECT)
		return -1;
	t = obj + 1;
	for (unsigned int m = 0; m < doc->tok[obj].count; m++) {
		int value = t + 1; /* a key is a string: one token */

		if (json_str_equal(doc, t, key))
			return value;
		t = doc->tok[value].next;
	}
	return -1;
}

int json_index(const struct json_doc *doc, int arr, unsigned int i)
{
	int t;

	if (!valid(doc, arr) || doc->tok[arr].type != JSON_ARRAY || i >= doc->tok[arr].count)
		return -1;
	t = arr + 1;
	while (i--)
		t = doc->tok[t].next;
	return t;
}

bool json_get_u64(const struct json_doc *doc, int tok, uint64_t *v)
{
	const struct json_token *t;
	uint64_t x = 0;

	if (!valid(doc, tok) || doc->tok[tok].type != JSON_NUMBER)
		return false;
	t = &doc->tok[tok];
	for (uint32_t k = 0; k < t->len; k++) {
		char c = doc->text[t->start + k];

		if (!is_digit(c) || x > (UINT64_MAX - (c - '0')) / 10)
			return false;
		x = x * 10 + (c - '0');
	}
	*v = x;
	return true;
}

bool json_get_bool(const struct json_doc *doc, int tok, bool *v)
{
	if (!valid(doc, tok) || doc->tok[tok].type != JSON_BOOL)
		return false;
	*v = doc->text[doc->tok[tok].start] == 't';
	return true;
}

bool json_str_equal(const struct json_doc *doc, int tok, const char *s)
{
	const struct json_token *t;

	if (!valid(doc, tok) || doc->tok[tok].type != JSON_STRING)
		return false;
	t = &doc->tok[tok];
	return strlen(s) == t->len && !memcmp(doc->text + t->start, s, t->len);
}
