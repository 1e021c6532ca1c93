// SPDX-License-Identifier: MIT
/*
 * What a socket offers beyond send and receive, as the kernel's vsock_test
 * uses it on Linux: the receive space (SO_VM_SOCKETS_BUFFER_SIZE) and the
 * low-water mark (SO_RCVLOWAT) with the credit updates each owes the
 * peer, MSG_PEEK, a SEQPACKET message's whole length (MSG_TRUNC) and its
 * end of record (MSG_EOR), a connect from a chosen port (bind, then
 * connect), and the shutdown the peer sent. The fake transport records
 * what the guest sends; the test plays the host.
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
#include "kernel/time.h"
#include "net/vsock/vsock.h"

#define HOST_CID HOST_PEER_CID
#define KIB 1024u

uint64_t now_ns(void)
{
	return 1000;
}

static unsigned int count_op(uint16_t op)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < n_sent; i++)
		n += sent[i]->hdr.op == op;
	return n;
}

static const struct vsock_pkt *last_sent(void)
{
	assert_true(n_sent > 0);
	return sent[n_sent - 1];
}

static int setup(void **state)
{
	char err[64];

	config_reset();
	/* packets stay apart, so the walks across them are tested */
	assert_int_equal(config_set("smallcopy", "0", err, sizeof(err)), 0);
	vsock_init(&fake);
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
	host_pkt_on(s, VSOCK_OP_RESPONSE, 0, NULL, 0);
	assert_int_equal(vsock_state(s), VSOCK_CONNECTED);
	clear_sent();
	return s;
}

/* The buffer size: bounded, told to the peer at once, passed to children. */
static void test_buf_size(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM), *l, *c;
	struct vsock_info in;

	assert_int_equal(vsock_set_buf_size(s, 4095), -EINVAL);
	assert_int_equal(vsock_set_buf_size(s, (16u << 20) + 1), -EINVAL);
	assert_int_equal(n_sent, 0);
	assert_int_equal(vsock_set_buf_size(s, 2u << 20), 0);
	assert_int_equal(count_op(VSOCK_OP_CREDIT_UPDATE), 1);
	assert_int_equal(last_sent()->hdr.buf_alloc, 2u << 20);
	vsock_get_info(s, &in);
	assert_int_equal(in.buf_alloc, 2u << 20);

	/* a listener's size is its children's, in their RESPONSE */
	l = vsock_listen(5000, VSOCK_TYPE_STREAM, 1);
	assert_int_equal(vsock_set_buf_size(l, 128 * KIB), 0);
	assert_int_equal(count_op(VSOCK_OP_CREDIT_UPDATE), 1); /* nobody to tell */
	host_pkt_deliver(&(struct host_pkt){ .src_port = 7000,
					     .dst_port = 5000,
					     .op = VSOCK_OP_REQUEST,
					     .buf_alloc = 256 * KIB });
	assert_int_equal(last_sent()->hdr.op, VSOCK_OP_RESPONSE);
	assert_int_equal(last_sent()->hdr.buf_alloc, 128 * KIB);
	c = vsock_accept(l);
	vsock_get_info(c, &in);
	assert_int_equal(in.buf_alloc, 128 * KIB);
}

/* A smaller buffer bounds what the peer may send: beyond it is dropped. */
static void test_buf_size_bounds_rx(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);
	static uint8_t data[4000];
	uint64_t over = vsock_counters()->rx_over_credit;

	assert_int_equal(vsock_set_buf_size(s, 8000), 0);
	host_pkt_on(s, VSOCK_OP_RW, 0, data, 4000);
	host_pkt_on(s, VSOCK_OP_RW, 0, data, 4000);
	host_pkt_on(s, VSOCK_OP_RW, 0, data, 1);
	assert_int_equal(vsock_rx_queued(s), 8000);
	assert_int_equal(vsock_counters()->rx_over_credit, over + 1);
}

/*
 * Linux's credit update + SO_RCVLOWAT: 128 KiB queued, 64 KiB read (no
 * update: 64 KiB is free), then rcvlowat 64 KiB + 1 sends one.
 */
static void test_rcvlowat_set_sends_update(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);
	static uint8_t data[4096], out[64 * KIB];

	assert_int_equal(vsock_set_buf_size(s, 128 * KIB), 0);
	for (int i = 0; i < 32; i++)
		host_pkt_on(s, VSOCK_OP_RW, 0, data, 4096);
	clear_sent();
	assert_int_equal(vsock_recv(s, out, sizeof(out), NULL), sizeof(out));
	assert_int_equal(n_sent, 0);
	/* as many queued as the mark: nothing owed */
	vsock_set_rcvlowat(s, 64 * KIB);
	assert_int_equal(n_sent, 0);
	vsock_set_rcvlowat(s, 64 * KIB + 1);
	assert_int_equal(count_op(VSOCK_OP_CREDIT_UPDATE), 1);
	assert_int_equal(last_sent()->hdr.fwd_cnt, 64 * KIB);
	/* the peer knows everything read now: setting it again owes nothing */
	vsock_set_rcvlowat(s, 100 * KIB);
	assert_int_equal(n_sent, 1);
}

/* Linux's credit update + low rx_bytes: a read that leaves fewer than rcvlowat sends one. */
static void test_rcvlowat_low_rx_bytes_sends_update(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);
	static uint8_t data[4096], out[64 * KIB];
	struct vsock_info in;

	assert_int_equal(vsock_set_buf_size(s, 128 * KIB), 0);
	vsock_set_rcvlowat(s, 64 * KIB + 1);
	vsock_get_info(s, &in);
	assert_int_equal(in.rcvlowat, 64 * KIB + 1);
	for (int i = 0; i < 32; i++)
		host_pkt_on(s, VSOCK_OP_RW, 0, data, 4096);
	clear_sent();
	assert_int_equal(vsock_recv(s, out, 4096, NULL), 4096);
	assert_int_equal(n_sent, 0); /* 124 KiB still queued */
	assert_int_equal(vsock_recv(s, out, sizeof(out) - 4096, NULL), sizeof(out) - 4096);
	assert_int_equal(count_op(VSOCK_OP_CREDIT_UPDATE), 1);
	assert_int_equal(last_sent()->hdr.fwd_cnt, 64 * KIB);
}

/* Without rcvlowat the lazy rule alone decides: no update at 64 KiB free. */
static void test_no_rcvlowat_stays_lazy(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);
	static uint8_t data[4096], out[64 * KIB];

	assert_int_equal(vsock_set_buf_size(s, 128 * KIB), 0);
	for (int i = 0; i < 32; i++)
		host_pkt_on(s, VSOCK_OP_RW, 0, data, 4096);
	clear_sent();
	assert_int_equal(vsock_recv(s, out, sizeof(out), NULL), sizeof(out));
	assert_int_equal(vsock_recv(s, out, sizeof(out), NULL), sizeof(out));
	assert_int_equal(count_op(VSOCK_OP_CREDIT_UPDATE), 1); /* only below 64 KiB free */
}

/* MSG_PEEK on a stream: across packets, nothing read, the credit unmoved. */
static void test_peek_stream(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_STREAM);
	struct vsock_msg m;
	uint8_t out[16];

	assert_int_equal(vsock_peek_copy(s, out, sizeof(out), &m), -EAGAIN);
	host_pkt_on(s, VSOCK_OP_RW, 0, "HELLO", 5);
	host_pkt_on(s, VSOCK_OP_RW, 0, "WORLD", 5);
	assert_int_equal(vsock_peek_copy(s, out, 2, &m), 2);
	assert_int_equal(m.len, 2);
	assert_int_equal(vsock_peek_copy(s, out, sizeof(out), &m), 10);
	assert_memory_equal(out, "HELLOWORLD", 10);
	assert_int_equal(vsock_rx_queued(s), 10);
	assert_int_equal(n_sent, 0);
	assert_int_equal(vsock_recv_msg(s, out, 3, &m), 3);
	assert_int_equal(vsock_peek_copy(s, out, sizeof(out), NULL), 7);
	assert_memory_equal(out, "LOWORLD", 7);
	/* EOF once everything is read */
	host_pkt_on(s, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_SEND, NULL, 0);
	assert_int_equal(vsock_recv_msg(s, out, sizeof(out), &m), 7);
	assert_int_equal(vsock_peek_copy(s, out, sizeof(out), &m), 0);
	assert_int_equal(vsock_recv_msg(s, out, sizeof(out), &m), 0);
}

/*
 * SEQPACKET: a peek sees the first whole message only and its whole
 * length; a short read gets its start, the rest goes, and the length says
 * how long it was (MSG_TRUNC); the end of record is the sender's.
 */
static void test_seqpacket_peek_trunc_eor(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_SEQPACKET);
	struct vsock_msg m;
	uint8_t out[32];

	host_pkt_on(s, VSOCK_OP_RW, 0, "0123", 4);
	assert_int_equal(vsock_peek_copy(s, out, sizeof(out), &m), -EAGAIN); /* not whole yet */
	assert_int_equal(vsock_recv_msg(s, out, sizeof(out), &m), -EAGAIN);
	host_pkt_on(s, VSOCK_OP_RW, VSOCK_SEQ_EOM, "4567", 4);
	host_pkt_on(s, VSOCK_OP_RW, VSOCK_SEQ_EOM | VSOCK_SEQ_EOR, "record", 6);
	assert_int_equal(vsock_peek_copy(s, out, 2, &m), 2);
	assert_int_equal(m.len, 8);
	assert_false(m.eor);
	assert_int_equal(vsock_peek_copy(s, out, sizeof(out), &m), 8);
	assert_memory_equal(out, "01234567", 8);
	assert_int_equal(vsock_recv_msg(s, out, 5, &m), 5);
	assert_int_equal(m.len, 8);
	assert_false(m.eor);
	assert_memory_equal(out, "01234", 5);
	assert_int_equal(vsock_recv_msg(s, out, sizeof(out), &m), 6);
	assert_int_equal(m.len, 6);
	assert_true(m.eor);
	assert_memory_equal(out, "record", 6);
	assert_int_equal(vsock_recv_msg(s, out, sizeof(out), &m), -EAGAIN);
}

/* An empty message is a message: 0 bytes, not "nothing queued". */
static void test_seqpacket_empty_message(void **state)
{
	struct vsock_sock *s = connect_to_host(VSOCK_TYPE_SEQPACKET);
	struct vsock_msg m;
	uint8_t out[4];

	host_pkt_on(s, VSOCK_OP_RW, VSOCK_SEQ_EOM | VSOCK_SEQ_EOR, NULL, 0);
	assert_int_equal(vsock_peek_copy(s, out, sizeof(out), &m), 0);
	assert_int_equal(vsock_recv_msg(s, out, sizeof(out), &m), 0);
	assert_true(m.eor);
	assert_int_equal(vsock_recv_msg(s, out, sizeof(out), &m), -EAGAIN);
}

/* bind then connect: the port chosen, refused while a socket holds it */
static void test_connect_from(void **state)
{
	struct vsock_sock *a = vsock_connect_from(HOST_CID, 4000, VSOCK_TYPE_STREAM, 4001), *b;
	struct vsock_info in;

	assert_non_null(a);
	assert_int_equal(last_sent()->hdr.op, VSOCK_OP_REQUEST);
	assert_int_equal(last_sent()->hdr.src_port, 4001);
	assert_null(vsock_connect_from(HOST_CID, 4000, VSOCK_TYPE_STREAM, 4001));
	host_pkt_on(a, VSOCK_OP_RESPONSE, 0, NULL, 0);
	host_pkt_on(a, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_SEND, NULL, 0);
	vsock_get_info(a, &in);
	assert_int_equal(in.peer_shutdown, VSOCK_SHUTDOWN_SEND);
	vsock_close(a);
	/* the peer has not finished yet: the port is still taken */
	assert_null(vsock_connect_from(HOST_CID, 4000, VSOCK_TYPE_STREAM, 4001));
	host_pkt_deliver(
		&(struct host_pkt){ .src_port = 4000, .dst_port = 4001, .op = VSOCK_OP_RST });
	b = vsock_connect_from(HOST_CID, 4000, VSOCK_TYPE_STREAM, 4001);
	assert_non_null(b);
	assert_int_equal(last_sent()->hdr.src_port, 4001);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_buf_size),
		T(test_buf_size_bounds_rx),
		T(test_rcvlowat_set_sends_update),
		T(test_rcvlowat_low_rx_bytes_sends_update),
		T(test_no_rcvlowat_stays_lazy),
		T(test_peek_stream),
		T(test_seqpacket_peek_trunc_eor),
		T(test_seqpacket_empty_message),
		T(test_connect_from),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
