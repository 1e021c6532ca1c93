/* SPDX-License-Identifier: MIT */
/* The plugin's private state, shared by its files. */
#ifndef HOST_COST_COST_H
#define HOST_COST_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "host/cost/cost_shm.h"
#include "host/cost/qemu_plugin_api.h"

struct cost_state {
	struct cost_shm_header *hdr; /* the mapped block */
	struct cost_vcpu *vcpu; /* hdr's vcpu[] */
	struct cost_prof_entry *prof; /* hdr's prof[], NULL without prof=on */
	unsigned int n_vcpus;
	bool io; /* io=on */
	/* More than one vCPU: count per vCPU with callbacks, not inline adds. */
	bool per_vcpu_cb;
	uint64_t *idle_since; /* per vCPU, ns; 0 while running */
};

extern struct cost_state cost;

/* translate.c: instrument each translated block. */
void cost_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

/* profile.c: the counter for blocks starting at vaddr, NULL when full. */
uint64_t *cost_prof_slot(uint64_t vaddr, uint32_t tb_insns);

/* io.c: I/O accesses, the ones that would exit to the VMM under KVM. */
void cost_io_instrument_insn(struct qemu_plugin_insn *insn);

#endif
