/* SPDX-License-Identifier: MIT */
/*
 * A packet generator in the shape of Linux's
 * samples/pktgen/pktgen_sample03_burst_single_flow.sh: one UDP flow, the
 * same frame sent in bursts of `burst` with one notification per burst.
 */
#ifndef APP_PKTGEN_H
#define APP_PKTGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "net/net.h"

#define PKTGEN_MAGIC 0xbe9be955u /* Linux pktgen's header magic */
#define PKTGEN_PORT 9 /* discard, as pktgen's UDP_DST_MIN */
#define PKTGEN_MAX_BURST 1024

struct pktgen_params {
	uint64_t count;
	uint32_t size; /* frame bytes without FCS, ETH_ZLEN..ETH_FRAME_LEN */
	uint32_t burst;
	uint32_t dst;
	uint8_t dst_mac[ETH_ALEN];
	bool have_mac; /* else ARP resolves dst (or its gateway) */
	uint16_t port;
	uint32_t queues; /* transmit queues, each its own flow; 0 counts as 1 */
};

struct pktgen_result {
	uint64_t sent, bytes, kicks, ring_full, ns;
	uint64_t sent_queue[NET_MAX_QUEUES];
};

/* The one frame of the flow into @frame (ETH_FRAME_LEN bytes); its length. */
uint32_t pktgen_build(uint8_t *frame, const struct pktgen_params *p, const uint8_t *src_mac);
/* Send p->count frames; 0, or a negative errno (no device, no progress). */
int pktgen_run(const struct pktgen_params *p, struct pktgen_result *r);
void pktgen_init(void);

#endif
