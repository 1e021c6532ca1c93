// SPDX-License-Identifier: MIT
/*
 * I/O accesses (io=on): the guest's loads and stores that reach I/O memory,
 * and its port I/O instructions. Under KVM each one is a VM exit, so their
 * counts stand for exits. Every memory access gets a callback, which is why
 * this is off by default.
 */
#include "host/cost/cost.h"

static bool in_notify_window(uint64_t pa)
{
	const struct cost_shm_header *h = cost.hdr;
	uint32_t n = __atomic_load_n(&h->n_notify, __ATOMIC_ACQUIRE);

	if (n > COST_MAX_NOTIFY)
		n = COST_MAX_NOTIFY;
	for (uint32_t i = 0; i < n; i++) {
		if (pa - h->notify[i].base < h->notify[i].len)
			return true;
	}
	return false;
}

static void mem_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
		       void *userdata)
{
	struct qemu_plugin_hwaddr *ha = qemu_plugin_get_hwaddr(info, vaddr);
	struct cost_vcpu *c;

	if (!ha || !qemu_plugin_hwaddr_is_io(ha) || vcpu_index >= cost.n_vcpus)
		return;
	c = &cost.vcpu[vcpu_index];
	if (!qemu_plugin_mem_is_store(info)) {
		c->mmio_reads++;
		return;
	}
	c->mmio_writes++;
	if (in_notify_window(qemu_plugin_hwaddr_phys_addr(ha)))
		c->notify_writes++;
}

static void port_in(unsigned int vcpu_index, void *userdata)
{
	if (vcpu_index < cost.n_vcpus)
		cost.vcpu[vcpu_index].pio_reads++;
}

static void port_out(unsigned int vcpu_index, void *userdata)
{
	if (vcpu_index < cost.n_vcpus)
		cost.vcpu[vcpu_index].pio_writes++;
}

static bool is_prefix(uint8_t b)
{
	switch (b) {
	case 0x26: /* segment overrides */
	case 0x2e:
	case 0x36:
	case 0x3e:
	case 0x64:
	case 0x65:
	case 0x66: /* operand size */
	case 0x67: /* address size */
	case 0xf0: /* lock */
	case 0xf2: /* repne */
	case 0xf3: /* rep */
		return true;
	default:
		return (b & 0xf0) == 0x40; /* REX (64-bit mode; inc/dec elsewhere, harmless) */
	}
}

/*
 * Port I/O is not a memory access for TCG plugins: recognise in/out/ins/outs
 * by their opcode (Intel SDM vol. 2: E4-E7, EC-EF, 6C-6F).
 * Returns 1 for input, 2 for output, 0 for anything else.
 */
static int port_direction(const uint8_t *p, size_t len)
{
	size_t i = 0;

	while (i < len && i < 15 && is_prefix(p[i]))
		i++;
	if (i >= len)
		return 0;
	switch (p[i]) {
	case 0xe4:
	case 0xe5:
	case 0xec:
	case 0xed:
	case 0x6c:
	case 0x6d:
		return 1;
	case 0xe6:
	case 0xe7:
	case 0xee:
	case 0xef:
	case 0x6e:
	case 0x6f:
		return 2;
	default:
		return 0;
	}
}

void cost_io_instrument_insn(struct qemu_plugin_insn *insn)
{
	int dir = port_direction(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));

	if (dir == 1)
		qemu_plugin_register_vcpu_insn_exec_cb(insn, port_in, QEMU_PLUGIN_CB_NO_REGS, NULL);
	else if (dir == 2)
		qemu_plugin_register_vcpu_insn_exec_cb(insn, port_out, QEMU_PLUGIN_CB_NO_REGS,
						       NULL);
	else
		qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
}
