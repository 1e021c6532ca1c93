// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the device-side descriptor walk of ringside-vhost-vsock
 * (host/vring/vring*.c) over guest memory the fuzzer writes, split
 * and packed, with and without EVENT_IDX. Every segment popped must lie
 * inside guest memory; the walk must end (no loops) and never crash.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "host/vring/vring.h"

#define MEM_SIZE (64 * 1024)
#define UADDR 0x100000000ull

static uint8_t mem[MEM_SIZE] __attribute__((aligned(4096)));

static void check_iov(const struct iovec *iov, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint8_t *p = iov[i].iov_base;

		assert(p >= mem && iov[i].iov_len <= MEM_SIZE &&
		       p + iov[i].iov_len <= mem + MEM_SIZE);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guest_mem gm = {
		.nregions = 1,
		.r[0] = { .gpa = 0, .size = MEM_SIZE, .uaddr = UADDR, .host = mem },
	};
	struct device_ring vr = { 0 };
	static struct vq_elem e;
	uint8_t cfg;

	if (size < 4)
		return 0;
	cfg = data[0];
	memset(mem, 0, sizeof(mem));
	memcpy(mem, data + 4, size - 4 < MEM_SIZE ? size - 4 : MEM_SIZE);
	/* ring sizes 1..256 (power of two when split), areas at fixed spots */
	vr.packed = cfg & 1;
	vr.event_idx = cfg & 2;
	vr.indirect = !(cfg & 0x40);
	vr.num = 1u << ((cfg >> 2) & 7);
	if (vr.packed && (cfg & 0x20))
		vr.num = 1 + data[1];
	vr.desc_uaddr = UADDR;
	vr.avail_uaddr = UADDR + 0x1000;
	vr.used_uaddr = UADDR + 0x2000;
	vring_set_base(&vr, data[2] | (uint32_t)data[3] << 8);
	if (!vring_map(&vr, &gm))
		return 0;
	for (unsigned i = 0; i < 2 * vr.num + 2; i++) {
		int r = vring_pop(&vr, &e);

		if (r <= 0)
			break;
		check_iov(e.out, e.n_out);
		check_iov(e.in, e.n_in);
		assert(e.n_out + e.n_in <= VQ_MAX_SEGS);
		if (i & 1)
			vring_push(&vr, &e, (uint32_t)e.in_len);
		else
			vring_unpop(&vr, &e), vring_pop(&vr, &e), vring_push(&vr, &e, 0);
		vring_need_notify(&vr);
	}
	vring_set_kicks(&vr, true);
	vring_get_base(&vr);
	return 0;
}
