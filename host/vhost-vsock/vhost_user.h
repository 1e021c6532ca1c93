/* SPDX-License-Identifier: MIT */
/*
 * One vhost-user message (QEMU docs/interop/vhost-user.rst, "Message
 * specification"): a 12-byte header, a payload of header.size bytes and the
 * fds that came with it (SCM_RIGHTS). Reading it from the socket
 * (vu_readable) and applying it to the device (vu_dispatch) are separate so
 * tests/fuzz/fuzz_vhost_user.c drives the same checks the daemon runs.
 */
#ifndef VV_VHOST_USER_H
#define VV_VHOST_USER_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/vhost_types.h>

#include "dev.h"

enum vu_request {
	VU_GET_FEATURES = 1,
	VU_SET_FEATURES = 2,
	VU_SET_OWNER = 3,
	VU_RESET_OWNER = 4,
	VU_SET_MEM_TABLE = 5,
	VU_SET_VRING_NUM = 8,
	VU_SET_VRING_ADDR = 9,
	VU_SET_VRING_BASE = 10,
	VU_GET_VRING_BASE = 11,
	VU_SET_VRING_KICK = 12,
	VU_SET_VRING_CALL = 13,
	VU_SET_VRING_ERR = 14,
	VU_GET_PROTOCOL_FEATURES = 15,
	VU_SET_PROTOCOL_FEATURES = 16,
	VU_GET_QUEUE_NUM = 17,
	VU_SET_VRING_ENABLE = 18,
	VU_GET_CONFIG = 24,
	VU_SET_CONFIG = 25,
};

#define VU_VERSION 1
#define VU_FLAG_REPLY (1u << 2)
#define VU_FLAG_NEED_REPLY (1u << 3)
#define VU_MAX_PAYLOAD 4096 /* more than any message we take: the stream is lost */
#define VU_MAX_FDS 8

struct vu_hdr {
	uint32_t request;
	uint32_t flags;
	uint32_t size;
} __attribute__((packed));

struct vu_region {
	uint64_t gpa;
	uint64_t size;
	uint64_t uaddr;
	uint64_t mmap_offset;
} __attribute__((packed));

struct vu_mem {
	uint32_t nregions;
	uint32_t padding;
	struct vu_region r[GUEST_MEM_MAX_REGIONS];
} __attribute__((packed));

struct vu_config {
	uint32_t offset;
	uint32_t size;
	uint32_t flags;
	uint8_t data[256];
} __attribute__((packed));

struct vu_msg {
	struct vu_hdr h;
	union {
		uint64_t u64;
		struct vhost_vring_state state;
		struct vhost_vring_addr addr;
		struct vu_mem mem;
		struct vu_config cfg;
		uint8_t raw[VU_MAX_PAYLOAD];
	} p;
	int fds[VU_MAX_FDS];
	unsigned nfds;
};

/*
 * Apply one message that was read whole (m->h.size <= VU_MAX_PAYLOAD,
 * m->h.size payload bytes, m->nfds fds) to the device and answer it on
 * d->vu_fd when it asks for an answer. Every fd in m is consumed (kept by
 * the device or closed). Returns 0, or -1 for a rejected message (counted
 * in stats.vu_bad_msgs); the front end stays connected either way.
 */
int vu_dispatch(struct vsock_dev *d, struct vu_msg *m);

/*
 * RINGSIDE_VU_RECORD=PREFIX in the back end's environment: each front-end
 * connection's messages go to PREFIX-N (N = 1, 2, ...) in the fuzz target's
 * input format: per message the 12-byte header, one byte with the number
 * of fds, then the payload.
 */
#define VU_RECORD_ENV "RINGSIDE_VU_RECORD"

#endif
