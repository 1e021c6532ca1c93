/* SPDX-License-Identifier: MIT */
/*
 * A hostile driver on demand (vsock_attack.c): malformed vsock headers
 * and forged ring entries written into the live TX queue, to test what a
 * device makes of them. Off unless the console or the boot command line
 * asks; never reachable from the network.
 */
#ifndef DRIVERS_VIRTIO_VSOCK_ATTACK_H
#define DRIVERS_VIRTIO_VSOCK_ATTACK_H

/* The `attack` command, its boot keys and its poll context. */
void vsock_attack_init(void);

#endif
