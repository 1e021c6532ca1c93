/* SPDX-License-Identifier: MIT */
/*
 * The cost counters' shared-memory block: one file, mapped MAP_SHARED by the
 * QEMU plugin (the writer) and read live by any host process
 * (host/ringside/cost.py mirrors this layout; change both together and bump
 * COST_SHM_VERSION).
 *
 *   struct cost_shm_header
 *   struct cost_vcpu       vcpu[n_vcpus]          at vcpu_offset
 *   struct cost_prof_entry prof[prof_slots]       at prof_offset (prof=on)
 *
 * All fields are little-endian and naturally aligned; counters are u64 that
 * only grow, so a reader sees each one whole (aligned 8-byte loads) but two
 * counters are not a consistent snapshot. Totals are sums over vcpu[].
 */
#ifndef HOST_COST_COST_SHM_H
#define HOST_COST_COST_SHM_H

#include <stdint.h>

#define COST_SHM_MAGIC 0x54534f435352ULL /* "RSCOST" read as a little-endian u64 */
#define COST_SHM_VERSION 1
#define COST_MAX_NOTIFY 8

/* header.flags */
#define COST_F_IO (1u << 0) /* io=on: MMIO and port I/O counted */
#define COST_F_PROF (1u << 1) /* prof=on: prof[] is filled */

/* header.state */
#define COST_STATE_RUNNING 1
#define COST_STATE_EXITED 2 /* QEMU ran the plugin's atexit callback */

/* A guest-physical window [base, base + len): MMIO writes into it are notifies. */
struct cost_range {
	uint64_t base;
	uint64_t len;
};

struct cost_shm_header {
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;
	uint32_t vcpu_size; /* sizeof(struct cost_vcpu) */
	uint32_t n_vcpus;
	uint32_t prof_entry_size; /* sizeof(struct cost_prof_entry) */
	uint32_t prof_slots; /* 0 without prof=on */
	uint64_t vcpu_offset;
	uint64_t prof_offset;
	uint32_t flags;
	uint32_t state;
	uint64_t prof_used; /* slots holding a block address */
	uint64_t prof_dropped; /* translations left out: table full */
	/*
	 * Notify windows. Host tools may rewrite them while the guest runs
	 * (e.g. from the guest's lspci BARs): write base and len first, then
	 * n_notify.
	 */
	uint32_t n_notify;
	uint32_t pad;
	struct cost_range notify[COST_MAX_NOTIFY];
};

struct cost_vcpu {
	uint64_t insns; /* guest instructions executed */
	uint64_t halts; /* times the vCPU went idle (hlt with nothing pending) */
	uint64_t idle_ns; /* host time spent idle, CLOCK_MONOTONIC */
	uint64_t mmio_reads; /* loads from I/O memory (io=on) */
	uint64_t mmio_writes; /* stores to I/O memory, notifies included */
	uint64_t notify_writes; /* stores into a notify window */
	uint64_t pio_reads; /* in, ins */
	uint64_t pio_writes; /* out, outs */
};

/*
 * Profile: instructions bucketed by the guest virtual address of the
 * translated block they ran in. Open addressing on vaddr; a slot is taken
 * for good once `used` is set.
 */
struct cost_prof_entry {
	uint64_t vaddr;
	uint64_t insns;
	uint32_t tb_insns; /* length of the latest translation */
	uint32_t used;
};

#endif
