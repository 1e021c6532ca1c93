// SPDX-License-Identifier: MIT
/*
 * Instrumenting translated blocks. A block runs all of its instructions or
 * (on a fault) part of them, and TCG takes interrupts only between blocks, so
 * adding its length when it starts counts the guest's instructions exactly
 * (a faulting block counts whole: our guests do not fault in steady state).
 */
#include "host/cost/cost.h"

/* More than one vCPU: inline adds share one counter, so count per vCPU here. */
static void tb_exec(unsigned int vcpu_index, void *userdata)
{
	if (vcpu_index < cost.n_vcpus)
		cost.vcpu[vcpu_index].insns += (uintptr_t)userdata;
}

void cost_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	if (cost.per_vcpu_cb)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)n);
	else
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &cost.vcpu[0].insns, n);
	if (cost.prof) {
		uint64_t *slot = cost_prof_slot(qemu_plugin_tb_vaddr(tb), n);

		if (slot)
			qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
								 slot, n);
	}
	if (cost.io) {
		for (size_t i = 0; i < n; i++)
			cost_io_instrument_insn(qemu_plugin_tb_get_insn(tb, i));
	}
}
