// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernel/config.h"

static const struct config_key keys[CFG_COUNT] = {
	[CFG_LOGLEVEL] = {
		.name = "loglevel",
		.help = "kernel messages up to this level are shown (0 emerg .. 7 debug)",
		.type = CONFIG_UINT,
		.min = 0,
		.max = 7,
		.def = 4,
	},
};

static uint64_t values[CFG_COUNT];
static bool values_set;

static void init_defaults(void)
{
	for (int i = 0; i < CFG_COUNT; i++)
		values[i] = keys[i].def;
	values_set = true;
}

void config_reset(void)
{
	init_defaults();
}

uint64_t config_get(enum config_id id)
{
	if (!values_set)
		init_defaults();
	return values[id];
}

const struct config_key *config_key(enum config_id id)
{
	return (unsigned int)id < CFG_COUNT ? &keys[id] : NULL;
}

int config_lookup(const char *name)
{
	for (int i = 0; i < CFG_COUNT; i++)
		if (!strcmp(keys[i].name, name))
			return i;
	return -1;
}

static int parse_uint(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	return 0;
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
	case CONFIG_ENUM:
		buf[0] = '\0';
		for (int i = 0; k->choices[i] && n < len; i++)
			n += snprintf(buf + n, len - n, "%s%s", i ? "|" : "", k->choices[i]);
		break;
	}
}

int config_set(const char *name, const char *value, char *err, size_t err_len)
{
	const struct config_key *k;
	char expect[96];
	uint64_t v = 0;
	int id, ret;

	id = config_lookup(name);
	if (id < 0) {
		snprintf(err, err_len, "unknown key '%s' (try 'config')", name);
		return -ENOENT;
	}
	k = &keys[id];
	switch (k->type) {
	case CONFIG_UINT:
		ret = parse_uint(value, &v);
		if (!ret && (v < k->min || v > k->max))
			ret = -ERANGE;
		break;
	case CONFIG_BOOL:
		ret = parse_bool(value, &v);
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
	if (!values_set)
		init_defaults();
	if (values[id] != v) {
		values[id] = v;
		if (k->changed)
			k->changed(id);
	}
	return 0;
}

int config_format(enum config_id id, char *buf, size_t len)
{
	const struct config_key *k = config_key(id);
	uint64_t v;

	if (!k)
		return -EINVAL;
	v = config_get(id);
	if (k->type == CONFIG_ENUM)
		return snprintf(buf, len, "%s=%s", k->name, k->choices[v]);
	return snprintf(buf, len, "%s=%llu", k->name, (unsigned long long)v);
}

int config_parse_cmdline(const char *cmdline, void (*report)(const char *msg))
{
	char word[256], err[160];
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
				if (config_lookup(word) >= 0 &&
				    config_set(word, eq + 1, err, sizeof(err))) {
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
