// SPDX-License-Identifier: MIT
/*
 * The fuzzer's ring steps (drivers/virtio/fuzz_ring.c) never hand the
 * device guest memory to write but the scratch area: over thousands of
 * generated descriptor chains, indirect tables and ring steps, on both
 * layouts and with chains of one descriptor (virtio-net's fixed queue),
 * every device-writable descriptor lies in scratch or outside RAM, and
 * every INDIRECT descriptor points at the page of zeroes, outside RAM, or
 * a table of the step's own whose entries obey the same rules (one that
 * says WRITE too lies, and could at worst be written over itself).
 * A step that forges a chain forges at least one descriptor.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/fuzz.h"
#include "kernel/dma.h"

#define FAR (1ULL << 46)
#define WRAP (~0ULL - 0xfff)
#define STEPS 3000
#define CONTENT 44
#define ROOM 256

static struct fuzz_mem mem;
static struct virtq *vq;
static uint8_t *content; /* the step's content buffer, while it is out */
static unsigned int forged, forges;

const struct fuzz_mem *fuzz_mem(void)
{
	return &mem;
}

static bool in(uint64_t addr, uint64_t len, uint64_t base, uint64_t size)
{
	return addr >= base && addr <= base + size && len <= base + size - addr;
}

static void check_desc(uint64_t addr, uint32_t len, uint16_t flags, int depth);

/* Entries of a table of ours: @n of them at @addr, in @vq's layout. */
static void check_table(uint64_t addr, uint32_t len, int depth)
{
	const struct virtq_desc *t = phys_to_virt(addr);

	for (uint32_t k = 0; k < len / 16 && k < 9; k++) {
		/* 2.8.19: a packed entry's flags sit where a split one's next does */
		uint16_t flags = virtq_layout(vq) == VIRTQ_PACKED ? t[k].next : t[k].flags;

		check_desc(t[k].addr, t[k].len, flags, depth + 1);
	}
}

static void check_desc(uint64_t addr, uint32_t len, uint16_t flags, int depth)
{
	bool outside = addr == FAR || addr == WRAP;

	/* WRITE with INDIRECT (a lie, 2.8.19): at most the step's own table */
	if ((flags & VIRTQ_DESC_F_WRITE) && !(flags & VIRTQ_DESC_F_INDIRECT))
		assert_true(outside || in(addr, len, mem.scratch_pa, FUZZ_SCRATCH_LEN));
	if (!(flags & VIRTQ_DESC_F_INDIRECT) || outside || addr == mem.zeros_pa)
		return;
	/* else only a table the step wrote into its own content buffer */
	assert_non_null(content);
	assert_true(in(addr, 16, virt_to_phys(content), CONTENT + ROOM));
	/* a table in the table is one of ours, whose entries are being checked */
	if (!depth)
		check_table(addr, len < CONTENT + ROOM ? len : CONTENT + ROOM, depth);
}

static int test_content(struct fuzz_buf *b)
{
	assert_null(content);
	content = dma_alloc(CONTENT + ROOM, 16);
	assert_non_null(content);
	memset(content, 0x11, CONTENT);
	b->token = content;
	b->data = content;
	b->len = CONTENT;
	b->cap = CONTENT + ROOM;
	return 0;
}

static void test_drop(struct fuzz_buf *b)
{
	(void)b;
	dma_free(content);
	content = NULL;
}

static int test_forge(struct fuzz_buf *b, const struct virtq_desc *tmpl, unsigned int n)
{
	assert_true(n >= 1 && n <= 8);
	for (unsigned int k = 0; k < n; k++)
		check_desc(tmpl[k].addr, tmpl[k].len, tmpl[k].flags, 0);
	forged += n;
	forges++;
	test_drop(b);
	return 0;
}

static uint8_t honest_buf[64];

static int test_honest(void)
{
	struct vbuf b = { honest_buf, sizeof(honest_buf) };

	return virtq_add(vq, &b, 1, NULL, 0, honest_buf);
}

static struct virtq *test_txq(void)
{
	return vq;
}

static void run_target(enum virtq_layout layout, unsigned int max_chain)
{
	struct fuzz_dev dev = {
		.txq = test_txq,
		.content = test_content,
		.forge = test_forge,
		.drop = test_drop,
		.honest = test_honest,
		.max_chain = max_chain,
	};
	uint64_t features = VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) |
			    (layout == VIRTQ_PACKED ? VIRTIO_BIT(VIRTIO_F_RING_PACKED) : 0);
	unsigned int ran = 0;

	forged = forges = 0;
	for (uint64_t i = 0; i < STEPS; i++) {
		struct fuzz_step s = fuzz_step_at(0x7e57, FUZZ_VSOCK, i);
		struct fuzz_outcome o = { true, 0 };
		int ret;

		if (s.kind != FK_CHAIN && s.kind != FK_INDIRECT && s.kind != FK_RING)
			continue;
		vq = virtq_create(layout, 1, 64, features, NULL, NULL);
		assert_non_null(vq);
		ret = fuzz_ring_step(&dev, &s, &o);
		assert_true(ret == 0 || ret == -ENOSPC || ret == -EOPNOTSUPP || ret == -EIO);
		assert_null(content); /* forged, or given back */
		ran += !ret;
		virtq_destroy(vq);
	}
	assert_true(ran > STEPS / 4);
	assert_true(forges > 0 && forged >= forges);
}

static void test_split_chains_write_only_scratch(void **state)
{
	(void)state;
	run_target(VIRTQ_SPLIT, 0);
}

static void test_packed_chains_write_only_scratch(void **state)
{
	(void)state;
	run_target(VIRTQ_PACKED, 0);
}

static void test_one_descriptor_chains_write_only_scratch(void **state)
{
	(void)state;
	run_target(VIRTQ_SPLIT, 1);
	run_target(VIRTQ_PACKED, 1);
}

static int setup(void **state)
{
	(void)state;
	mem.scratch = dma_alloc(FUZZ_SCRATCH_LEN, 4096);
	mem.scratch_pa = virt_to_phys(mem.scratch);
	mem.zeros_pa = virt_to_phys(dma_alloc(65536, 4096));
	mem.ram_end = 1ULL << 40;
	return mem.scratch ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_chains_write_only_scratch),
		cmocka_unit_test(test_packed_chains_write_only_scratch),
		cmocka_unit_test(test_one_descriptor_chains_write_only_scratch),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
