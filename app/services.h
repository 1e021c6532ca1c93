/* SPDX-License-Identifier: MIT */
/*
 * The benchmark services the appliance runs from boot: echo (ping-pong
 * peer), sink (host-to-guest throughput) and source (guest-to-host
 * throughput, a known pattern the client checks).
 */
#ifndef APP_SERVICES_H
#define APP_SERVICES_H

#include <stddef.h>
#include <stdint.h>

/* The source's byte at stream offset i; the host client checks it. */
static inline uint8_t vsock_pattern_byte(uint64_t i)
{
	return (uint8_t)(i % 251);
}

/* A pattern buffer: p[j] == vsock_pattern_byte(j) for j < 65536 + 251. */
const uint8_t *vsock_pattern(void);
#define VSOCK_PATTERN_LEN (65536 + 251)

void services_init(void);

#endif
