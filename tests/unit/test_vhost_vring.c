// SPDX-License-Identifier: MIT
/*
 * The back end's checks of what the guest driver wrote (host/vhost-vsock):
 * split descriptor chains (virtio 1.2, 2.7.5, 2.7.13), indirect tables
 * (2.7.5.3), guest memory ranges and vsock headers (5.10.6). Each test
 * builds one chain in a fake guest memory and asserts the pop's verdict
 * and the ring_errors counter; a valid chain must pop whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/vhost-vsock/vsock_hdr.h"
#include "host/vring/vring.h"
#include "guest_mem_fixture.h"

#define NUM 8
#define DESC 0x0000 /* 16 * NUM bytes, and what lies after them */
#define AVAIL 0x1000
#define USED 0x2000
#define TABLE 0x3000 /* an indirect table */
#define BUF 0x8000 /* data buffers */

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

static void set_desc(uint64_t at, unsigned int i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	struct desc d = { .addr = addr, .len = len, .flags = flags, .next = next };

	memcpy(mem + at + 16 * i, &d, sizeof(d));
}

/* The driver makes head available as the ring's next entry. */
static void offer(uint16_t head)
{
	uint16_t idx;

	memcpy(&idx, mem + AVAIL + 2, 2);
	memcpy(mem + AVAIL + 4 + 2 * (idx % NUM), &head, 2);
	idx++;
	memcpy(mem + AVAIL + 2, &idx, 2);
}

static void set_avail_idx(uint16_t idx)
{
	memcpy(mem + AVAIL + 2, &idx, 2);
}

static int setup(void **state)
{
	memset(mem, 0, sizeof(mem));
	memset(&vr, 0, sizeof(vr));
	vr.num = NUM;
	vr.indirect = true; /* negotiated: the indirect checks are what is tested */
	vr.desc_uaddr = UADDR + DESC;
	vr.avail_uaddr = UADDR + AVAIL;
	vr.used_uaddr = UADDR + USED;
	assert_true(vring_map(&vr, &gm));
	/* the slot just past the ring holds a valid buffer: reading it must
	 * still be refused */
	set_desc(DESC, NUM, BUF, 16, 0, 0);
	return 0;
}

/* Pop and expect a violation: -1 and one more ring error. */
static void pop_refused(void)
{
	uint64_t errors = vr.errors;

	alarm(10); /* a walk that does not end fails here, not by hanging */
	assert_int_equal(vring_pop(&vr, &e), -1);
	alarm(0);
	assert_int_equal(vr.errors, errors + 1);
}

/*
 * Pop a bad chain behind a good head: it comes back with no segments,
 * marked dropped, one more ring error, and the ring goes on: the next
 * chain (a valid one at head 7) pops whole.
 */
static void pop_dropped(void)
{
	uint64_t errors = vr.errors;
	uint16_t head;

	memcpy(&head, mem + AVAIL + 4 + 2 * (vr.last_avail % NUM), 2);
	alarm(10);
	assert_int_equal(vring_pop(&vr, &e), 1);
	alarm(0);
	assert_true(e.dropped);
	assert_int_equal(e.id, head);
	assert_int_equal(e.n_out + e.n_in, 0);
	assert_int_equal(e.out_len + e.in_len, 0);
	assert_int_equal(vr.errors, errors + 1);
	vring_push(&vr, &e, 0);
	set_desc(DESC, 7, BUF, 16, 0, 0);
	offer(7);
	assert_int_equal(vring_pop(&vr, &e), 1);
	assert_false(e.dropped);
	assert_int_equal(e.id, 7);
	assert_int_equal(e.out_len, 16);
	assert_false(vr.broken);
}

static void test_valid_chain_pops_whole(void **state)
{
	set_desc(DESC, 0, BUF, 44, VRING_DESC_F_NEXT, 5);
	set_desc(DESC, 5, BUF + 0x1000, 100, VRING_DESC_F_WRITE, 0);
	offer(0);
	assert_int_equal(vring_pop(&vr, &e), 1);
	assert_int_equal(e.id, 0);
	assert_int_equal(e.n_out, 1);
	assert_int_equal(e.n_in, 1);
	assert_ptr_equal(e.out[0].iov_base, mem + BUF);
	assert_int_equal(e.out[0].iov_len, 44);
	assert_ptr_equal(e.in[0].iov_base, mem + BUF + 0x1000);
	assert_int_equal(e.in_len, 100);
	assert_int_equal(vring_pop(&vr, &e), 0); /* nothing more */
}

static void test_head_beyond_ring(void **state)
{
	offer(NUM);
	pop_refused();
}

static void test_next_beyond_ring(void **state)
{
	set_desc(DESC, 0, BUF, 16, VRING_DESC_F_NEXT, NUM);
	offer(0);
	pop_dropped();
}

/* zero-length descriptors add no segment: only the count ends a loop */
static void test_chain_loop(void **state)
{
	set_desc(DESC, 0, BUF, 0, VRING_DESC_F_NEXT, 1);
	set_desc(DESC, 1, BUF, 0, VRING_DESC_F_NEXT, 0);
	offer(0);
	pop_dropped();
}

static void test_avail_idx_too_far_ahead(void **state)
{
	set_desc(DESC, 0, BUF, 16, 0, 0);
	for (int i = 0; i < NUM; i++)
		offer(0);
	set_avail_idx(NUM + 1);
	pop_refused();
	/* exactly num ahead is fine on a fresh ring */
	setup(state);
	set_desc(DESC, 0, BUF, 16, 0, 0);
	for (int i = 0; i < NUM; i++)
		offer(0);
	assert_int_equal(vring_pop(&vr, &e), 1);
}

static void test_readable_after_writable(void **state)
{
	set_desc(DESC, 0, BUF, 16, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(DESC, 1, BUF, 16, 0, 0);
	offer(0);
	pop_dropped();
}

static void test_buffer_past_guest_memory(void **state)
{
	set_desc(DESC, 0, MEM_SIZE - 10, 20, 0, 0);
	offer(0);
	pop_dropped();
	/* ending exactly at the end is fine */
	setup(state);
	set_desc(DESC, 0, MEM_SIZE - 10, 10, 0, 0);
	offer(0);
	assert_int_equal(vring_pop(&vr, &e), 1);
}

static void test_indirect_length_not_multiple_of_16(void **state)
{
	set_desc(TABLE, 0, BUF, 16, 0, 0);
	set_desc(DESC, 0, TABLE, 24, VRING_DESC_F_INDIRECT, 0);
	offer(0);
	pop_dropped();
}

static void test_indirect_next_beyond_table(void **state)
{
	set_desc(TABLE, 0, BUF, 16, VRING_DESC_F_NEXT, 2);
	set_desc(TABLE, 1, BUF, 16, 0, 0);
	set_desc(TABLE, 2, BUF, 16, 0, 0); /* after the table: not part of it */
	set_desc(DESC, 0, TABLE, 32, VRING_DESC_F_INDIRECT, 0);
	offer(0);
	pop_dropped();
}

/* VQ_MAX_SEGS segments pop; one more is refused */
static void test_segment_limit(void **state)
{
	for (int i = 0; i <= VQ_MAX_SEGS; i++)
		set_desc(TABLE, i, BUF + i, 1, VRING_DESC_F_NEXT, i + 1);
	set_desc(TABLE, VQ_MAX_SEGS - 1, BUF, 1, 0, 0);
	set_desc(DESC, 0, TABLE, 16 * VQ_MAX_SEGS, VRING_DESC_F_INDIRECT, 0);
	offer(0);
	assert_int_equal(vring_pop(&vr, &e), 1);
	assert_int_equal(e.n_out, VQ_MAX_SEGS);

	setup(state);
	for (int i = 0; i <= VQ_MAX_SEGS; i++)
		set_desc(TABLE, i, BUF + i, 1, i < VQ_MAX_SEGS ? VRING_DESC_F_NEXT : 0, i + 1);
	set_desc(DESC, 0, TABLE, 16 * (VQ_MAX_SEGS + 1), VRING_DESC_F_INDIRECT, 0);
	offer(0);
	pop_dropped();
}

/*
 * A bad head and the attack mode ring-avail-jump (drivers/virtio/
 * vsock_attack.c): the ring stops, the back end is told once (it signals
 * the front end that the device needs a reset), later pops change
 * nothing, and a new base from the front end (the guest's reset) brings
 * the ring back, to be reported again when it breaks again.
 */
static unsigned int broken_calls;
static struct device_ring *broken_ring;

static void count_broken(struct device_ring *r)
{
	broken_calls++;
	broken_ring = r;
}

static void test_broken_reported_once_until_reset(void **state)
{
	broken_calls = 0;
	vring_broken_hook = count_broken;
	offer(NUM); /* a head beyond the ring: nothing to go on with */
	pop_refused();
	assert_int_equal(broken_calls, 1);
	assert_ptr_equal(broken_ring, &vr);
	assert_int_equal(vring_pop(&vr, &e), -1); /* still broken, not told again */
	assert_int_equal(broken_calls, 1);
	/* the guest reset the device: a fresh ring at base 0 works */
	memset(mem + AVAIL, 0, 4);
	vring_set_base(&vr, 0);
	set_desc(DESC, 0, BUF, 16, 0, 0);
	offer(0);
	assert_int_equal(vring_pop(&vr, &e), 1);
	set_avail_idx(1 + NUM + 1); /* ring-avail-jump */
	pop_refused();
	assert_int_equal(broken_calls, 2);
	vring_broken_hook = NULL;
}

/* ---- vsock headers from the guest ---- */

static enum guest_hdr_err parse(struct virtio_vsock_hdr *in, uint64_t out_len)
{
	struct iovec iov = { .iov_base = in, .iov_len = sizeof(*in) };
	struct virtio_vsock_hdr h;

	return vsock_hdr_parse(&iov, 1, out_len, 3, 1, &h);
}

static void test_vsock_header_checks(void **state)
{
	struct virtio_vsock_hdr h = {
		.src_cid = 3,
		.dst_cid = VSOCK_CID_HOST,
		.type = VSOCK_TYPE_STREAM,
		.op = VSOCK_OP_RW,
		.len = 100,
	};

	assert_int_equal(parse(&h, VSOCK_HDR_LEN + 100), GUEST_HDR_OK);
	assert_int_equal(parse(&h, VSOCK_HDR_LEN + 99), GUEST_HDR_LEN_BUF);
	h.len = VSOCK_MAX_PKT_PAYLOAD + 1;
	assert_int_equal(parse(&h, VSOCK_HDR_LEN + (1u << 20)), GUEST_HDR_LEN_BIG);
	h.len = VSOCK_MAX_PKT_PAYLOAD;
	assert_int_equal(parse(&h, VSOCK_HDR_LEN + (1u << 20)), GUEST_HDR_OK);
	h.len = 0;
	h.src_cid = 4; /* another guest's CID: spoofed */
	assert_int_equal(parse(&h, VSOCK_HDR_LEN), GUEST_HDR_SRC_CID);
	h.src_cid = 3;
	h.dst_cid = 5;
	assert_int_equal(parse(&h, VSOCK_HDR_LEN), GUEST_HDR_DST_CID);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, setup)
	const struct CMUnitTest tests[] = {
		T(test_valid_chain_pops_whole),	    T(test_head_beyond_ring),
		T(test_next_beyond_ring),	    T(test_chain_loop),
		T(test_avail_idx_too_far_ahead),    T(test_readable_after_writable),
		T(test_buffer_past_guest_memory),   T(test_indirect_length_not_multiple_of_16),
		T(test_indirect_next_beyond_table), T(test_segment_limit),
		T(test_vsock_header_checks),	    T(test_broken_reported_once_until_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
