// SPDX-License-Identifier: MIT
/*
 * When the guest sends a CREDIT_UPDATE (virtio 1.2, 5.10.6.3), pinned
 * exactly. credit=lazy follows Linux (its 2019 vsock throughput series): after a read, update only
 * when the free space the peer last heard of, buf_alloc - (fwd_cnt -
 * last_fwd_cnt), drops below 64 KiB (VIRTIO_VSOCK_MAX_PKT_BUF_SIZE).
 * credit=eager updates after every read that consumed bytes. The fake
 * transport keeps what the guest sends; the test plays the host.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/config.h"
#include "kernel/time.h"
#include "fake_transport.h"
#include "host_peer.h"
#include "net/vsock/vsock.h"

#define HOST_CID 2
#define PORT 1235
#define PEER_PORT 7000
#define THRESHOLD 65536u /* VIRTIO_VSOCK_MAX_PKT_BUF_SIZE */
#define MIB (1u << 20)

/* ---- fakes: time, and what the guest sent, counted ---- */

uint64_t now_ns(void)
{
	return 1000;
}

static struct vsock_sock *listener;
static unsigned int n_updates, n_other;
static uint32_t last_update_fwd_cnt;

/* Count what the guest sent since the last call, then let it go. */
static void count_sent(void)
{
	assert_int_equal(sent_dropped, 0);
	for (unsigned int i = 0; i < n_sent; i++) {
		if (sent[i]->hdr.op == VSOCK_OP_CREDIT_UPDATE) {
			n_updates++;
			last_update_fwd_cnt = sent[i]->hdr.fwd_cnt;
		} else {
			n_other++;
		}
	}
	clear_sent();
}

static void host_pkt(uint16_t op, const void *data, uint32_t len)
{
	host_pkt_deliver(&(struct host_pkt){ .src_port = PEER_PORT,
					     .dst_port = PORT,
					     .op = op,
					     .data = data,
					     .len = len,
					     .buf_alloc = 256u << 10,
					     .room = 4096 });
}

static void set_key(const char *key, const char *value)
{
	char err[64];

	assert_int_equal(config_set(key, value, err, sizeof(err)), 0);
}

/* A connected stream socket advertising vsock_buf = buf_alloc bytes. */
static struct vsock_sock *connected(const char *credit, const char *buf_alloc)
{
	struct vsock_sock *c;
	struct vsock_info in;

	config_reset();
	set_key("credit", credit);
	set_key("vsock_buf", buf_alloc);
	vsock_init(&fake);
	listener = vsock_listen(PORT, VSOCK_TYPE_STREAM, 1);
	assert_non_null(listener);
	host_pkt(VSOCK_OP_REQUEST, NULL, 0);
	c = vsock_accept(listener);
	assert_non_null(c);
	vsock_get_info(c, &in);
	assert_int_equal(in.buf_alloc, strtoul(buf_alloc, NULL, 10));
	count_sent();
	n_updates = n_other = 0;
	return c;
}

/*
 * The host sends n bytes in packets of at most `chunk`, the application
 * reads each packet whole as it arrives. Returns the updates it cost.
 */
static unsigned int transfer(struct vsock_sock *c, uint32_t n, uint32_t chunk)
{
	static uint8_t data[65536], out[65536];
	unsigned int before = n_updates;

	while (n) {
		uint32_t len = n < chunk ? n : chunk;

		for (uint32_t i = 0; i < len; i++)
			data[i] = (uint8_t)(n - i);
		host_pkt(VSOCK_OP_RW, data, len);
		assert_int_equal(vsock_recv(c, out, len, NULL), len);
		assert_memory_equal(out, data, len);
		count_sent();
		n -= len;
	}
	return n_updates - before;
}

/* Reset the connection (it is CLOSED then) and free both sockets. */
static void done(struct vsock_sock *c)
{
	vsock_transport_reset();
	vsock_close(c);
	vsock_close(listener);
	clear_sent();
	assert_null(vsock_next(NULL));
	assert_int_equal(vsock_pkt_live(), 0);
}

/* ---- lazy: the free space the peer knows of, around 64 KiB ---- */

static void test_lazy_free_space_above_at_below_threshold(void **state)
{
	struct vsock_sock *c = connected("lazy", "262144");
	uint32_t quiet = 262144 - THRESHOLD; /* unseen bytes that leave exactly 64 KiB */

	/* free space just above the threshold, then exactly at it: silent */
	assert_int_equal(transfer(c, quiet - 1, 65536), 0);
	assert_int_equal(transfer(c, 1, 65536), 0);
	/* one byte more and the peer's view is below 64 KiB: one update */
	assert_int_equal(transfer(c, 1, 65536), 1);
	assert_int_equal(last_update_fwd_cnt, quiet + 1);
	/* the count starts again from what the peer now knows */
	assert_int_equal(transfer(c, quiet, 65536), 0);
	assert_int_equal(transfer(c, 1, 65536), 1);
	assert_int_equal(last_update_fwd_cnt, 2 * (quiet + 1));
	assert_int_equal(n_other, 0);
	done(c);
}

/* a window of exactly 64 KiB is always below the threshold after a read */
static void test_lazy_window_at_threshold(void **state)
{
	struct vsock_sock *c = connected("lazy", "65536");

	assert_int_equal(transfer(c, 1, 65536), 1);
	assert_int_equal(transfer(c, 100, 65536), 1);
	assert_int_equal(transfer(c, 65536, 65536), 1);
	assert_int_equal(last_update_fwd_cnt, 1 + 100 + 65536);
	done(c);
}

/* 64 KiB + 1: one byte read leaves 64 KiB free (quiet), two do not */
static void test_lazy_window_just_above_threshold(void **state)
{
	struct vsock_sock *c = connected("lazy", "65537");

	assert_int_equal(transfer(c, 1, 65536), 0);
	assert_int_equal(transfer(c, 1, 65536), 1);
	assert_int_equal(last_update_fwd_cnt, 2);
	/* a full window read at once always updates */
	assert_int_equal(transfer(c, 65536, 65536), 1);
	done(c);
}

/* 64 KiB - 1: even a 1-byte read leaves less than 64 KiB free */
static void test_lazy_window_just_below_threshold(void **state)
{
	struct vsock_sock *c = connected("lazy", "65535");

	assert_int_equal(transfer(c, 1, 65536), 1);
	assert_int_equal(transfer(c, 65535, 65535), 1);
	assert_int_equal(last_update_fwd_cnt, 65536);
	/* nothing consumed since: nothing to tell, however small the window */
	vsock_consume(c, 0);
	count_sent();
	assert_int_equal(n_updates, 2);
	done(c);
}

/* ---- eager: every read that consumed bytes ---- */

static void test_eager_every_read(void **state)
{
	struct vsock_sock *c = connected("eager", "262144");
	uint8_t out[16];

	assert_int_equal(transfer(c, 1, 65536), 1);
	assert_int_equal(last_update_fwd_cnt, 1);
	assert_int_equal(transfer(c, 65535, 65536), 1);
	assert_int_equal(transfer(c, 4 * 4096, 4096), 4);
	assert_int_equal(last_update_fwd_cnt, 65536 + 4 * 4096);
	/* a read of nothing sends nothing */
	assert_int_equal(vsock_recv(c, out, sizeof(out), NULL), 0);
	vsock_consume(c, 0);
	count_sent();
	assert_int_equal(n_updates, 6);
	done(c);
}

/* ---- what 1 MiB costs ---- */

/*
 * 256 KiB window. Lazy: 64 KiB reads update after every 4th (unseen 256 KiB,
 * free 0; after the 3rd exactly 64 KiB is free): 4 per MiB. 4 KiB reads
 * update once unseen exceeds 192 KiB, i.e. every 49th read: 256 reads, 5.
 * Eager: one per read.
 */
static void test_one_mib_costs(void **state)
{
	struct vsock_sock *c = connected("lazy", "262144");

	assert_int_equal(transfer(c, MIB, 65536), 4);
	assert_int_equal(last_update_fwd_cnt, MIB);
	done(c);

	c = connected("lazy", "262144");
	assert_int_equal(transfer(c, MIB, 4096), 5);
	assert_int_equal(last_update_fwd_cnt, 5 * 49 * 4096);
	done(c);

	c = connected("eager", "262144");
	assert_int_equal(transfer(c, MIB, 65536), 16);
	done(c);

	c = connected("eager", "262144");
	assert_int_equal(transfer(c, MIB, 4096), 256);
	assert_int_equal(last_update_fwd_cnt, MIB);
	done(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lazy_free_space_above_at_below_threshold),
		cmocka_unit_test(test_lazy_window_at_threshold),
		cmocka_unit_test(test_lazy_window_just_above_threshold),
		cmocka_unit_test(test_lazy_window_just_below_threshold),
		cmocka_unit_test(test_eager_every_read),
		cmocka_unit_test(test_one_mib_costs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
