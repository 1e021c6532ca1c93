// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernel/config.h"

static const char *const ring_choices[] = { "split", "packed", NULL };
static const char *const irq_choices[] = { "poll", "msix", NULL };
static const char *const credit_choices[] = { "lazy", "eager", NULL };
static const char *const idle_choices[] = { "poll", "halt", NULL };

static const struct config_key keys[CFG_COUNT] = {
	[CFG_LOGLEVEL] = {
		.name = "loglevel",
		.help = "kernel messages up to this level are shown (0 emerg .. 7 debug)",
		.type = CONFIG_UINT,
		.min = 0,
		.max = 7,
		.def = 4,
	},
	[CFG_RING] = {
		.name = "ring",
		.help = "virtqueue layout: packed when the device offers it, or always split",
		.type = CONFIG_ENUM,
		.choices = ring_choices,
		.def = 1,
	},
	[CFG_EVENT_IDX] = {
		.name = "event_idx",
		.help = "negotiate VIRTIO_F_EVENT_IDX (notification suppression by index)",
		.type = CONFIG_BOOL,
		.def = 1,
	},
	[CFG_INDIRECT] = {
		.name = "indirect",
		.help = "negotiate VIRTIO_F_INDIRECT_DESC (chains in indirect tables)",
		.type = CONFIG_BOOL,
		.def = 1,
	},
	[CFG_IRQ] = {
		.name = "irq",
		.help = "virtqueue completions: poll (no interrupts) or msix",
		.type = CONFIG_ENUM,
		.choices = irq_choices,
		.def = 0,
	},
	[CFG_IDLE] = {
		.name = "idle",
		.help = "nothing to do: poll on, or halt until an interrupt (MSI-X or a 1 ms tick)",
		.type = CONFIG_ENUM,
		.choices = idle_choices,
		.def = 0,
	},
	[CFG_TXPOLL] = {
		.name = "txpoll",
		.help = "reclaim sent TX buffers only in the poll loop (1) or also on send (0)",
		.type = CONFIG_BOOL,
		.def = 1,
	},
	[CFG_FASTPATH] = {
		.name = "fastpath",
		.help = "vsock: add a packet to the TX virtqueue directly when none is queued",
		.type = CONFIG_BOOL,
		.def = 1,
	},
	[CFG_CREDIT] = {
		.name = "credit",
		.help = "vsock credit updates: lazy (when free space < 64 KiB) or eager (every read)",
		.type = CONFIG_ENUM,
		.choices = credit_choices,
		.def = 0,
	},
	[CFG_RXBUF] = {
		.name = "rxbuf",
		.help = "vsock RX buffer bytes, 44-byte header included",
		.type = CONFIG_UINT,
		.min = 256,
		.max = 65536 + 44,
		.def = 4096,
	},
	[CFG_SMALLCOPY] = {
		.name = "smallcopy",
		.help = "vsock: copy RX payloads <= 128 B into the previous queued buffer",
		.type = CONFIG_BOOL,
		.def = 1,
	},
	[CFG_VSOCK_BUF] = {
		.name = "vsock_buf",
		.help = "vsock receive space per socket (buf_alloc), bytes",
		.type = CONFIG_UINT,
		.min = 4096,
		.max = 16 << 20,
		.def = 256 << 10,
	},
	[CFG_ECHO_PORT] = {
		.name = "echo_port",
		.help = "vsock echo service port (0: off)",
		.type = CONFIG_UINT,
		.max = 0xffffffff,
		.def = 1234,
	},
	[CFG_SINK_PORT] = {
		.name = "sink_port",
		.help = "vsock sink service port (0: off)",
		.type = CONFIG_UINT,
		.max = 0xffffffff,
		.def = 1235,
	},
	[CFG_SOURCE_PORT] = {
		.name = "source_port",
		.help = "vsock source service port (0: off)",
		.type = CONFIG_UINT,
		.max = 0xffffffff,
		.def = 1236,
	},
	[CFG_IP] = {
		.name = "ip",
		.help = "net: our IPv4 address",
		.type = CONFIG_IPV4,
		.max = 0xffffffff,
		.def = 0x0a00020f, /* 10.0.2.15 */
	},
	[CFG_PREFIX] = {
		.name = "prefix",
		.help = "net: prefix length of ip (24 is netmask 255.255.255.0)",
		.type = CONFIG_UINT,
		.min = 1,
		.max = 32,
		.def = 24,
	},
	[CFG_GW] = {
		.name = "gw",
		.help = "net: default gateway (0.0.0.0: none, only the local network)",
		.type = CONFIG_IPV4,
		.max = 0xffffffff,
		.def = 0x0a000202, /* 10.0.2.2 */
	},
	[CFG_UDP_ECHO_PORT] = {
		.name = "udp_echo_port",
		.help = "net: UDP echo service port (0: off)",
		.type = CONFIG_UINT,
		.max = 65535,
		.def = 7,
	},
	[CFG_NET_RXBUF] = {
		.name = "net_rxbuf",
		.help = "virtio-net RX buffer bytes, 12-byte header included (small: frames span buffers)",
		.type = CONFIG_UINT,
		.min = 64,
		.max = 4096,
		.def = 2048,
	},
};

static void (*hooks[CFG_COUNT])(enum config_id id);

void config_on_change(enum config_id id, void (*fn)(enum config_id id))
{
	if ((unsigned int)id < CFG_COUNT)
		hooks[id] = fn;
}

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
	return id;
}

int config_set(const char *name, const char *value, char *err, size_t err_len)
{
	uint64_t v;
	int id = config_check(name, value, &v, err, err_len);

	if (id < 0)
		return id;
	if (!values_set)
		init_defaults();
	if (values[id] != v) {
		values[id] = v;
		if (hooks[id])
			hooks[id](id);
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
	if (k->type == CONFIG_IPV4)
		return snprintf(buf, len, "%s=%u.%u.%u.%u", k->name, (unsigned int)(v >> 24) & 255,
				(unsigned int)(v >> 16) & 255, (unsigned int)(v >> 8) & 255,
				(unsigned int)v & 255);
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
