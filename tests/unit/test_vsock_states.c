// SPDX-License-Identifier: MIT
/*
 * The vsock state machine's less travelled edges (virtio 1.2, 5.10.6.4 ..
 * 5.10.6.6): connect and close timeouts, shutdown rules, packets a state
 * does not expect, closing a connection the peer already finished. A fake
 * transport records what the guest sends; the test plays the host and
 * moves the clock.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_transport.h"
#include "host_peer.h"
#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/time.h"
#include "net/vsock/vsock.h"
#include "stub_kernel.h"

#define HOST_CID HOST_PEER_CID
#define SEC 1000000000ULL

static uint64_t fake_now;

uint64_t now_ns(void)
{
	return fake_now;
}

static uint16_t last_op(void)
{
	assert_true(n_sent > 0);
	return sent[n_sent - 1]->hdr.op;
}

static int setup(void **state)
{
	config_reset();
	vsock_init(&fake);
	fake_now = 1000;
	transport_full = false;
	transport_direct = false;
	clear_sent();
	return 0;
}

static int teardown(void **state)
{
	struct vsock_sock *s;

	vsock_transport_reset();
	while ((s = vsock_next(NULL)))
		vsock_close(s);
	clear_sent();
	assert_int_equal(vsock_pkt_live(), 0);
	return 0;
}

static struct vsock_sock *connect_to_host(enum vsock_type type)
{
	struct vsock_sock *s = vsock_connect(HOST_CID, 4000, type);

	assert_non_null(s);
	assert_int_equal(last_op(), VSOCK_OP_REQUEST);
	host_pkt_on(s, VSOCK_OP_RESPONSE, 0, NULL, 0);
	assert_int_equal(vsock_state(s), VSOCK_CONNECTED);
	clear_sent();
	return s;
}

static void test_connect_times_out(void **state)
{
	struct vsock_sock *s = vsock_connect(HOST_CID, 4000, VSOCK_TYPE_STREAM);
	uint64_t timeouts = vsock_counters()->connect_timeouts;

	fake_now += 10 * SEC - 1;
	vsock_poll();
	assert_int_equal(vsock_state(s), VSOCK_CONNECTING);
	fake_now += 1;
	vsock_poll();
	assert_int_equal(vsock_state(s), VSOCK_CLOSED);
	assert_int_equal(vsock_error(s), -ETIMEDOUT);
	assert_int_equal(last_op(), VSOCK_OP_RST);
	assert_int_equal(vsock_counters()->connect_timeouts, timeouts + 1);
}

/* anything but RESPONSE or RST while connecting: RST back, -EPROTO */
static void test_connecting_gets_wrong_op(void **state)
{
	struct vsock_sock *s = vsock_connect(HOST_CID, 4000, VSOCK_TYPE_STREAM);
	uint64_t bad = vsock_counters()->rx_bad_op;

	host_pkt_on(s, VSOCK_OP_RW, 0, "x", 1);
	assert_int_equal(vsock_state(s), VSOCK_CLOSED);
	assert_int_equal(vsock_error(s), -EPROTO);
	assert_int_equal(last_op(), VSOCK_OP_RST);
	assert_int_equal(vsock_counters()->rx_bad_op, bad + 1);
}

static void test_close_while_connecting_sends_rst(void **state)
{
	struct vsock_sock *s = vsock_connect(HOST_CID, 4000, VSOCK_TYPE_STREAM);

	vsock_close(s);
	assert_int_equal(last_op(), VSOCK_OP_RST);
	assert_null(vsock_next(NULL));
}

static void test_close_times_out(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);
	uint64_t timeouts = vsock_counters()->close_timeouts;

	vsock_close(s);
	assert_int_equal(last_op(), VSOCK_OP_SHUTDOWN);
	assert_int_equal(sent[n_sent - 1]->hdr.flags, VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	fake_now += 5 * SEC - 1;
	vsock_poll();
	assert_ptr_equal(vsock_next(NULL), s);
	fake_now += 1;
	vsock_poll();
	assert_int_equal(last_op(), VSOCK_OP_RST);
	assert_null(vsock_next(NULL));
	assert_int_equal(vsock_counters()->close_timeouts, timeouts + 1);
}

/*
 * The pass asks for its earliest timer (net/vsock/poller.c): a deadline
 * set after that, and earlier (a close behind a connect), schedules the
 * pass again, so the close times out at its own time, not the connect's.
 */
static unsigned int pass_poll(struct poll_ctx *ctx, unsigned int budget)
{
	return 0;
}

static struct poll_ctx pass = { .name = "vsock", .poll = pass_poll };

static void test_earlier_deadline_schedules_the_pass(void **state)
{
	struct vsock_sock *c, *s = connect_to_host(VSOCK_TYPE_STREAM);
	struct vsock_pass p;

	if (!pass.cpu)
		assert_int_equal(poll_ctx_add(&pass), 0);
	vsock_set_pass(&pass);
	c = vsock_connect(HOST_CID, 4001, VSOCK_TYPE_STREAM); /* a 10 s timer */
	assert_true(stub_scheduled(&pass));
	stub_unschedule_all();
	assert_true(vsock_poll_pass(&p));
	assert_true(p.next_timer == fake_now + 10 * SEC);
	vsock_close(s); /* a 5 s timer */
	assert_true(stub_scheduled(&pass));
	stub_unschedule_all();
	assert_true(vsock_poll_pass(&p));
	assert_true(p.next_timer == fake_now + 5 * SEC);
	vsock_close(c);
	vsock_set_pass(NULL);
}

static void test_shutdown_rules(void **state)
{
	struct vsock_sock *s = vsock_connect(HOST_CID, 4000, VSOCK_TYPE_STREAM);

	assert_int_equal(vsock_shutdown(s, VSOCK_SHUTDOWN_SEND), -ENOTCONN);
	host_pkt_on(s, VSOCK_OP_RESPONSE, 0, NULL, 0);
	clear_sent();
	assert_int_equal(vsock_shutdown(s, 0), 0); /* nothing asked: nothing sent */
	assert_int_equal(n_sent, 0);
	assert_int_equal(vsock_shutdown(s, VSOCK_SHUTDOWN_SEND), 0);
	assert_int_equal(last_op(), VSOCK_OP_SHUTDOWN);
	assert_int_equal(sent[0]->hdr.flags, VSOCK_SHUTDOWN_SEND);
	assert_int_equal(vsock_shutdown(s, VSOCK_SHUTDOWN_SEND), 0); /* again: no packet */
	assert_int_equal(n_sent, 1);
	assert_int_equal(vsock_send(s, "x", 1, false), -EPIPE);
	assert_int_equal(vsock_shutdown(s, VSOCK_SHUTDOWN_RCV), 0);
	assert_int_equal(sent[1]->hdr.flags, VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
}

/* REQUEST or RESPONSE on a live connection: counted, connection kept */
static void test_connected_gets_request(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);
	uint64_t bad = vsock_counters()->rx_bad_op;

	host_pkt_on(s, VSOCK_OP_REQUEST, 0, NULL, 0);
	host_pkt_on(s, VSOCK_OP_RESPONSE, 0, NULL, 0);
	assert_int_equal(vsock_counters()->rx_bad_op, bad + 2);
	assert_int_equal(vsock_state(s), VSOCK_CONNECTED);
	assert_int_equal(n_sent, 0);
}

/* the peer finished both ways with data queued: the last read ends it */
static void test_peer_done_after_last_read(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);
	uint8_t out[8];

	host_pkt_on(s, VSOCK_OP_RW, 0, "abcd", 4);
	host_pkt_on(s, VSOCK_OP_SHUTDOWN, 0, NULL, 0); /* no flags: nothing changes */
	host_pkt_on(s, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND, NULL, 0);
	assert_int_equal(vsock_state(s), VSOCK_CONNECTED);
	assert_int_equal(n_sent, 0);
	assert_int_equal(vsock_recv(s, out, 2, NULL), 2);
	assert_int_equal(vsock_state(s), VSOCK_CONNECTED);
	assert_int_equal(vsock_recv(s, out, sizeof(out), NULL), 2);
	assert_memory_equal(out, "cd", 2);
	assert_int_equal(vsock_state(s), VSOCK_CLOSED);
	assert_int_equal(last_op(), VSOCK_OP_RST);
	assert_int_equal(vsock_error(s), 0); /* an orderly end, not a reset */
}

/* closing after the peer finished both ways: RST, freed at once */
static void test_close_after_peer_done(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);

	host_pkt_on(s, VSOCK_OP_RW, 0, "abcd", 4);
	host_pkt_on(s, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND, NULL, 0);
	vsock_close(s);
	assert_int_equal(last_op(), VSOCK_OP_RST);
	assert_null(vsock_next(NULL));
}

/* SEQPACKET: the unread rest of a multi-packet message is discarded */
static void test_seqpacket_discard_spans_packets(void **state)
{
	struct vsock_sock *s;
	uint8_t out[8];
	bool eor = false;
	char err[64];

	/* packets stay apart (no smallcopy merging) */
	assert_int_equal(config_set("smallcopy", "0", err, sizeof(err)), 0);
	s = connect_to_host(VSOCK_TYPE_SEQPACKET);
	host_pkt_on(s, VSOCK_OP_RW, 0, "0123", 4);
	host_pkt_on(s, VSOCK_OP_RW, 0, "4567", 4);
	host_pkt_on(s, VSOCK_OP_RW, VSOCK_SEQ_EOM, "89", 2);
	host_pkt_on(s, VSOCK_OP_RW, VSOCK_SEQ_EOM, "next", 4);
	assert_int_equal(vsock_recv(s, out, 2, &eor), 2);
	assert_true(eor);
	assert_memory_equal(out, "01", 2);
	assert_int_equal(vsock_recv(s, out, sizeof(out), &eor), 4);
	assert_memory_equal(out, "next", 4);
	assert_int_equal(vsock_rx_queued(s), 0);
}

static unsigned int count_op(uint16_t op)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < n_sent; i++)
		n += sent[i]->hdr.op == op;
	return n;
}

/* The host's CREDIT_UPDATE: its buffer has room for fwd_cnt more. */
static void host_credit(struct vsock_sock *s, uint32_t fwd_cnt)
{
	struct vsock_info in;

	vsock_get_info(s, &in);
	host_pkt_deliver(&(struct host_pkt){ .src_port = in.peer_port,
					     .dst_port = in.local_port,
					     .type = in.type,
					     .op = VSOCK_OP_CREDIT_UPDATE,
					     .buf_alloc = 256u << 10,
					     .fwd_cnt = fwd_cnt });
}

/* out of credit: one CREDIT_REQUEST until the host's next CREDIT_UPDATE */
static void test_credit_request_once_per_update(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);
	static uint8_t buf[256u << 10];

	assert_int_equal(vsock_send(s, buf, sizeof(buf), false), sizeof(buf));
	clear_sent();
	assert_int_equal(vsock_send(s, buf, 1, false), -EAGAIN);
	assert_int_equal(vsock_send(s, buf, 1, false), -EAGAIN);
	assert_int_equal(count_op(VSOCK_OP_CREDIT_REQUEST), 1);
	/* an update that frees nothing: still stuck, so ask again, once */
	host_credit(s, 0);
	assert_int_equal(vsock_send(s, buf, 1, false), -EAGAIN);
	assert_int_equal(vsock_send(s, buf, 1, false), -EAGAIN);
	assert_int_equal(count_op(VSOCK_OP_CREDIT_REQUEST), 2);
	host_credit(s, 100);
	assert_int_equal(vsock_send(s, buf, sizeof(buf), false), 100);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_connect_times_out),
		T(test_earlier_deadline_schedules_the_pass),
		T(test_connecting_gets_wrong_op),
		T(test_close_while_connecting_sends_rst),
		T(test_close_times_out),
		T(test_shutdown_rules),
		T(test_connected_gets_request),
		T(test_peer_done_after_last_read),
		T(test_close_after_peer_done),
		T(test_seqpacket_discard_spans_packets),
		T(test_credit_request_once_per_update),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
