/* SPDX-License-Identifier: MIT */
/*
 * The host's side of a vsock connection in unit tests and fuzzers: one
 * packet, built as the device would hand it to the socket layer, from the
 * host (CID 2) to the guest (CID 3).
 */
#ifndef TESTS_UNIT_HOST_PEER_H
#define TESTS_UNIT_HOST_PEER_H

#include <stdint.h>

#define HOST_PEER_CID 2
#define HOST_PEER_GUEST_CID 3

struct host_pkt {
	uint32_t src_port, dst_port;
	uint16_t type; /* 0: VSOCK_TYPE_STREAM */
	uint16_t op;
	uint32_t flags, buf_alloc, fwd_cnt;
	const void *data;
	uint32_t len;
	uint32_t room; /* the buffer's payload room, at least len (0: len) */
};

/* Build @p in a packet buffer and deliver it through vsock_rx(). */
void host_pkt_deliver(const struct host_pkt *p);

struct vsock_sock;
/*
 * One packet from the host on @s's connection (its ports and type), with
 * 256 KiB of host buffer and nothing consumed, in a 4 KiB RX buffer.
 */
void host_pkt_on(struct vsock_sock *s, uint16_t op, uint32_t flags, const void *data, uint32_t len);

#endif
