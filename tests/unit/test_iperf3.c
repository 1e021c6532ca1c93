// SPDX-License-Identifier: MIT
/*
 * The iperf3 server's state machine (app/iperf3.c) over the real socket
 * layer, a fake transport playing the host: the whole control protocol of
 * one forward test, the drain to the client's count, a stalled client's
 * timeout, a stranger's denial, and --bidir streams taken in the order
 * they connected. The real poll loop runs it: a pass runs the server when
 * the socket layer scheduled it (a socket of its changed) or its timer
 * (poll_schedule_at) came.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "app/iperf3.c"
#include "fake_transport.h"
#include "host_peer.h"
#include "stub_kernel.h"

#define CTL_PORT 7000
#define STREAM_PORT 7001
#define OTHER_PORT 7002

static uint64_t fake_now = 1000;
static uint8_t fake_pattern[VSOCK_PATTERN_LEN];

uint64_t now_ns(void)
{
	return fake_now;
}

const uint8_t *vsock_pattern(void)
{
	return fake_pattern;
}

void stats_register(const char *name, void (*print)(void), void (*json)(struct json_writer *w))
{
}

static void host_pkt(uint32_t port, uint16_t op, const void *data, uint32_t len)
{
	host_pkt_deliver(&(struct host_pkt){ .src_port = port,
					     .dst_port = 5201,
					     .op = op,
					     .data = data,
					     .len = len,
					     .buf_alloc = 1u << 20 });
}

static void host_send(uint32_t port, const void *data, uint32_t len)
{
	host_pkt(port, VSOCK_OP_RW, data, len);
}

static void host_msg(uint32_t port, const char *json)
{
	uint8_t buf[1024];
	uint32_t len = strlen(json);

	assert_true(len + 4 <= sizeof(buf));
	put_be32(buf, len);
	memcpy(buf + 4, json, len);
	host_send(port, buf, len + 4);
}

/* Everything the guest sent to host @port since the last clear, in order. */
static size_t received(uint32_t port, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (unsigned int i = 0; i < n_sent; i++) {
		struct vsock_pkt *p = sent[i];

		if (p->hdr.op != VSOCK_OP_RW || p->hdr.dst_port != port)
			continue;
		assert_true(n + p->hdr.len <= cap);
		memcpy(out + n, p->data, p->hdr.len);
		n += p->hdr.len;
	}
	return n;
}

/* Bytes of data sent to host port @port since clear_sent(). */
static size_t rw_bytes(uint32_t port)
{
	size_t n = 0;

	for (unsigned int i = 0; i < n_sent; i++)
		if (sent[i]->hdr.op == VSOCK_OP_RW && sent[i]->hdr.dst_port == port)
			n += sent[i]->hdr.len;
	return n;
}

static void poll_and_expect_states(const int8_t *states, size_t n)
{
	uint8_t got[64];

	clear_sent();
	poll_once();
	assert_int_equal(received(CTL_PORT, got, sizeof(got)), n);
	assert_memory_equal(got, states, n);
}

static const char cookie[COOKIE_LEN] = "abcdefghijklmnopqrstuvwxyz0123456789";

static int setup(void **state)
{
	config_reset();
	vsock_init(&fake);
	memset(&srv, 0, sizeof(srv));
	fake_now = 1000;
	iperf3_init();
	return 0;
}

static int teardown(void **state)
{
	clear_sent();
	close_pending();
	if (srv.ctl)
		test_finish(false);
	if (srv.listener)
		vsock_close(srv.listener);
	while (vsock_next(NULL)) {
		struct vsock_sock *s = vsock_next(NULL);
		struct vsock_info info;

		vsock_get_info(s, &info);
		vsock_close(s);
		if (vsock_next(NULL) == s)
			host_pkt(info.peer_port, VSOCK_OP_RST, NULL, 0);
	}
	clear_sent();
	return 0;
}

/* Control connection, cookie, parameters, one stream: the test runs. */
static void start_forward_test(void)
{
	static const int8_t param_exchange[] = { PARAM_EXCHANGE };
	static const int8_t create_streams[] = { CREATE_STREAMS };
	static const int8_t start[] = { TEST_START, TEST_RUNNING };

	host_pkt(CTL_PORT, VSOCK_OP_REQUEST, NULL, 0);
	host_send(CTL_PORT, cookie, COOKIE_LEN);
	poll_and_expect_states(param_exchange, 1);
	host_msg(CTL_PORT, "{\"tcp\":true,\"parallel\":1,\"len\":131072,\"time\":2}");
	poll_and_expect_states(create_streams, 1);
	host_pkt(STREAM_PORT, VSOCK_OP_REQUEST, NULL, 0);
	host_send(STREAM_PORT, cookie, COOKIE_LEN);
	poll_and_expect_states(start, 2);
	assert_int_equal(srv.phase, PH_RUNNING);
	assert_int_equal(srv.n_streams, 1);
}

/* The server's results after EXCHANGE_RESULTS: stream 1's byte count. */
static uint64_t server_results_bytes(void)
{
	static uint8_t got[4096];
	size_t n;
	uint32_t len;
	uint64_t bytes;
	int streams, st;

	clear_sent();
	poll_once();
	n = received(CTL_PORT, got, sizeof(got));
	assert_true(n > 5);
	len = (uint32_t)got[0] << 24 | got[1] << 16 | got[2] << 8 | got[3];
	assert_int_equal(n, 4 + len + 1);
	assert_int_equal((int8_t)got[n - 1], DISPLAY_RESULTS);
	assert_int_equal(json_parse(&srv.doc, (const char *)got + 4, len), 0);
	streams = json_find(&srv.doc, 0, "streams");
	st = json_index(&srv.doc, streams, 0);
	assert_true(json_get_u64(&srv.doc, json_find(&srv.doc, st, "id"), &bytes));
	assert_int_equal(bytes, 1);
	assert_true(json_get_u64(&srv.doc, json_find(&srv.doc, st, "bytes"), &bytes));
	return bytes;
}

static void test_forward_test_whole_protocol(void **state)
{
	static uint8_t data[3000];
	static const int8_t exchange[] = { EXCHANGE_RESULTS };
	int8_t done = IPERF_DONE, end = TEST_END;

	start_forward_test();
	host_send(STREAM_PORT, data, sizeof(data));
	poll_once();
	assert_int_equal(srv.streams[0].bytes, 3000);
	host_send(CTL_PORT, &end, 1);
	poll_and_expect_states(exchange, 1);
	host_msg(CTL_PORT, "{\"cpu_util_total\":1.5,\"streams\":[{\"id\":1,\"bytes\":3000}]}");
	assert_int_equal(server_results_bytes(), 3000);
	host_send(CTL_PORT, &done, 1);
	poll_once();
	assert_int_equal(srv.phase, PH_IDLE);
	assert_int_equal(srv.cnt.completed, 1);
	assert_int_equal(srv.cnt.bytes_in, 3000);
}

/* Results wait until every byte the client reports sent has arrived. */
static void test_drain_to_client_count(void **state)
{
	static uint8_t data[1000];
	int8_t end = TEST_END;

	start_forward_test();
	host_send(STREAM_PORT, data, sizeof(data));
	host_send(CTL_PORT, &end, 1);
	poll_once();
	host_msg(CTL_PORT, "{\"streams\":[{\"id\":1,\"bytes\":1500}]}");
	clear_sent();
	poll_once();
	assert_int_equal(srv.phase, PH_DRAIN);
	assert_int_equal(received(CTL_PORT, data, sizeof(data)), 0);
	host_send(STREAM_PORT, data, 500);
	assert_int_equal(server_results_bytes(), 1500);
	assert_int_equal(srv.cnt.drain_timeouts, 0);
}

/* Bytes that never come: the drain gives up after DRAIN_NS and says so. */
static void test_drain_timeout(void **state)
{
	int8_t end = TEST_END;

	start_forward_test();
	host_send(CTL_PORT, &end, 1);
	poll_once();
	host_msg(CTL_PORT, "{\"streams\":[{\"id\":1,\"bytes\":10}]}");
	poll_once();
	assert_int_equal(srv.phase, PH_DRAIN);
	fake_now += DRAIN_NS;
	assert_int_equal(server_results_bytes(), 0);
	assert_int_equal(srv.cnt.drain_timeouts, 1);
}

/* A client silent after its cookie loses the server after STEP_NS. */
static void test_stalled_client_times_out(void **state)
{
	static const int8_t param_exchange[] = { PARAM_EXCHANGE };

	host_pkt(CTL_PORT, VSOCK_OP_REQUEST, NULL, 0);
	host_send(CTL_PORT, cookie, COOKIE_LEN);
	poll_and_expect_states(param_exchange, 1);
	/* the step's deadline is the server's timer */
	assert_true(poll_next_due() == srv.step_deadline);
	assert_true(iperf3_ctx.due_ns == srv.step_deadline);
	fake_now += STEP_NS - 1;
	assert_false(stub_scheduled(&iperf3_ctx));
	poll_once();
	assert_int_equal(srv.phase, PH_PARAMS);
	fake_now += 1;
	poll_once(); /* the timer fires: the server runs and gives up */
	assert_int_equal(srv.phase, PH_IDLE);
	assert_int_equal(srv.cnt.step_timeouts, 1);
	assert_int_equal(srv.cnt.aborted, 1);
}

/* Another cookie during a test: ACCESS_DENIED, and the test goes on. */
static void test_stranger_denied(void **state)
{
	char other[COOKIE_LEN];
	uint8_t got[8];

	start_forward_test();
	memset(other, 'z', sizeof(other));
	host_pkt(OTHER_PORT, VSOCK_OP_REQUEST, NULL, 0);
	host_send(OTHER_PORT, other, COOKIE_LEN);
	clear_sent();
	poll_once();
	assert_int_equal(received(OTHER_PORT, got, sizeof(got)), 1);
	assert_int_equal((int8_t)got[0], ACCESS_DENIED);
	assert_int_equal(srv.cnt.denied, 1);
	assert_int_equal(srv.phase, PH_RUNNING);
}

/* A length prefix over MSG_MAX: SERVER_ERROR, then the connection closes. */
static void test_oversized_params(void **state)
{
	static const int8_t param_exchange[] = { PARAM_EXCHANGE };
	uint8_t big[4], got[16];

	host_pkt(CTL_PORT, VSOCK_OP_REQUEST, NULL, 0);
	host_send(CTL_PORT, cookie, COOKIE_LEN);
	poll_and_expect_states(param_exchange, 1);
	put_be32(big, MSG_MAX + 1);
	host_send(CTL_PORT, big, 4);
	clear_sent();
	poll_once();
	assert_int_equal(received(CTL_PORT, got, sizeof(got)), 9);
	assert_int_equal((int8_t)got[0], SERVER_ERROR);
	assert_int_equal(srv.cnt.bad_params, 1);
	/*
	 * The error is out: the connection closes in this pass or the next,
	 * which the server then asked for; not when the client goes, nor at
	 * the step's timer a minute on.
	 */
	if (srv.phase != PH_IDLE)
		assert_true(stub_scheduled(&iperf3_ctx));
	poll_once();
	assert_int_equal(srv.phase, PH_IDLE);
}

/* Control connection, cookie, parameters @json: CREATE_STREAMS went out. */
static void start_params(const char *json)
{
	static const int8_t param_exchange[] = { PARAM_EXCHANGE };
	static const int8_t create_streams[] = { CREATE_STREAMS };

	host_pkt(CTL_PORT, VSOCK_OP_REQUEST, NULL, 0);
	host_send(CTL_PORT, cookie, COOKIE_LEN);
	poll_and_expect_states(param_exchange, 1);
	host_msg(CTL_PORT, json);
	poll_and_expect_states(create_streams, 1);
}

/* Stream i (in the order taken) is the connection from host port @port. */
static void assert_stream(unsigned int i, uint32_t port, unsigned int id, enum stream_role role)
{
	struct vsock_info info;

	vsock_get_info(srv.streams[i].sock, &info);
	assert_int_equal(info.peer_port, port);
	assert_int_equal(srv.streams[i].id, id);
	assert_int_equal(srv.streams[i].role, role);
}

/* --bidir -P 2: four streams, connected and with their cookies in. */
static void start_bidir_two(void)
{
	start_params("{\"tcp\":true,\"parallel\":2,\"bidirectional\":true,\"time\":2}");
	for (uint32_t port = STREAM_PORT; port < STREAM_PORT + 4; port++)
		host_pkt(port, VSOCK_OP_REQUEST, NULL, 0);
	for (uint32_t port = STREAM_PORT; port < STREAM_PORT + 4; port++)
		host_send(port, cookie, COOKIE_LEN);
	poll_once();
	assert_int_equal(srv.phase, PH_RUNNING);
	assert_int_equal(srv.n_streams, 4);
}

/*
 * --bidir -P 2 through a forwarder: all four streams connect and send
 * their cookies before the server looks. They are taken in the order they
 * connected, ids 1, 3, 4, 5 as iperf3 numbers them, and nothing is sent
 * on any until the client's senders spoke: the first two.
 */
static void test_bidir_streams_in_connect_order(void **state)
{
	static const uint8_t data[100];

	start_bidir_two();
	for (unsigned int i = 0; i < 4; i++)
		assert_stream(i, STREAM_PORT + i, i ? i + 2 : 1, ROLE_UNKNOWN);
	clear_sent();
	host_send(STREAM_PORT, data, sizeof(data));
	poll_once();
	assert_int_equal(rw_bytes(STREAM_PORT + 2), 0);
	host_send(STREAM_PORT + 1, data, sizeof(data));
	poll_once();
	assert_stream(0, STREAM_PORT, 1, ROLE_SINK);
	assert_stream(1, STREAM_PORT + 1, 3, ROLE_SINK);
	assert_stream(2, STREAM_PORT + 2, 4, ROLE_SOURCE);
	assert_stream(3, STREAM_PORT + 3, 5, ROLE_SOURCE);
	assert_int_equal(srv.streams[0].bytes + srv.streams[1].bytes, 2 * sizeof(data));
	assert_true(rw_bytes(STREAM_PORT + 2) > 0);
	assert_int_equal(srv.cnt.bidir_reordered, 0);
}

/*
 * The same through a forwarder that forked a connection per stream and
 * lost their order (socat): the client's senders reached us last. Their
 * data makes them sinks, with the ids the client gave them (1, 3); the
 * two that came first are filled (4, 5). By the order alone the client's
 * data would go unread and its writes block for good.
 */
static void test_bidir_roles_follow_the_data(void **state)
{
	static const uint8_t data[100];

	start_bidir_two();
	clear_sent();
	host_send(STREAM_PORT + 3, data, sizeof(data));
	host_send(STREAM_PORT + 1, data, sizeof(data));
	poll_once();
	assert_stream(0, STREAM_PORT, 4, ROLE_SOURCE);
	assert_stream(1, STREAM_PORT + 1, 1, ROLE_SINK);
	assert_stream(2, STREAM_PORT + 2, 5, ROLE_SOURCE);
	assert_stream(3, STREAM_PORT + 3, 3, ROLE_SINK);
	assert_int_equal(srv.streams[1].bytes + srv.streams[3].bytes, 2 * sizeof(data));
	assert_true(rw_bytes(STREAM_PORT) > 0);
	assert_int_equal(rw_bytes(STREAM_PORT + 1), 0);
	assert_int_equal(srv.cnt.bidir_reordered, 1);
}

/* A younger stream's cookie complete first waits for the older one's. */
static void test_stream_waits_for_older_cookie(void **state)
{
	start_params("{\"tcp\":true,\"parallel\":1,\"bidirectional\":true,\"time\":2}");
	host_pkt(STREAM_PORT, VSOCK_OP_REQUEST, NULL, 0);
	host_pkt(STREAM_PORT + 1, VSOCK_OP_REQUEST, NULL, 0);
	host_send(STREAM_PORT, cookie, 10);
	host_send(STREAM_PORT + 1, cookie, COOKIE_LEN);
	poll_once();
	assert_int_equal(srv.n_streams, 0);
	assert_int_equal(srv.phase, PH_STREAMS);
	host_send(STREAM_PORT, cookie + 10, COOKIE_LEN - 10);
	poll_once();
	assert_int_equal(srv.phase, PH_RUNNING);
	assert_stream(0, STREAM_PORT, 1, ROLE_UNKNOWN);
	assert_stream(1, STREAM_PORT + 1, 3, ROLE_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_forward_test_whole_protocol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drain_to_client_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drain_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stalled_client_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stranger_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_params, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bidir_streams_in_connect_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bidir_roles_follow_the_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_waits_for_older_cookie, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
