/* SPDX-License-Identifier: MIT */
/*
 * Run-time configuration: one table of keys, set from the kernel command
 * line at boot and with `set KEY=VALUE` on the console. Every switch a
 * benchmark compares lives here, so `config` shows a run's whole setup.
 */
#ifndef KERNEL_CONFIG_H
#define KERNEL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

enum config_id {
	CFG_LOGLEVEL,
	CFG_COUNT,
};

enum config_type {
	CONFIG_UINT, /* decimal or 0x hex, within [min, max] */
	CONFIG_BOOL, /* 0|1, also off|on, no|yes, false|true */
	CONFIG_ENUM, /* one of choices[]; the value is the index */
};

struct config_key {
	const char *name;
	const char *help;
	enum config_type type;
	uint64_t min, max;
	const char *const *choices; /* NULL-terminated, CONFIG_ENUM only */
	uint64_t def;
	/* Called after the value changed; may apply it to running devices. */
	void (*changed)(enum config_id id);
};

uint64_t config_get(enum config_id id);
const struct config_key *config_key(enum config_id id);
int config_lookup(const char *name); /* enum config_id, or -1 */

/*
 * Parse and set one key. On error returns a negative errno and writes a
 * one-line reason to @err (without "error: ").
 */
int config_set(const char *name, const char *value, char *err, size_t err_len);
void config_reset(void);

/* "name=value" for display. */
int config_format(enum config_id id, char *buf, size_t len);

/*
 * Apply every key=value word of a kernel command line that names a key.
 * Words that are not keys belong to someone else (GRUB's BOOT_IMAGE, a
 * test's marker) and are skipped; a bad value for a known key is reported
 * through @report and the default kept. Returns the number of bad values.
 */
int config_parse_cmdline(const char *cmdline, void (*report)(const char *msg));

#endif
