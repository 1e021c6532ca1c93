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

#include "kernel/percpu.h"
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
	/* each CPU that sent: frames, and from the start to its last frame queued */
	unsigned int cpus_taking_part;
	uint64_t cpu_sent[PERCPU_MAX_CPUS], cpu_ns[PERCPU_MAX_CPUS];
};

/* The one frame of the flow into @frame (ETH_FRAME_LEN bytes); its length. */
uint32_t pktgen_build(uint8_t *frame, const struct pktgen_params *p, const uint8_t *src_mac);
/*
 * Send p->count frames, each queue's share from the CPU that owns it; 0,
 * or a negative errno (no device, no progress; -EBUSY: a CPU has not
 * stopped since an earlier run gave up on it).
 */
int pktgen_run(const struct pktgen_params *p, struct pktgen_result *r);
/* That CPU (0: none). */
int pktgen_busy_cpu(void);
void pktgen_init(void);

#endif
