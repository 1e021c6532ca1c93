// SPDX-License-Identifier: MIT
/*
 * The vsock services (echo) over the real socket layer, a fake transport
 * playing the host, served by the real poll loop: the socket layer
 * schedules the services' context, and a pass runs it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/config.h"
#include "net/vsock/vsock.h"
#include "fake_transport.h"
#include "host_peer.h"
#include "stub_kernel.h"

/* The next fail_malloc allocations of services.c fail. */
static int fail_malloc;

static void *services_malloc(size_t n)
{
	if (fail_malloc) {
		fail_malloc--;
		return NULL;
	}
	return malloc(n);
}

#define malloc services_malloc
#include "app/services.c"
#undef malloc

uint64_t now_ns(void)
{
	return 1000;
}

void stats_register(const char *name, void (*print)(void), void (*json)(struct json_writer *w))
{
}

static void host_pkt(uint16_t type, uint16_t op, uint32_t flags, const void *data, uint32_t len)
{
	host_pkt_deliver(&(struct host_pkt){ .src_port = 7000,
					     .dst_port = 1234,
					     .type = type,
					     .op = op,
					     .flags = flags,
					     .data = data,
					     .len = len,
					     .buf_alloc = 1u << 20 });
}

static void set_key(const char *name, const char *value)
{
	char err[128];

	int r = config_set(name, value, err, sizeof(err));

	if (r)
		print_error("%s=%s: %s\n", name, value, err);
	assert_int_equal(r, 0);
}

/*
 * A new SEQPACKET connection to echo, accepted with the next @fail_allocs
 * allocations of services.c failing.
 */
static void echo_seq_setup(const char *vsock_buf, int fail_allocs)
{
	config_reset();
	vsock_init(&fake);
	fake_loop_init();
	set_key("vsock_buf", vsock_buf);
	services_init();
	fail_malloc = fail_allocs;
	host_pkt(VSOCK_TYPE_SEQPACKET, VSOCK_OP_REQUEST, 0, NULL, 0);
	assert_int_equal(sent[n_sent - 1]->hdr.op, VSOCK_OP_RESPONSE);
	poll_once();
	clear_sent();
}

static int echo_seq_teardown(void **state)
{
	clear_sent();
	service_stop(&services[SVC_ECHO]);
	service_stop(&services[SVC_SINK]);
	service_stop(&services[SVC_SOURCE]);
	free(pattern);
	while (vsock_next(NULL)) {
		struct vsock_sock *s = vsock_next(NULL);

		struct vsock_info in;

		vsock_get_info(s, &in);
		vsock_close(s);
		if (vsock_next(NULL) == s)
			host_pkt(in.type, VSOCK_OP_RST, 0, NULL, 0);
	}
	clear_sent();
	return 0;
}

/* The RW bytes echoed since the last clear: all SEQPACKET, EOM on the last. */
static uint32_t echoed(const uint8_t *msg)
{
	uint32_t n = 0;
	bool eom = false;

	for (unsigned int i = 0; i < n_sent; i++) {
		if (sent[i]->hdr.op != VSOCK_OP_RW)
			continue;
		assert_false(eom);
		assert_int_equal(sent[i]->hdr.type, VSOCK_TYPE_SEQPACKET);
		assert_memory_equal(sent[i]->data, msg + n, sent[i]->hdr.len);
		n += sent[i]->hdr.len;
		eom = sent[i]->hdr.flags & VSOCK_SEQ_EOM;
	}
	assert_true(eom);
	return n;
}

/*
 * The echo service tells a SEQPACKET connection by its stored type, not by
 * whether its message buffer was allocated: when that allocation fails at
 * accept, the connection is still served message by message (allocation
 * retried). Before, it was served as a stream: the echo lost its end of
 * message.
 */
static void test_echo_seqpacket_without_buffer_at_accept(void **state)
{
	static uint8_t msg[150];

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i + 5);
	echo_seq_setup("65536", 1);
	assert_int_equal(fail_malloc, 0);
	host_pkt(VSOCK_TYPE_SEQPACKET, VSOCK_OP_RW, 0, msg, 100);
	host_pkt(VSOCK_TYPE_SEQPACKET, VSOCK_OP_RW, VSOCK_SEQ_EOM, msg + 100, 50);
	poll_once();
	assert_int_equal(echoed(msg), 150);
}

/*
 * The message buffer's capacity is fixed at accept, like the socket's
 * buf_alloc: lowering vsock_buf later does not truncate messages the
 * connection was promised room for. Before, the read used the new value.
 */
static void test_echo_seqpacket_capacity_fixed_at_accept(void **state)
{
	static uint8_t msg[6000];

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 3);
	echo_seq_setup("8192", 0);
	set_key("vsock_buf", "4096");
	host_pkt(VSOCK_TYPE_SEQPACKET, VSOCK_OP_RW, VSOCK_SEQ_EOM, msg, sizeof(msg));
	poll_once();
	assert_int_equal(echoed(msg), sizeof(msg));
}

/* A stream packet from the host with its credit (buf_alloc, fwd_cnt). */
static void host_stream(uint16_t op, const void *data, uint32_t len, uint32_t buf_alloc,
			uint32_t fwd_cnt)
{
	host_pkt_deliver(&(struct host_pkt){ .src_port = 7000,
					     .dst_port = 1234,
					     .op = op,
					     .data = data,
					     .len = len,
					     .buf_alloc = buf_alloc,
					     .fwd_cnt = fwd_cnt });
}

static uint32_t rw_bytes_sent(void)
{
	uint32_t n = 0;

	for (unsigned int i = 0; i < n_sent; i++)
		if (sent[i]->hdr.op == VSOCK_OP_RW)
			n += sent[i]->hdr.len;
	return n;
}

/*
 * The services serve only ready sockets: an echo short of the peer's
 * credit stops, is not served again while nothing changes, and finishes
 * when a credit update readies it.
 */
static void test_echo_starved_served_when_credit_returns(void **state)
{
	static uint8_t msg[150];
	uint64_t out;

	config_reset();
	vsock_init(&fake);
	fake_loop_init();
	services_init();
	out = services[SVC_ECHO].bytes_out; /* the service counts across tests */
	host_stream(VSOCK_OP_REQUEST, NULL, 0, 100, 0);
	assert_int_equal(sent[n_sent - 1]->hdr.op, VSOCK_OP_RESPONSE);
	poll_once();
	assert_int_equal(services[SVC_ECHO].n_conns, 1);
	clear_sent();
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7);
	host_stream(VSOCK_OP_RW, msg, sizeof(msg), 100, 0);
	poll_once();
	assert_int_equal(rw_bytes_sent(), 100);
	assert_memory_equal(sent[0]->data, msg, 100);
	clear_sent();
	/* nothing changed: the services are not scheduled, a pass serves nothing */
	assert_false(stub_scheduled(&services_ctx));
	assert_int_equal(poll_once(), 0);
	assert_int_equal(n_sent, 0);
	assert_null(vsock_take_ready(&services_owner, NULL));
	host_stream(VSOCK_OP_CREDIT_UPDATE, NULL, 0, 100, 100);
	assert_true(stub_scheduled(&services_ctx));
	assert_int_equal(poll_once(), 1); /* the one socket served */
	assert_int_equal(rw_bytes_sent(), 50);
	assert_memory_equal(sent[n_sent - 1]->data, msg + 100, 50);
	assert_int_equal(services[SVC_ECHO].bytes_out - out, 150);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_echo_seqpacket_without_buffer_at_accept,
					  echo_seq_teardown),
		cmocka_unit_test_teardown(test_echo_seqpacket_capacity_fixed_at_accept,
					  echo_seq_teardown),
		cmocka_unit_test_teardown(test_echo_starved_served_when_credit_returns,
					  echo_seq_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
