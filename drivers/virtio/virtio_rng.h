/* SPDX-License-Identifier: MIT */
/*
 * virtio-rng for its users: one request in flight at a time. The driver
 * never waits; the caller waits in the poll loop (kernel/poll.h) and
 * collects, so nothing else freezes meanwhile.
 */
#ifndef DRIVERS_VIRTIO_VIRTIO_RNG_H
#define DRIVERS_VIRTIO_VIRTIO_RNG_H

#include <stdbool.h>
#include <stdint.h>

#define VIRTIO_RNG_MAX_READ 4096

bool virtio_rng_present(void);
/* Ask the device for @len (1..VIRTIO_RNG_MAX_READ) bytes: 0 or -errno. */
int virtio_rng_request(uint32_t len);
/*
 * 1 when the request completed: *@data holds *@got bytes until the next
 * request; 0 while the device works; -EIO for a completion that is not
 * ours.
 */
int virtio_rng_collect(const uint8_t **data, uint32_t *got);
/*
 * The caller stopped waiting: the answer, when the device sends it, is
 * dropped (the buffer is the device's until then, so the next request
 * still waits for it: -EBUSY).
 */
void virtio_rng_abandon(void);

#endif
