/* SPDX-License-Identifier: MIT */
/*
 * The hostile driver's virtio-net modes (net_attack.c): frames and
 * virtio-net headers that break the driver requirements of virtio 1.2
 * §5.1.6.2, written by the virtio-net driver into its live TX queue. The
 * `attack` command (vsock_attack.c) runs them beside the vsock modes; off
 * unless the console or the boot command line asks.
 */
#ifndef DRIVERS_VIRTIO_NET_ATTACK_H
#define DRIVERS_VIRTIO_NET_ATTACK_H

#include <stdint.h>

/* Which lie a mode tells (the argument of net_attack_send). */
enum net_lie {
	NET_SHORT,
	NET_HDR_ONLY,
	NET_LONG,
	NET_HDR_FLAGS,
	NET_CSUM_START,
	NET_GSO_TYPE,
	NET_GSO,
	NET_GSO_LONG,
};

/* name, help, lie: every virtio-net mode, for the `attack` table */
#define NET_ATTACK_MODES(X)                                                                   \
	X("net-short", "6 bytes: shorter than the virtio-net header", NET_SHORT)              \
	X("net-hdr-only", "a virtio-net header and no frame", NET_HDR_ONLY)                   \
	X("net-long", "a frame of 64 KiB + 1 KiB in one buffer", NET_LONG)                    \
	X("net-hdr-flags", "flags with undefined or device-only bits", NET_HDR_FLAGS)         \
	X("net-csum-start", "NEEDS_CSUM, csum_start/offset beyond the frame", NET_CSUM_START) \
	X("net-gso-type", "undefined gso_type values", NET_GSO_TYPE)                          \
	X("net-gso", "GSO TCPv4 never negotiated, hdr_len and gso_size lying", NET_GSO)       \
	X("net-gso-long", "net-gso with NEEDS_CSUM on a 64 KiB + 1 KiB frame", NET_GSO_LONG)

/* One frame of mode @lie (the @nth of its run) into the TX queue: 0 or -errno. */
int net_attack_send(enum net_lie lie, uint32_t nth);

#endif
