// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernel/config.h"

/*
 * The linker collects every CONFIG_KEY's pointer between these two (GNU ld
 * names them after the section; weak: a unit test may have no keys).
 */
extern struct config_key *const __start_config_keys[] __attribute__((weak));
extern struct config_key *const __stop_config_keys[] __attribute__((weak));

struct config_key *config_next(struct config_key *prev)
{
	struct config_key *const *p = __start_config_keys;

	if (prev) {
		while (p < __stop_config_keys && *p != prev)
			p++;
		p++;
	}
	return p < __stop_config_keys ? *p : NULL;
}

struct config_key *config_lookup(const char *name)
{
	for (struct config_key *const *p = __start_config_keys; p < __stop_config_keys; p++)
		if (!strcmp((*p)->name, name))
			return *p;
	return NULL;
}

void config_on_change(struct config_key *key, struct config_hook *hook)
{
	struct config_hook **pp = &key->hooks;

	while (*pp) {
		if (*pp == hook)
			return; /* already there */
		pp = &(*pp)->next;
	}
	hook->next = NULL;
	*pp = hook;
}

void config_remove_hook(struct config_key *key, struct config_hook *hook)
{
	for (struct config_hook **pp = &key->hooks; *pp; pp = &(*pp)->next) {
		if (*pp == hook) {
			*pp = hook->next;
			return;
		}
	}
}

void config_reset(void)
{
	for (struct config_key *const *p = __start_config_keys; p < __stop_config_keys; p++)
		__atomic_store_n(&(*p)->value_set, false, __ATOMIC_RELEASE);
}

int config_parse_uint(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	}
	if (shift) {
		if (end[1] || *out > UINT64_MAX >> shift)
			return -EINVAL;
		*out <<= shift;
		return 0;
	}
	return *end ? -EINVAL : 0;
}

static int parse_bool(const char *s, uint64_t *out)
{
	static const char *const yes[] = { "1", "on", "yes", "true" };
	static const char *const no[] = { "0", "off", "no", "false" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_enum(const struct config_key *k, const char *s, uint64_t *out)
{
	for (uint64_t i = 0; k->choices[i]; i++) {
		if (!strcmp(s, k->choices[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Exactly four decimal parts 0..255, no leading signs or spaces. */
static int parse_ipv4(const char *s, uint64_t *out)
{
	uint32_t ip = 0;

	for (int part = 0; part < 4; part++) {
		unsigned int v = 0, digits = 0;

		while (*s >= '0' && *s <= '9') {
			v = v * 10 + (unsigned int)(*s++ - '0');
			if (++digits > 3 || v > 255)
				return -EINVAL;
		}
		if (!digits || *s != (part == 3 ? '\0' : '.'))
			return -EINVAL;
		if (part < 3)
			s++;
		ip = ip << 8 | v;
	}
	*out = ip;
	return 0;
}

static void describe_range(const struct config_key *k, char *buf, size_t len)
{
	size_t n = 0;

	switch (k->type) {
	case CONFIG_UINT:
		snprintf(buf, len, "a number from %llu to %llu", (unsigned long long)k->min,
			 (unsigned long long)k->max);
		break;
	case CONFIG_BOOL:
		snprintf(buf, len, "0 or 1");
		break;
	case CONFIG_IPV4:
		snprintf(buf, len, "an IPv4 address a.b.c.d");
		break;
	case CONFIG_ENUM:
		buf[0] = '\0';
		for (int i = 0; k->choices[i] && n < len; i++)
			n += snprintf(buf + n, len - n, "%s%s", i ? "|" : "", k->choices[i]);
		break;
	}
}

int config_check(const char *name, const char *value, uint64_t *out, char *err, size_t err_len)
{
	const struct config_key *k = config_lookup(name);
	char expect[96];
	uint64_t v = 0;
	int ret;

	if (!k) {
		snprintf(err, err_len, "unknown key '%s' (try 'config')", name);
		return -ENOENT;
	}
	switch (k->type) {
	case CONFIG_UINT:
		ret = config_parse_uint(value, &v);
		if (!ret && (v < k->min || v > k->max))
			ret = -ERANGE;
		break;
	case CONFIG_BOOL:
		ret = parse_bool(value, &v);
		break;
	case CONFIG_IPV4:
		ret = parse_ipv4(value, &v);
		break;
	case CONFIG_ENUM:
		ret = parse_enum(k, value, &v);
		break;
	default:
		ret = -EINVAL;
	}
	if (ret) {
		describe_range(k, expect, sizeof(expect));
		snprintf(err, err_len, "bad value '%s' for %s: expected %s", value, name, expect);
		return ret;
	}
	if (out)
		*out = v;
	return 0;
}

int config_set(const char *name, const char *value, char *err, size_t err_len)
{
	struct config_key *k;
	uint64_t v;
	int ret = config_check(name, value, &v, err, err_len);

	if (ret < 0)
		return ret;
	k = config_lookup(name);
	if (config_get(k) != v) {
		__atomic_store_n(&k->value, v, __ATOMIC_RELAXED);
		__atomic_store_n(&k->value_set, true, __ATOMIC_RELEASE);
		for (struct config_hook *h = k->hooks; h; h = h->next)
			h->fn(k);
	}
	return 0;
}

int config_format(const struct config_key *k, char *buf, size_t len)
{
	uint64_t v = config_get(k);

	if (k->type == CONFIG_ENUM)
		return snprintf(buf, len, "%s=%s", k->name, k->choices[v]);
	if (k->type == CONFIG_IPV4)
		return snprintf(buf, len, "%s=%u.%u.%u.%u", k->name, (unsigned int)(v >> 24) & 255,
				(unsigned int)(v >> 16) & 255, (unsigned int)(v >> 8) & 255,
				(unsigned int)v & 255);
	return snprintf(buf, len, "%s=%llu", k->name, (unsigned long long)v);
}

/*
 * One KEY=VALUE word of the command line: 0 once set, else non-zero with
 * the reason and what became of the word in @err. A misspelt key is named
 * as loudly as a bad value: either would leave a run measuring a default
 * it did not ask for.
 */
static int cmdline_word(const char *key, const char *value, char *err, size_t err_len)
{
	char why[CONFIG_ERR_MAX];

	if (!config_lookup(key)) {
		snprintf(err, err_len, "unknown key '%s' (ignored)", key);
		return -ENOENT;
	}
	if (!config_set(key, value, why, sizeof(why)))
		return 0;
	snprintf(err, err_len, "%s (default kept)", why);
	return -EINVAL;
}

int config_parse_cmdline(const char *cmdline, void (*report)(const char *msg))
{
	char word[256], err[CONFIG_ERR_MAX + 32]; /* a reason and what became of it */
	int bad = 0;
	const char *p = cmdline;

	while (*p) {
		size_t n = strcspn(p, " \t");
		char *eq;

		if (n && n < sizeof(word)) {
			memcpy(word, p, n);
			word[n] = '\0';
			eq = strchr(word, '=');
			if (eq) {
				*eq = '\0';
				if (cmdline_word(word, eq + 1, err, sizeof(err))) {
					bad++;
					if (report)
						report(err);
				}
			}
		}
		p += n;
		p += strspn(p, " \t");
	}
	return bad;
}
