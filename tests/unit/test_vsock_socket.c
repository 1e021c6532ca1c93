// SPDX-License-Identifier: MIT
/*
 * The vsock socket layer against scripted packet sequences: a fake
 * transport records what the guest sends, the test plays the peer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/time.h"
#include "net/vsock/vsock.h"
#include "fake_transport.h"
#include "host_peer.h"
#include "stub_kernel.h"

#define HOST_CID 2

/* ---- fakes: time and the transport ---- */

static uint64_t fake_now;

uint64_t now_ns(void)
{
	return fake_now;
}

/* The last packet the guest sent, checked for op and ports. */
static struct vsock_pkt *last_sent(uint16_t op)
{
	assert_true(n_sent > 0);
	assert_int_equal(sent[n_sent - 1]->hdr.op, op);
	return sent[n_sent - 1];
}

static unsigned int count_sent(uint16_t op)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < n_sent; i++)
		n += sent[i]->hdr.op == op;
	return n;
}

/* Deliver a packet from the host (cid 2) to the guest. */
static void peer_pkt(uint32_t src_port, uint32_t dst_port, uint16_t type, uint16_t op,
		     uint32_t flags, const void *data, uint32_t len, uint32_t buf_alloc,
		     uint32_t fwd_cnt)
{
	host_pkt_deliver(&(struct host_pkt){ .src_port = src_port,
					     .dst_port = dst_port,
					     .type = type,
					     .op = op,
					     .flags = flags,
					     .data = data,
					     .len = len,
					     .buf_alloc = buf_alloc,
					     .fwd_cnt = fwd_cnt,
					     .room = 4096 });
}

#define S VSOCK_TYPE_STREAM
#define Q VSOCK_TYPE_SEQPACKET
#define PEER_BUF (256u << 10)

static void peer(uint32_t sport, uint32_t dport, uint16_t op, uint32_t flags)
{
	peer_pkt(sport, dport, S, op, flags, NULL, 0, PEER_BUF, 0);
}

static void owners_added(void);

static int setup(void **state)
{
	config_reset();
	vsock_init(&fake);
	fake_loop_init();
	owners_added();
	stub_unschedule_all();
	transport_full = false;
	transport_direct = false;
	fake_now = 1000;
	return 0;
}

/* Free every socket the test left, so the next test starts clean. */
static int teardown(void **state)
{
	struct vsock_sock *s;

	while ((s = vsock_next(NULL))) {
		vsock_close(s);
		if (vsock_next(NULL) == s) {
			/* closing: finish it the way a peer would */
			struct vsock_info in;

			vsock_get_info(s, &in);
			peer_pkt(in.peer_port, in.local_port, in.type, VSOCK_OP_RST, 0, NULL, 0,
				 PEER_BUF, 0);
			assert_ptr_not_equal(vsock_next(NULL), s);
		}
	}
	clear_sent();
	assert_int_equal(vsock_pkt_live(), 0);
	return 0;
}

static struct vsock_sock *accept_one(struct vsock_sock *l, uint32_t port, uint32_t peer_port)
{
	peer(peer_port, port, VSOCK_OP_REQUEST, 0);
	last_sent(VSOCK_OP_RESPONSE);
	return vsock_accept(l);
}

/* ---- tests ---- */

static void test_listen_accept_second_after_close(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;

	assert_non_null(l);
	assert_null(vsock_listen(1234, S, 4)); /* one listener per port and type */
	c = accept_one(l, 1234, 5000);
	assert_non_null(c);
	assert_int_equal(vsock_state(c), VSOCK_CONNECTED);
	assert_int_equal(sent[0]->hdr.dst_port, 5000);
	assert_int_equal(sent[0]->hdr.src_port, 1234);
	assert_int_equal(sent[0]->hdr.buf_alloc, 256u << 10);

	/* close: SHUTDOWN both ways, then the peer's RST frees it */
	vsock_close(c);
	assert_int_equal(last_sent(VSOCK_OP_SHUTDOWN)->hdr.flags, 3);
	peer(5000, 1234, VSOCK_OP_RST, 0);
	clear_sent();

	/* the same peer port again, and a second accept works */
	c = accept_one(l, 1234, 5000);
	assert_non_null(c);
	assert_null(vsock_accept(l));
}

/*
 * vsock_send_static: the packets point at the caller's bytes (no copy),
 * split at 64 KiB like vsock_send; and every received packet is a change
 * the next vsock_poll_pass reports, once.
 */
static void test_send_static_points_at_data(void **state)
{
	static uint8_t data[70000];
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	struct vsock_info in;
	struct vsock_pass p;

	c = accept_one(l, 1234, 5000);
	assert_non_null(c);
	clear_sent();
	assert_int_equal(vsock_send_static(c, data, sizeof(data)), sizeof(data));
	assert_int_equal(n_sent, 2);
	assert_ptr_equal(vsock_pkt_payload(sent[0]), data);
	assert_int_equal(sent[0]->hdr.len, 65536);
	assert_ptr_equal(vsock_pkt_payload(sent[1]), data + 65536);
	assert_int_equal(sent[1]->hdr.len, sizeof(data) - 65536);
	vsock_get_info(c, &in);
	assert_int_equal(in.tx_bytes, sizeof(data));
	clear_sent();

	vsock_poll_pass(&p); /* what the test did so far */
	assert_false(vsock_poll_pass(&p)); /* nothing happened since */
	peer(5000, 1234, VSOCK_OP_CREDIT_UPDATE, 0);
	assert_true(vsock_poll_pass(&p));
	assert_true(p.changed);
	assert_false(vsock_poll_pass(&p)); /* reported once */
}

static void test_backlog_full_and_no_listener(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 1);
	uint64_t full = vsock_counters()->backlog_full;

	peer(5000, 1234, VSOCK_OP_REQUEST, 0);
	peer(5001, 1234, VSOCK_OP_REQUEST, 0);
	last_sent(VSOCK_OP_RST);
	assert_int_equal(vsock_counters()->backlog_full, full + 1);
	/* no listener on 999; and a seqpacket REQUEST to a stream-only port */
	peer(5002, 999, VSOCK_OP_REQUEST, 0);
	last_sent(VSOCK_OP_RST);
	peer_pkt(5003, 1234, Q, VSOCK_OP_REQUEST, 0, NULL, 0, PEER_BUF, 0);
	last_sent(VSOCK_OP_RST);
	assert_non_null(vsock_accept(l));
}

static void test_never_answer_rst(void **state)
{
	uint64_t ignored = vsock_counters()->rx_rst_ignored;

	peer(5000, 4321, VSOCK_OP_RST, 0);
	assert_int_equal(n_sent, 0);
	assert_int_equal(vsock_counters()->rx_rst_ignored, ignored + 1);
	/* anything else to no socket gets an RST */
	peer(5000, 4321, VSOCK_OP_RW, 0);
	assert_int_equal(last_sent(VSOCK_OP_RST)->hdr.dst_port, 5000);
}

static void test_receive_boundaries_and_over_credit(void **state)
{
	struct vsock_sock *l = vsock_listen(1235, S, 4), *c;
	static uint8_t data[65536], out[65536 * 5];
	uint32_t sizes[] = { 1, 44, 4095, 4096, 4097, 65536 };
	uint32_t total = 0;
	uint64_t over = vsock_counters()->rx_over_credit;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = i * 13;
	config_set("smallcopy", "0", (char[64]){ 0 }, 64);
	c = accept_one(l, 1235, 6000);
	for (size_t i = 0; i < 6; i++) {
		peer_pkt(6000, 1235, S, VSOCK_OP_RW, 0, data, sizes[i], PEER_BUF, 0);
		total += sizes[i];
	}
	assert_int_equal(vsock_rx_queued(c), total);
	/* fill up to buf_alloc exactly, then one byte too many is dropped */
	while (total + 65536 <= (256u << 10)) {
		peer_pkt(6000, 1235, S, VSOCK_OP_RW, 0, data, 65536, PEER_BUF, 0);
		total += 65536;
	}
	peer_pkt(6000, 1235, S, VSOCK_OP_RW, 0, data, (256u << 10) - total, PEER_BUF, 0);
	total = 256u << 10;
	peer_pkt(6000, 1235, S, VSOCK_OP_RW, 0, data, 1, PEER_BUF, 0);
	assert_int_equal(vsock_counters()->rx_over_credit, over + 1);
	assert_int_equal(vsock_rx_queued(c), total);

	/* bytes come out in order */
	assert_int_equal(vsock_recv(c, out, 1, NULL), 1);
	assert_int_equal(out[0], data[0]);
	assert_int_equal(vsock_recv(c, out, 44, NULL), 44);
	assert_memory_equal(out, data, 44);
	assert_int_equal(vsock_recv(c, out, 4095 + 4096, NULL), 4095 + 4096);
	assert_memory_equal(out, data, 4095);
	assert_memory_equal(out + 4095, data, 4096);
}

static void test_credit_update_after_drain_lazy_and_eager(void **state)
{
	struct vsock_sock *l = vsock_listen(1235, S, 4), *c;
	static uint8_t data[65536], out[65536];
	char err[64];

	c = accept_one(l, 1235, 6000);
	clear_sent();
	/* lazy: reading 64 KiB of a 256 KiB buffer sends nothing yet */
	peer_pkt(6000, 1235, S, VSOCK_OP_RW, 0, data, 65536, PEER_BUF, 0);
	assert_int_equal(vsock_recv(c, out, sizeof(out), NULL), 65536);
	assert_int_equal(count_sent(VSOCK_OP_CREDIT_UPDATE), 0);
	/* ... until the unseen consumption leaves less than 64 KiB of credit */
	for (int i = 0; i < 3; i++) {
		peer_pkt(6000, 1235, S, VSOCK_OP_RW, 0, data, 65536, PEER_BUF, 0);
		assert_int_equal(vsock_recv(c, out, sizeof(out), NULL), 65536);
	}
	assert_int_equal(count_sent(VSOCK_OP_CREDIT_UPDATE), 1);
	assert_int_equal(last_sent(VSOCK_OP_CREDIT_UPDATE)->hdr.fwd_cnt, 4 * 65536);

	/* eager: every read that frees space sends an update */
	assert_int_equal(config_set("credit", "eager", err, sizeof(err)), 0);
	clear_sent();
	for (int i = 0; i < 3; i++) {
		peer_pkt(6000, 1235, S, VSOCK_OP_RW, 0, data, 100, PEER_BUF, 0);
		assert_int_equal(vsock_recv(c, out, sizeof(out), NULL), 100);
	}
	assert_int_equal(count_sent(VSOCK_OP_CREDIT_UPDATE), 3);
	/* a CREDIT_REQUEST is always answered */
	clear_sent();
	peer(6000, 1235, VSOCK_OP_CREDIT_REQUEST, 0);
	assert_int_equal(last_sent(VSOCK_OP_CREDIT_UPDATE)->hdr.fwd_cnt, 4 * 65536 + 300);
}

static void test_send_credit_exhausted_and_recovered(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	static uint8_t data[100000];

	peer_pkt(7000, 1234, S, VSOCK_OP_REQUEST, 0, NULL, 0, 10000, 0);
	c = vsock_accept(l);
	clear_sent();
	assert_int_equal(vsock_send_space(c), 10000);
	assert_int_equal(vsock_send(c, data, sizeof(data), false), 10000);
	assert_int_equal(last_sent(VSOCK_OP_RW)->hdr.len, 10000);
	assert_int_equal(vsock_send(c, data, 1, false), -EAGAIN);
	assert_int_equal(vsock_send(c, data, 1, false), -EAGAIN);
	assert_int_equal(count_sent(VSOCK_OP_CREDIT_REQUEST), 1); /* asked once */
	/* the peer read 4000 bytes */
	peer_pkt(7000, 1234, S, VSOCK_OP_CREDIT_UPDATE, 0, NULL, 0, 10000, 4000);
	assert_int_equal(vsock_send_space(c), 4000);
	assert_int_equal(vsock_send(c, data, 5000, false), 4000);
	/* a transport with a full queue takes nothing */
	peer_pkt(7000, 1234, S, VSOCK_OP_CREDIT_UPDATE, 0, NULL, 0, 10000, 14000);
	transport_full = true;
	assert_int_equal(vsock_send(c, data, 10, false), -EAGAIN);
	transport_full = false;
	assert_int_equal(vsock_send(c, data, 10, false), 10);
}

static void test_peer_without_buf_alloc(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	uint8_t b = 1;

	/* a peer that never advertises buffer space gets nothing */
	peer_pkt(7001, 1234, S, VSOCK_OP_REQUEST, 0, NULL, 0, 0, 0);
	c = vsock_accept(l);
	assert_int_equal(vsock_send(c, &b, 1, false), -EAGAIN);
	assert_int_equal(count_sent(VSOCK_OP_RW), 0);
	/* and a hostile fwd_cnt beyond what we sent does not create credit */
	peer_pkt(7001, 1234, S, VSOCK_OP_CREDIT_UPDATE, 0, NULL, 0, 0, 0x7fffffff);
	assert_int_equal(vsock_send_space(c), 0);
}

static void test_packets_cap_at_64k(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	static uint8_t data[200000];

	peer_pkt(7002, 1234, S, VSOCK_OP_REQUEST, 0, NULL, 0, 1u << 20, 0);
	c = vsock_accept(l);
	clear_sent();
	assert_int_equal(vsock_send(c, data, sizeof(data), false), sizeof(data));
	assert_int_equal(n_sent, 4);
	assert_int_equal(sent[0]->hdr.len, 65536);
	assert_int_equal(sent[3]->hdr.len, 200000 - 3 * 65536);
}

static void test_shutdown_and_rst_races(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	uint8_t out[16];

	/* peer shuts down while data is queued: EOF only after the data */
	c = accept_one(l, 1234, 8000);
	peer_pkt(8000, 1234, S, VSOCK_OP_RW, 0, "hello", 5, PEER_BUF, 0);
	clear_sent();
	peer(8000, 1234, VSOCK_OP_SHUTDOWN, 3);
	assert_false(vsock_eof(c));
	assert_int_equal(count_sent(VSOCK_OP_RST), 0);
	assert_int_equal(vsock_recv(c, out, sizeof(out), NULL), 5);
	assert_true(vsock_eof(c));
	last_sent(VSOCK_OP_RST); /* both directions done: we finish with RST */
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	assert_int_equal(vsock_error(c), 0);
	vsock_close(c);

	/* RST while connected: reset error, EOF */
	c = accept_one(l, 1234, 8001);
	peer(8001, 1234, VSOCK_OP_RST, 0);
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	assert_int_equal(vsock_error(c), -ECONNRESET);
	assert_true(vsock_eof(c));
	assert_int_equal(vsock_send(c, out, 1, false), -ENOTCONN);
	vsock_close(c);

	/* RST while still in the accept queue: accept hands out a closed socket */
	peer(8002, 1234, VSOCK_OP_REQUEST, 0);
	peer(8002, 1234, VSOCK_OP_RST, 0);
	c = vsock_accept(l);
	assert_non_null(c);
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	vsock_close(c);

	/* we close, the peer never answers: RST after the timeout */
	c = accept_one(l, 1234, 8003);
	vsock_close(c);
	clear_sent();
	fake_now += 6ULL * 1000000000ULL;
	vsock_poll();
	assert_int_equal(last_sent(VSOCK_OP_RST)->hdr.dst_port, 8003);
	/* data after our close is swallowed, not answered */
	c = accept_one(l, 1234, 8004);
	vsock_close(c);
	clear_sent();
	peer_pkt(8004, 1234, S, VSOCK_OP_RW, 0, "x", 1, PEER_BUF, 0);
	assert_int_equal(n_sent, 0);
	peer(8004, 1234, VSOCK_OP_SHUTDOWN, 3);
	last_sent(VSOCK_OP_RST);
	assert_null(vsock_accept(l));
}

static void test_half_close(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	uint8_t out[8];

	c = accept_one(l, 1234, 8100);
	/* the peer stops sending but still reads */
	peer(8100, 1234, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_SEND);
	assert_true(vsock_eof(c));
	assert_int_equal(vsock_send(c, "abc", 3, false), 3);
	/* then it stops reading too: both directions done, we finish with RST */
	peer(8100, 1234, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_RCV);
	last_sent(VSOCK_OP_RST);
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	assert_int_equal(vsock_send(c, "abc", 3, false), -ENOTCONN);
	assert_int_equal(vsock_recv(c, out, sizeof(out), NULL), 0);
	vsock_close(c);

	/* a peer that only stops reading: our sends fail, we still receive */
	c = accept_one(l, 1234, 8102);
	peer(8102, 1234, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_RCV);
	assert_int_equal(vsock_send(c, "abc", 3, false), -EPIPE);
	peer_pkt(8102, 1234, S, VSOCK_OP_RW, 0, "xy", 2, PEER_BUF, 0);
	assert_int_equal(vsock_recv(c, out, sizeof(out), NULL), 2);
	assert_false(vsock_eof(c));
	/* our own shutdown is announced */
	c = accept_one(l, 1234, 8101);
	assert_int_equal(vsock_shutdown(c, VSOCK_SHUTDOWN_SEND), 0);
	assert_int_equal(last_sent(VSOCK_OP_SHUTDOWN)->hdr.flags, VSOCK_SHUTDOWN_SEND);
	assert_int_equal(vsock_send(c, "abc", 3, false), -EPIPE);
}

static void test_connect(void **state)
{
	struct vsock_sock *c;
	struct vsock_pkt *req;

	c = vsock_connect(HOST_CID, 4000, S);
	req = last_sent(VSOCK_OP_REQUEST);
	assert_true(req->hdr.src_port >= 49152);
	assert_int_equal(vsock_state(c), VSOCK_CONNECTING);
	peer(4000, req->hdr.src_port, VSOCK_OP_RESPONSE, 0);
	assert_int_equal(vsock_state(c), VSOCK_CONNECTED);
	vsock_close(c);
	peer(4000, req->hdr.src_port, VSOCK_OP_RST, 0);

	/* refused */
	c = vsock_connect(HOST_CID, 4001, S);
	peer(4001, last_sent(VSOCK_OP_REQUEST)->hdr.src_port, VSOCK_OP_RST, 0);
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	assert_int_equal(vsock_error(c), -ECONNREFUSED);
	vsock_close(c);

	/* no answer */
	c = vsock_connect(HOST_CID, 4002, S);
	fake_now += 11ULL * 1000000000ULL;
	vsock_poll();
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	assert_int_equal(vsock_error(c), -ETIMEDOUT);
	last_sent(VSOCK_OP_RST);
	vsock_close(c);
}

static void test_seqpacket_boundaries(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, Q, 4), *c;
	static uint8_t msg[70000], out[70000];
	bool eor;

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = i * 7;
	peer_pkt(9000, 1234, Q, VSOCK_OP_REQUEST, 0, NULL, 0, PEER_BUF, 0);
	c = vsock_accept(l);
	/* a message in two packets is read only once it is whole */
	peer_pkt(9000, 1234, Q, VSOCK_OP_RW, 0, msg, 40000, PEER_BUF, 0);
	assert_int_equal(vsock_recv(c, out, sizeof(out), &eor), 0);
	peer_pkt(9000, 1234, Q, VSOCK_OP_RW, VSOCK_SEQ_EOM | VSOCK_SEQ_EOR, msg + 40000, 30000,
		 PEER_BUF, 0);
	peer_pkt(9000, 1234, Q, VSOCK_OP_RW, VSOCK_SEQ_EOM, "second", 6, PEER_BUF, 0);
	assert_int_equal(vsock_recv(c, out, sizeof(out), &eor), 70000);
	assert_true(eor);
	assert_memory_equal(out, msg, 70000);
	/* a reader with a short buffer gets the start, the rest is dropped */
	assert_int_equal(vsock_recv(c, out, 3, &eor), 3);
	assert_memory_equal(out, "sec", 3);
	assert_int_equal(vsock_recv(c, out, sizeof(out), &eor), 0);
	/* an empty message is a message */
	peer_pkt(9000, 1234, Q, VSOCK_OP_RW, VSOCK_SEQ_EOM, NULL, 0, PEER_BUF, 0);
	eor = false;
	assert_int_equal(vsock_recv(c, out, sizeof(out), &eor), 0);
	assert_true(eor);

	/* sending: a whole message or nothing; EOM on the last packet only */
	clear_sent();
	assert_int_equal(vsock_send(c, msg, 70000, true), 70000);
	assert_int_equal(n_sent, 2);
	assert_int_equal(sent[0]->hdr.flags, 0);
	assert_int_equal(sent[1]->hdr.flags, VSOCK_SEQ_EOM | VSOCK_SEQ_EOR);
	assert_int_equal(vsock_send(c, msg, PEER_BUF + 1, true), -EMSGSIZE);
	assert_int_equal(vsock_send(c, msg, PEER_BUF - 70000 + 1, true), -EAGAIN);
}

static void test_smallcopy(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	uint8_t out[64];
	uint64_t before = vsock_counters()->rx_smallcopy;
	uint64_t live;

	c = accept_one(l, 1234, 9100);
	peer_pkt(9100, 1234, S, VSOCK_OP_RW, 0, "abc", 3, PEER_BUF, 0);
	live = vsock_pkt_live();
	for (int i = 0; i < 10; i++)
		peer_pkt(9100, 1234, S, VSOCK_OP_RW, 0, "de", 2, PEER_BUF, 0);
	assert_int_equal(vsock_counters()->rx_smallcopy, before + 10);
	assert_int_equal(vsock_pkt_live(), live); /* no buffer held per packet */
	assert_int_equal(vsock_recv(c, out, sizeof(out), NULL), 23);
	assert_memory_equal(out, "abcdededededededededede", 23);
}

static void test_transport_reset(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;

	c = accept_one(l, 1234, 9200);
	clear_sent();
	vsock_transport_reset();
	assert_int_equal(n_sent, 0); /* the peer forgot us: no packets */
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	assert_int_equal(vsock_state(l), VSOCK_LISTEN);
	vsock_close(c);
	assert_non_null(accept_one(l, 1234, 9200));
}

static void test_wrong_type_on_connection(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	uint64_t bad = vsock_counters()->rx_bad_type;

	c = accept_one(l, 1234, 9300);
	clear_sent();
	peer_pkt(9300, 1234, Q, VSOCK_OP_RW, 0, "x", 1, PEER_BUF, 0);
	assert_int_equal(vsock_counters()->rx_bad_type, bad + 1);
	assert_int_equal(vsock_rx_queued(c), 0);
	/* answered with an RST to the sender, typed like its packet */
	assert_int_equal(n_sent, 1);
	assert_int_equal(last_sent(VSOCK_OP_RST)->hdr.dst_port, 9300);
	assert_int_equal(sent[0]->hdr.src_port, 1234);
	assert_int_equal(sent[0]->hdr.dst_cid, HOST_CID);
	assert_int_equal(sent[0]->hdr.type, Q);
}

static void test_header_checks(void **state)
{
	struct virtio_vsock_hdr h = {
		.src_cid = 2, .dst_cid = 3, .len = 100, .type = S, .op = VSOCK_OP_RW
	};

	assert_int_equal(vsock_hdr_check(&h, 144, 3), VSOCK_HDR_OK);
	assert_int_equal(vsock_hdr_check(&h, 43, 3), VSOCK_HDR_SHORT);
	assert_int_equal(vsock_hdr_check(&h, 143, 3), VSOCK_HDR_LEN_BAD);
	assert_int_equal(vsock_hdr_check(&h, 144, 4), VSOCK_HDR_CID_BAD);
	h.len = 0xffffffff; /* must not wrap */
	assert_int_equal(vsock_hdr_check(&h, 44, 3), VSOCK_HDR_LEN_BAD);
	h.len = 0;
	h.type = 3;
	assert_int_equal(vsock_hdr_check(&h, 44, 3), VSOCK_HDR_TYPE_BAD);
	h.type = Q;
	h.op = 0;
	assert_int_equal(vsock_hdr_check(&h, 44, 3), VSOCK_HDR_OP_BAD);
	h.op = 8;
	assert_int_equal(vsock_hdr_check(&h, 44, 3), VSOCK_HDR_OP_BAD);
	h.op = VSOCK_OP_CREDIT_REQUEST;
	assert_int_equal(vsock_hdr_check(&h, 44, 3), VSOCK_HDR_OK);
}

/*
 * Credit that arrives on an RW packet (every packet carries it, 5.10.6.3)
 * ends the stall as well as a CREDIT_UPDATE does: the next stall must ask
 * again. Before the fix the flag stayed set and no second request went.
 */
static void test_credit_request_after_rw_credit(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	static uint8_t data[20000];

	peer_pkt(7100, 1234, S, VSOCK_OP_REQUEST, 0, NULL, 0, 10000, 0);
	c = vsock_accept(l);
	clear_sent();
	assert_int_equal(vsock_send(c, data, sizeof(data), false), 10000);
	assert_int_equal(vsock_send(c, data, 1, false), -EAGAIN);
	assert_int_equal(count_sent(VSOCK_OP_CREDIT_REQUEST), 1);
	/* the peer read everything and says so on a data packet */
	peer_pkt(7100, 1234, S, VSOCK_OP_RW, 0, "x", 1, 10000, 10000);
	assert_int_equal(vsock_send_space(c), 10000);
	assert_int_equal(vsock_send(c, data, sizeof(data), false), 10000);
	assert_int_equal(vsock_send(c, data, 1, false), -EAGAIN);
	assert_int_equal(count_sent(VSOCK_OP_CREDIT_REQUEST), 2);
}

/* A packet from @src_cid to @dst_cid, else like peer(). */
static void addressed_pkt(uint64_t src_cid, uint64_t dst_cid, uint32_t sport, uint32_t dport,
			  uint16_t op)
{
	struct vsock_pkt *pkt = vsock_pkt_alloc(64);

	pkt->hdr.src_cid = src_cid;
	pkt->hdr.dst_cid = dst_cid;
	pkt->hdr.src_port = sport;
	pkt->hdr.dst_port = dport;
	pkt->hdr.type = S;
	pkt->hdr.op = op;
	pkt->hdr.buf_alloc = PEER_BUF;
	vsock_pkt_free(vsock_rx(pkt));
}

/*
 * The socket layer checks addresses for every transport: a packet not for
 * our CID, or not from the host (the only peer a guest has, 5.10), is
 * dropped and counted, never answered, and creates no connection; a live
 * connection does not see it.
 */
static void test_address_checks(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	uint64_t bad_dst = vsock_counters()->rx_bad_dst_cid;
	uint64_t bad_src = vsock_counters()->rx_bad_src_cid;

	clear_sent();
	addressed_pkt(7, GUEST_CID, 5000, 1234, VSOCK_OP_REQUEST);
	assert_null(vsock_accept(l));
	assert_int_equal(n_sent, 0);
	assert_int_equal(vsock_counters()->rx_bad_src_cid, bad_src + 1);
	addressed_pkt(HOST_CID, 9, 5001, 1234, VSOCK_OP_REQUEST);
	assert_null(vsock_accept(l));
	assert_int_equal(n_sent, 0);
	assert_int_equal(vsock_counters()->rx_bad_dst_cid, bad_dst + 1);
	/* unknown ports too: no RST to a CID that is not our peer */
	addressed_pkt(7, GUEST_CID, 5002, 4321, VSOCK_OP_RW);
	assert_int_equal(n_sent, 0);
	assert_int_equal(vsock_counters()->rx_bad_src_cid, bad_src + 2);
	/* an RST for a live connection from the wrong CID changes nothing */
	c = accept_one(l, 1234, 5003);
	assert_non_null(c);
	clear_sent();
	addressed_pkt(7, GUEST_CID, 5003, 1234, VSOCK_OP_RST);
	addressed_pkt(HOST_CID, 4, 5003, 1234, VSOCK_OP_RST);
	assert_int_equal(vsock_state(c), VSOCK_CONNECTED);
	assert_int_equal(n_sent, 0);
	assert_int_equal(vsock_counters()->rx_bad_src_cid, bad_src + 3);
	assert_int_equal(vsock_counters()->rx_bad_dst_cid, bad_dst + 2);
}

/*
 * A transport that drops packets not for its CID itself (dst_cid_checked)
 * is trusted with that: the socket layer asks no local_cid() per packet
 * and counts no rx_bad_dst_cid. The source is still checked here.
 */
static void test_dst_cid_checked_by_transport(void **state)
{
	static struct vsock_transport checked;
	uint64_t bad_src = vsock_counters()->rx_bad_src_cid;
	struct vsock_sock *l, *c;
	const uint8_t *data;
	unsigned int asked;

	checked = fake;
	checked.dst_cid_checked = true;
	vsock_init(&checked);
	l = vsock_listen(1234, S, 4);
	c = accept_one(l, 1234, 5000);
	assert_non_null(c);
	asked = local_cid_asked;
	peer_pkt(5000, 1234, S, VSOCK_OP_RW, 0, "ab", 2, PEER_BUF, 0);
	assert_int_equal(vsock_peek(c, &data, NULL), 2);
	assert_int_equal(local_cid_asked, asked);
	addressed_pkt(7, GUEST_CID, 5000, 1234, VSOCK_OP_RST);
	assert_int_equal(vsock_counters()->rx_bad_src_cid, bad_src + 1);
	assert_int_equal(vsock_state(c), VSOCK_CONNECTED);
	/* the fake transport checks nothing: the socket layer asks again */
	vsock_init(&fake);
	peer_pkt(5000, 1234, S, VSOCK_OP_RW, 0, "cd", 2, PEER_BUF, 0);
	assert_true(local_cid_asked > asked);
}

/*
 * A send that went straight to the device (send_pkt said so) left the
 * transport's queue empty, so the next send does not ask tx_full(); one
 * after a queued send does, and a full transport refuses data then.
 */
static void test_tx_full_asked_after_queued_send(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	unsigned int asked;

	c = accept_one(l, 1234, 5000); /* its RESPONSE was "queued" */
	assert_non_null(c);
	transport_direct = true;
	asked = tx_full_asked;
	assert_int_equal(vsock_send(c, "a", 1, false), 1);
	assert_int_equal(tx_full_asked, asked + 1);
	assert_int_equal(vsock_send(c, "b", 1, false), 1);
	assert_int_equal(tx_full_asked, asked + 1); /* not asked: "a" went direct */
	transport_direct = false;
	assert_int_equal(vsock_send(c, "c", 1, false), 1);
	assert_int_equal(tx_full_asked, asked + 1); /* "b" went direct too */
	transport_full = true;
	assert_int_equal(vsock_send(c, "d", 1, false), -EAGAIN); /* "c" was queued */
	assert_int_equal(tx_full_asked, asked + 2);
	transport_full = false;
}

/* vsock_done: CLOSED, or the peer's EOF with everything read. */
static void test_done(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c, *d;

	c = accept_one(l, 1234, 5000);
	d = accept_one(l, 1234, 5001);
	assert_false(vsock_done(c));
	peer_pkt(5000, 1234, S, VSOCK_OP_RW, 0, "ab", 2, PEER_BUF, 0);
	peer(5000, 1234, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_SEND);
	assert_false(vsock_done(c)); /* still two bytes to read */
	vsock_consume(c, 2);
	assert_int_equal(vsock_state(c), VSOCK_CONNECTED);
	assert_true(vsock_done(c));
	assert_false(vsock_done(d));
	peer_pkt(5001, 1234, S, VSOCK_OP_RW, 0, "ab", 2, PEER_BUF, 0);
	peer(5001, 1234, VSOCK_OP_RST, 0);
	assert_int_equal(vsock_state(d), VSOCK_CLOSED);
	assert_true(vsock_done(d)); /* closed, read or not */
}

/*
 * SEQPACKET truncation, one rule (docs/console.md, vsock): a read returns
 * the start of the next message, as much as fits, always with end of
 * record; the rest of that message is discarded. Every buffer length
 * from 1 to past the end of a message of three packets (100, 200, 300
 * bytes), so every packet boundary and every point inside a packet. Before
 * the fix a buffer ending exactly at a packet boundary came back without
 * end of record and the rest arrived as a second "message".
 */
static void test_seqpacket_truncation_every_boundary(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, Q, 4), *c;
	static uint8_t msg[600], out[700];
	bool eor;

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 13 + 1);
	peer_pkt(9400, 1234, Q, VSOCK_OP_REQUEST, 0, NULL, 0, PEER_BUF, 0);
	c = vsock_accept(l);
	assert_non_null(c);
	for (size_t len = 1; len <= sizeof(msg) + 1; len++) {
		size_t want = len < sizeof(msg) ? len : sizeof(msg);

		peer_pkt(9400, 1234, Q, VSOCK_OP_RW, 0, msg, 100, PEER_BUF, 0);
		peer_pkt(9400, 1234, Q, VSOCK_OP_RW, 0, msg + 100, 200, PEER_BUF, 0);
		peer_pkt(9400, 1234, Q, VSOCK_OP_RW, VSOCK_SEQ_EOM, msg + 300, 300, PEER_BUF, 0);
		peer_pkt(9400, 1234, Q, VSOCK_OP_RW, VSOCK_SEQ_EOM, "next", 4, PEER_BUF, 0);
		eor = false;
		assert_int_equal(vsock_recv(c, out, len, &eor), want);
		assert_true(eor);
		assert_memory_equal(out, msg, want);
		eor = false;
		assert_int_equal(vsock_recv(c, out, sizeof(out), &eor), 4);
		assert_true(eor);
		assert_memory_equal(out, "next", 4);
		assert_int_equal(vsock_rx_queued(c), 0);
		assert_int_equal(vsock_recv(c, out, sizeof(out), &eor), 0);
	}
}

/*
 * A REQUEST refused because the socket table is full is not a full
 * backlog: its own counter (before, both went to backlog_full).
 */
static void test_request_refused_table_full(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4);
	uint64_t full = vsock_counters()->backlog_full;
	uint64_t nomem = vsock_counters()->request_no_socket;
	unsigned int n = 0;

	assert_non_null(l);
	while (vsock_listen(20000 + n, S, 1))
		n++;
	assert_true(n > 100);
	clear_sent();
	peer(5000, 1234, VSOCK_OP_REQUEST, 0);
	last_sent(VSOCK_OP_RST);
	assert_null(vsock_accept(l));
	assert_int_equal(vsock_counters()->request_no_socket, nomem + 1);
	assert_int_equal(vsock_counters()->backlog_full, full);
}

/*
 * `vsock trim` (host/soak): every pooled buffer goes back to the heap and
 * only those; live ones stay usable (under AddressSanitizer the pool is off
 * and a freed live buffer would be a use after free below).
 */
static void test_pool_trim(void **state)
{
	struct vsock_pkt *p[4] = { vsock_pkt_alloc(64), vsock_pkt_alloc(64), vsock_pkt_alloc(64),
				   vsock_pkt_alloc(4096) };
	struct vsock_pkt *keep = vsock_pkt_alloc(100);
	uint64_t live = vsock_pkt_live(), pooled;

	vsock_pkt_trim();
	for (int i = 0; i < 4; i++)
		vsock_pkt_free(p[i]);
	pooled = vsock_pkt_pooled();
	assert_true(pooled <= 4);
	assert_int_equal(vsock_pkt_live(), live - 4);
	assert_int_equal(vsock_pkt_trim(), pooled);
	assert_int_equal(vsock_pkt_pooled(), 0);
	assert_int_equal(vsock_pkt_trim(), 0);
	assert_int_equal(vsock_pkt_live(), live - 4);
	memset(keep->data, 7, 100); /* still ours */
	vsock_pkt_free(keep);
	p[0] = vsock_pkt_alloc(64);
	assert_non_null(p[0]);
	vsock_pkt_free(p[0]);
}

/*
 * vsock_send_rx_head: the received buffer itself goes back, its header
 * rewritten for the way back, its payload read (credit moves), nothing
 * allocated; a partly read packet or one beyond the peer's credit is left
 * for the copying path.
 */
static void test_send_rx_head_in_place(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	struct vsock_pkt *rx, *tx;
	const uint8_t *data;
	uint64_t live;
	char err[80];

	/* two packets queued as they came, not merged */
	assert_int_equal(config_set("smallcopy", "0", err, sizeof(err)), 0);
	c = accept_one(l, 1234, 9200);
	clear_sent();
	assert_int_equal(vsock_send_rx_head(c), -ENODATA); /* nothing queued */
	peer_pkt(9200, 1234, S, VSOCK_OP_RW, 0, "hello", 5, PEER_BUF, 0);
	peer_pkt(9200, 1234, S, VSOCK_OP_RW, 0, "world!", 6, PEER_BUF, 0);
	assert_int_equal(vsock_peek(c, &data, NULL), 5);
	rx = (struct vsock_pkt *)(data - offsetof(struct vsock_pkt, data));
	live = vsock_pkt_live();
	assert_int_equal(vsock_send_rx_head(c), 5);
	assert_int_equal(vsock_pkt_live(), live); /* the same buffer, no new one */
	tx = last_sent(VSOCK_OP_RW);
	assert_ptr_equal(tx, rx);
	assert_int_equal(tx->hdr.src_cid, GUEST_CID);
	assert_int_equal(tx->hdr.dst_cid, HOST_CID);
	assert_int_equal(tx->hdr.src_port, 1234);
	assert_int_equal(tx->hdr.dst_port, 9200);
	assert_int_equal(tx->hdr.len, 5);
	assert_int_equal(tx->hdr.fwd_cnt, 5); /* the reply carries the freed credit */
	assert_null(tx->ext);
	assert_memory_equal(vsock_pkt_payload(tx), "hello", 5);
	assert_int_equal(vsock_rx_queued(c), 6);

	/* partly read: not this way */
	vsock_consume(c, 1);
	assert_int_equal(vsock_send_rx_head(c), 0);
	vsock_consume(c, 5);
	/* beyond the peer's credit: not this way, and nothing sent */
	peer_pkt(9200, 1234, S, VSOCK_OP_RW, 3, "abcdefgh", 8, 8, 0);
	assert_int_equal(vsock_send_rx_head(c), 0);
	assert_int_equal(n_sent, 1);
	/* credit for it: it goes, the peer's stray flags not echoed */
	peer_pkt(9200, 1234, S, VSOCK_OP_CREDIT_UPDATE, 0, NULL, 0, PEER_BUF, 0);
	assert_int_equal(vsock_send_rx_head(c), 8);
	assert_int_equal(vsock_rx_queued(c), 0);
	tx = last_sent(VSOCK_OP_RW);
	assert_int_equal(tx->hdr.op, VSOCK_OP_RW);
	assert_int_equal(tx->hdr.type, S);
	assert_int_equal(tx->hdr.len, 8);
	assert_int_equal(tx->hdr.flags, 0);
	assert_int_equal(tx->hdr.src_port, 1234);
	assert_int_equal(tx->hdr.dst_port, 9200);
	assert_int_equal(tx->hdr.buf_alloc, config_get(&cfg_vsock_buf));
	assert_int_equal(tx->hdr.fwd_cnt, 19);
	assert_int_equal(vsock_send_rx_head(c), -ENODATA);
	/* the transport full: -EAGAIN */
	peer_pkt(9200, 1234, S, VSOCK_OP_RW, 0, "x", 1, PEER_BUF, 0);
	transport_full = true;
	assert_int_equal(vsock_send_rx_head(c), -EAGAIN);
	transport_full = false;
}

/*
 * The connection of the last packet is remembered; once it is gone from
 * the table, a packet for its address finds no socket (RST), and a new
 * connection from the same peer port gets the next packets.
 */
static void test_last_connection_forgotten(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *a, *b;
	uint64_t no_sock = vsock_counters()->rx_no_socket;
	const uint8_t *data;

	a = accept_one(l, 1234, 9300);
	b = accept_one(l, 1234, 9301);
	peer_pkt(9300, 1234, S, VSOCK_OP_RW, 0, "a", 1, PEER_BUF, 0);
	peer_pkt(9301, 1234, S, VSOCK_OP_RW, 0, "b", 1, PEER_BUF, 0);
	peer_pkt(9300, 1234, S, VSOCK_OP_RW, 0, "c", 1, PEER_BUF, 0);
	assert_int_equal(vsock_rx_queued(a), 2);
	assert_int_equal(vsock_rx_queued(b), 1);
	/* a is reset by the peer: its address is free */
	peer(9300, 1234, VSOCK_OP_RST, 0);
	assert_int_equal(vsock_state(a), VSOCK_CLOSED);
	clear_sent();
	peer_pkt(9300, 1234, S, VSOCK_OP_RW, 0, "d", 1, PEER_BUF, 0);
	assert_int_equal(vsock_counters()->rx_no_socket, no_sock + 1);
	last_sent(VSOCK_OP_RST);
	vsock_close(a);
	/* the same peer port connects again: a new socket gets its data */
	a = accept_one(l, 1234, 9300);
	peer_pkt(9300, 1234, S, VSOCK_OP_RW, 0, "e", 1, PEER_BUF, 0);
	assert_int_equal(vsock_peek(a, &data, NULL), 1);
	assert_int_equal(data[0], 'e');
	assert_int_equal(vsock_rx_queued(b), 1);
}

/*
 * Credit bounds queued payload, not buffers: once a socket's queued
 * buffers pass its buf_alloc, a payload far smaller than its buffer moves
 * into a buffer of its own size; every byte still arrives in order.
 */
static void test_rx_compact_small_payloads(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	uint64_t before = vsock_counters()->rx_compacted, base;
	static uint8_t in[200], out[200];
	const unsigned int total = 1000; /* 200 KB payload in 4 KiB buffers */
	char err[80];

	assert_int_equal(config_set("smallcopy", "0", err, sizeof(err)), 0);
	c = accept_one(l, 1234, 9400);
	base = vsock_pkt_live_bytes();
	for (unsigned int i = 0; i < total; i++) {
		memset(in, (int)i, sizeof(in));
		peer_pkt(9400, 1234, S, VSOCK_OP_RW, 0, in, sizeof(in), PEER_BUF, 0);
	}
	/* 64 buffers of 4096 fill buf_alloc (256 KiB); the rest were moved */
	assert_int_equal(vsock_counters()->rx_compacted, before + total - 64);
	assert_true(vsock_pkt_live_bytes() - base <= 64 * 4096 + (total - 64) * 256);
	for (unsigned int i = 0; i < total; i++) {
		memset(in, (int)i, sizeof(in));
		assert_int_equal(vsock_recv(c, out, sizeof(out), NULL), sizeof(out));
		assert_memory_equal(out, in, sizeof(in));
	}
	assert_int_equal(vsock_rx_queued(c), 0);
	/* past buf_alloc again, but a payload over a quarter of its buffer stays */
	before = vsock_counters()->rx_compacted;
	for (unsigned int i = 0; i < 70; i++) {
		static uint8_t big[1100];

		peer_pkt(9400, 1234, S, VSOCK_OP_RW, 0, big, sizeof(big), PEER_BUF, 0);
	}
	assert_int_equal(vsock_counters()->rx_compacted, before);
}

/* ---- readiness (vsock_set_owner, vsock_take_ready) ---- */

/* Two owners, each with its poll context in the loop (the test runs no pass of it). */
static unsigned int owner_poll(struct poll_ctx *ctx, unsigned int budget)
{
	return 0;
}

static struct poll_ctx ctx_a = { .name = "a", .poll = owner_poll },
		       ctx_b = { .name = "b", .poll = owner_poll };
static struct vsock_owner owner_a = { .ctx = &ctx_a }, owner_b = { .ctx = &ctx_b };
#define OWNER (&owner_a)

static void owners_added(void)
{
	if (!ctx_a.cpu)
		assert_int_equal(poll_ctx_add(&ctx_a), 0);
	if (!ctx_b.cpu)
		assert_int_equal(poll_ctx_add(&ctx_b), 0);
}

/* Nothing is ready for either owner, and a pass now schedules neither. */
static void assert_none_ready(void)
{
	struct vsock_pass p;

	stub_unschedule_all();
	vsock_poll_pass(&p);
	assert_int_equal(vsock_ready_count(&owner_a), 0);
	assert_int_equal(vsock_ready_count(&owner_b), 0);
	assert_false(stub_scheduled(&ctx_a));
	assert_false(stub_scheduled(&ctx_b));
}

/*
 * A listener with a child is ready; a tagged connection is ready once per
 * change however many packets made it, then not until the next one. Each
 * time its owner's context is scheduled, and nothing else: the pass has
 * nothing new to say.
 */
static void test_ready_once_per_change(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	struct vsock_pass p;
	void *ctx = NULL;
	int owner;

	vsock_poll_pass(&p); /* the pass ran: the next news schedules it again */
	stub_unschedule_all();
	vsock_set_owner(l, OWNER, l);
	assert_null(vsock_take_ready(OWNER, NULL));
	peer(5000, 1234, VSOCK_OP_REQUEST, 0);
	assert_int_equal(this_cpu()->scheduled, ctx_a.bit); /* the owner alone */
	assert_true(vsock_poll_pass(&p));
	assert_int_equal(p.accept_queued, 1);
	assert_int_equal(vsock_ready_count(OWNER), 1);
	assert_ptr_equal(vsock_take_ready(OWNER, NULL), l);
	assert_null(vsock_take_ready(OWNER, NULL));
	c = vsock_accept(l);
	vsock_set_owner(c, OWNER, &owner);
	assert_int_equal(vsock_ready_count(OWNER), 0);

	stub_unschedule_all();
	peer_pkt(5000, 1234, S, VSOCK_OP_RW, 0, "ab", 2, PEER_BUF, 0);
	assert_int_equal(this_cpu()->scheduled, ctx_a.bit); /* the owner alone */
	peer_pkt(5000, 1234, S, VSOCK_OP_RW, 0, "cd", 2, PEER_BUF, 0);
	assert_int_equal(vsock_ready_count(OWNER), 1);
	assert_null(vsock_take_ready(&owner_b, NULL)); /* another owner has nothing */
	assert_false(stub_scheduled(&ctx_b));
	assert_ptr_equal(vsock_take_ready(OWNER, &ctx), c);
	assert_ptr_equal(ctx, &owner); /* its owner pointer comes with it */
	assert_ptr_equal(vsock_owner(c), &owner);
	assert_null(vsock_take_ready(OWNER, NULL));
	assert_none_ready();
	assert_int_equal(vsock_rx_queued(c), 4);

	/* EOF readies it too, and an owner may queue it again itself */
	peer(5000, 1234, VSOCK_OP_SHUTDOWN, VSOCK_SHUTDOWN_SEND);
	assert_true(stub_scheduled(&ctx_a));
	assert_ptr_equal(vsock_take_ready(OWNER, NULL), c);
	stub_unschedule_all();
	vsock_set_ready(c);
	vsock_set_ready(c);
	assert_int_equal(vsock_ready_count(OWNER), 1);
	assert_true(stub_scheduled(&ctx_a));
}

/* A sender short of credit or TX room is ready when either returns. */
static void test_ready_starved_sender(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c;
	static uint8_t data[200];
	struct vsock_pass p;

	peer_pkt(7000, 1234, S, VSOCK_OP_REQUEST, 0, NULL, 0, 100, 0);
	c = vsock_accept(l);
	vsock_set_owner(c, OWNER, c);
	assert_int_equal(vsock_send(c, data, sizeof(data), false), 100);
	assert_int_equal(vsock_send(c, data, 1, false), -EAGAIN);
	assert_null(vsock_take_ready(OWNER, NULL));
	stub_unschedule_all();
	peer_pkt(7000, 1234, S, VSOCK_OP_CREDIT_UPDATE, 0, NULL, 0, 100, 100);
	assert_true(stub_scheduled(&ctx_a));
	assert_ptr_equal(vsock_take_ready(OWNER, NULL), c);

	/* no TX room: the pass is told, and looks every pass while it waits */
	vsock_poll_pass(&p);
	stub_unschedule_all();
	transport_full = true;
	assert_int_equal(vsock_send(c, data, 1, false), -EAGAIN);
	assert_int_equal(vsock_send_space(c), 0);
	assert_true(stub_scheduled(&fake_pass));
	assert_true(vsock_poll_pass(&p));
	assert_true(p.tx_wait);
	assert_none_ready(); /* still full: not yet */
	transport_full = false;
	assert_true(vsock_poll_pass(&p));
	assert_true(stub_scheduled(&ctx_a));
	assert_false(p.tx_wait);
	assert_ptr_equal(vsock_take_ready(OWNER, NULL), c);
	assert_null(vsock_take_ready(OWNER, NULL));
	assert_int_equal(vsock_send(c, data, 1, false), 1);
}

/*
 * Closed or re-tagged while on a list: off it for good, and the others
 * on the same list stay in order.
 */
static void test_ready_close_while_listed(void **state)
{
	struct vsock_sock *l = vsock_listen(1234, S, 4), *c[3];

	for (int i = 0; i < 3; i++) {
		c[i] = accept_one(l, 1234, 6000 + i);
		vsock_set_owner(c[i], OWNER, c[i]);
		peer_pkt(6000 + i, 1234, S, VSOCK_OP_RW, 0, "x", 1, PEER_BUF, 0);
	}
	assert_int_equal(vsock_ready_count(OWNER), 3);
	vsock_close(c[1]);
	assert_int_equal(vsock_ready_count(OWNER), 2);
	/* closing: the peer's packets no longer ready it */
	stub_unschedule_all();
	peer(6001, 1234, VSOCK_OP_SHUTDOWN, 3);
	assert_int_equal(vsock_ready_count(OWNER), 2);
	assert_false(stub_scheduled(&ctx_a));
	vsock_set_owner(c[0], &owner_b, c[0]); /* a new owner: off the old list */
	assert_ptr_equal(vsock_take_ready(OWNER, NULL), c[2]);
	assert_null(vsock_take_ready(OWNER, NULL));
	vsock_close(c[2]);
	peer(6002, 1234, VSOCK_OP_RST, 0); /* frees it */
	assert_none_ready();

	/* a socket freed while waiting for TX room is never handed out */
	transport_full = true;
	assert_int_equal(vsock_send(c[0], "y", 1, false), -EAGAIN);
	vsock_close(c[0]);
	transport_full = false;
	assert_none_ready();
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_listen_accept_second_after_close),
		T(test_backlog_full_and_no_listener),
		T(test_send_static_points_at_data),
		T(test_never_answer_rst),
		T(test_receive_boundaries_and_over_credit),
		T(test_credit_update_after_drain_lazy_and_eager),
		T(test_send_credit_exhausted_and_recovered),
		T(test_peer_without_buf_alloc),
		T(test_packets_cap_at_64k),
		T(test_shutdown_and_rst_races),
		T(test_half_close),
		T(test_connect),
		T(test_seqpacket_boundaries),
		T(test_smallcopy),
		T(test_transport_reset),
		T(test_wrong_type_on_connection),
		T(test_header_checks),
		T(test_credit_request_after_rw_credit),
		T(test_address_checks),
		T(test_dst_cid_checked_by_transport),
		T(test_tx_full_asked_after_queued_send),
		T(test_done),
		T(test_seqpacket_truncation_every_boundary),
		T(test_request_refused_table_full),
		T(test_pool_trim),
		T(test_send_rx_head_in_place),
		T(test_last_connection_forgotten),
		T(test_rx_compact_small_payloads),
		T(test_ready_once_per_change),
		T(test_ready_starved_sender),
		T(test_ready_close_while_listed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
