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
	CFG_RING, /* split | packed: negotiate VIRTIO_F_RING_PACKED when offered */
	CFG_EVENT_IDX, /* negotiate VIRTIO_F_EVENT_IDX */
	CFG_INDIRECT, /* negotiate VIRTIO_F_INDIRECT_DESC */
	CFG_IRQ, /* poll | msix: completions by polling or by MSI-X */
	CFG_IDLE, /* poll | halt: what the poll loop does when there is nothing to do */
	CFG_TXPOLL, /* seed 001: reclaim TX buffers in the poll loop, not on send */
	CFG_FASTPATH, /* seed 000: straight into the TX virtqueue when nothing is queued */
	CFG_CREDIT, /* seed 004: lazy | eager credit updates */
	CFG_RXBUF, /* seed 004: vsock RX buffer size, header included */
	CFG_SMALLCOPY, /* seed 004: merge small RX payloads into the previous buffer */
	CFG_VSOCK_BUF, /* buf_alloc: receive space each vsock socket advertises */
	CFG_ECHO_PORT,
	CFG_SINK_PORT,
	CFG_SOURCE_PORT,
	CFG_IP, /* net/: our IPv4 address (static) */
	CFG_PREFIX, /* net/: network prefix length of ip */
	CFG_GW, /* net/: default gateway, 0.0.0.0 for none */
	CFG_UDP_ECHO_PORT, /* net/: UDP echo service port, 0 turns it off */
	CFG_NET_RXBUF, /* virtio-net RX buffer bytes (mergeable buffers when small) */
	CFG_COUNT,
};

enum config_type {
	CONFIG_UINT, /* decimal or 0x hex, within [min, max] */
	CONFIG_BOOL, /* 0|1, also off|on, no|yes, false|true */
	CONFIG_ENUM, /* one of choices[]; the value is the index */
	CONFIG_IPV4, /* dotted quad a.b.c.d; the value is the address in host order */
};

struct config_key {
	const char *name;
	const char *help;
	enum config_type type;
	uint64_t min, max;
	const char *const *choices; /* NULL-terminated, CONFIG_ENUM only */
	uint64_t def;
};

uint64_t config_get(enum config_id id);

/*
 * Call @fn after @id changed value (at run time, or on the command line if
 * registered before it is parsed). One hook per key; the subsystem that
 * owns a key applies it, so this table needs no link to the subsystems.
 */
void config_on_change(enum config_id id, void (*fn)(enum config_id id));
const struct config_key *config_key(enum config_id id);
int config_lookup(const char *name); /* enum config_id, or -1 */

/*
 * Parse and set one key. On error returns a negative errno and writes a
 * one-line reason to @err (without "error: ").
 */
int config_set(const char *name, const char *value, char *err, size_t err_len);
/* Parse only: the key's id and the value in *@out, or a negative errno. */
int config_check(const char *name, const char *value, uint64_t *out, char *err, size_t err_len);
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
