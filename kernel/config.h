/* SPDX-License-Identifier: MIT */
/*
 * Run-time configuration: keys that each subsystem declares beside its
 * code, set from the kernel command line at boot and with `set KEY=VALUE`
 * on the console. Every switch a benchmark compares is a key, so `config`
 * shows a run's whole setup.
 */
#ifndef KERNEL_CONFIG_H
#define KERNEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum config_type {
	CONFIG_UINT, /* decimal or 0x hex, with k, m or g (powers of 1024), within [min, max] */
	CONFIG_BOOL, /* 0|1, also off|on, no|yes, false|true */
	CONFIG_ENUM, /* one of choices[]; the value is the index */
	CONFIG_IPV4, /* dotted quad a.b.c.d; the value is the address in host order */
};

struct config_key;

/* One change hook; the owner provides the storage (no allocation). */
struct config_hook {
	void (*fn)(struct config_key *key);
	struct config_hook *next;
};

struct config_key {
	const char *name;
	const char *help;
	enum config_type type;
	uint64_t min, max;
	const char *const *choices; /* NULL-terminated, CONFIG_ENUM only */
	uint64_t def;
	/*
	 * Run-time state, kept by config.c. Shared: written on CPU 0 (the
	 * command line, the shell), read by every CPU (config_get): the
	 * value is stored before value_set is released, and read after
	 * value_set is acquired, each in one access.
	 */
	uint64_t value;
	bool value_set; /* false: value is def */
	struct config_hook *hooks;
};

/*
 * Declare a key beside the code that owns it, like Linux's module_param:
 * a pointer to it goes into the config_keys section, so every key exists
 * before the command line is parsed, with no registration call and no
 * link from config.c to the subsystems. The section holds pointers only,
 * so sanitizers' padding around the keys cannot break the walk.
 *
 *	CONFIG_KEY(cfg_loglevel) = {
 *		.name = "loglevel",
 *		...
 *	};
 */
#define CONFIG_KEY(var)                                                           \
	struct config_key var;                                                    \
	static struct config_key *const config_key_ptr_##var                      \
		__attribute__((used, section("config_keys"), aligned(8))) = &var; \
	struct config_key var

/* The key's value; inline because data paths read their switches per packet. */
static inline uint64_t config_get(const struct config_key *key)
{
	if (!__atomic_load_n(&key->value_set, __ATOMIC_ACQUIRE))
		return key->def;
	return __atomic_load_n(&key->value, __ATOMIC_RELAXED);
}

/*
 * Call @hook->fn after @key changed value (at run time, or on the command
 * line if added before it is parsed). Any number of hooks per key, called
 * in the order they were added; @hook must stay alive (static).
 */
void config_on_change(struct config_key *key, struct config_hook *hook);
void config_remove_hook(struct config_key *key, struct config_hook *hook);

/* Every key in turn: config_next(NULL) is the first; NULL after the last. */
struct config_key *config_next(struct config_key *prev);
struct config_key *config_lookup(const char *name); /* NULL if none */

/*
 * Parse and set one key. On error returns a negative errno and writes a
 * one-line reason to @err (without "error: ").
 */
/*
 * An @err this large holds every reason whole: one quotes a name or value
 * as long as a console line or a command-line word (255 characters), plus
 * the key's name and its range (at most 96).
 */
#define CONFIG_ERR_MAX 512
int config_set(const char *name, const char *value, char *err, size_t err_len);
/*
 * A number as keys and console commands take it: decimal or 0x hex,
 * optionally with a k, m or g suffix (powers of 1024: 4k is 4096). 0, or
 * -EINVAL for anything else and for a value that does not fit 64 bits.
 */
int config_parse_uint(const char *s, uint64_t *out);
/* Parse only: 0 and the value in *@out (if not NULL), or a negative errno. */
int config_check(const char *name, const char *value, uint64_t *out, char *err, size_t err_len);
/* Every key back to its default (unit tests; hooks are not called). */
void config_reset(void);

/* "name=value" for display. */
int config_format(const struct config_key *key, char *buf, size_t len);

/*
 * Apply every KEY=VALUE word of a kernel command line. A bad value for a
 * key ("bad value ... (default kept)") and a key that does not exist
 * ("unknown key 'rign' (ignored)") are each reported through @report;
 * words without '=' are someone else's and skipped. Returns the number of
 * words reported.
 */
int config_parse_cmdline(const char *cmdline, void (*report)(const char *msg));

#endif
