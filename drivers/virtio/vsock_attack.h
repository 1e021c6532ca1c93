/* SPDX-License-Identifier: MIT */
/*
 * A hostile driver on demand (vsock_attack.c): malformed vsock headers
 * and forged ring entries written into the live TX queue, to test what a
 * device makes of them. Off unless the console or the boot command line
 * asks; never reachable from the network.
 */
#ifndef DRIVERS_VIRTIO_VSOCK_ATTACK_H
#define DRIVERS_VIRTIO_VSOCK_ATTACK_H

#include "drivers/virtio/virtqueue.h"

/* virtio_vsock.c: the device's TX queue, NULL without a device. */
struct virtq *virtio_vsock_txq(void);
/* The context that reclaims what was sent on it. */
struct poll_ctx *virtio_vsock_txq_ctx(void);
/* virtio_vsock.c: @pkt on RX, device-readable (-ENODEV without a device). */
struct vsock_pkt;
int virtio_vsock_post_rx_readonly(struct vsock_pkt *pkt, uint32_t len);

/* The `attack` command, its boot keys and its poll context. */
void vsock_attack_init(void);

#endif
