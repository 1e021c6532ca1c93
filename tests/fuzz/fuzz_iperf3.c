// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the guest's iperf3 server (app/iperf3.c) over the real
 * socket layer, a fuzzer-driven host opening connections, sending cookies,
 * length-prefixed messages and raw bytes, resetting, and moving the clock.
 * Whatever arrives, the server must stay in bounds, and at the end every
 * socket and packet it used must be released. The real poll loop runs
 * it after each action: when a socket of its changed, or its timer came.
 */
#include <stdlib.h>
#include <string.h>

#include "app/iperf3.c"
#include "tests/unit/fake_transport.h"
#include "tests/unit/host_peer.h"
#include "tests/unit/stub_kernel.h"

#define HOST_PORTS 4

static uint64_t fake_now;
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
	(void)name;
	(void)print;
}

struct input {
	const uint8_t *p;
	size_t left;
};

static uint8_t take(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static void host_pkt(uint32_t port, uint16_t op, const void *data, uint32_t len)
{
	host_pkt_deliver(&(struct host_pkt){
		.src_port = port,
		.dst_port = 5201,
		.op = op,
		.data = data,
		.len = len,
		.buf_alloc = 1u << 16,
		.flags = op == VSOCK_OP_SHUTDOWN ? VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND : 0 });
}

static void host_action(struct input *in)
{
	static const char cookie[COOKIE_LEN] = "fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzz";
	uint8_t op = take(in);
	uint32_t port = 7000 + (op >> 4) % HOST_PORTS;
	uint8_t buf[4 + 256];
	uint32_t n;

	switch (op % 7) {
	case 0:
		host_pkt(port, VSOCK_OP_REQUEST, NULL, 0);
		break;
	case 1:
		host_pkt(port, VSOCK_OP_RW, cookie, COOKIE_LEN);
		break;
	case 2: /* a length-prefixed message: the length is the bytes that follow */
		n = take(in);
		put_be32(buf, n);
		for (uint32_t i = 0; i < n; i++)
			buf[4 + i] = take(in);
		host_pkt(port, VSOCK_OP_RW, buf, 4 + n);
		break;
	case 3:
		n = take(in) % 64;
		for (uint32_t i = 0; i < n; i++)
			buf[i] = take(in);
		host_pkt(port, VSOCK_OP_RW, buf, n);
		break;
	case 4:
		fake_now += (uint64_t)take(in) * 1000000000ull;
		break;
	case 5:
		host_pkt(port, VSOCK_OP_SHUTDOWN, NULL, 0);
		break;
	default:
		host_pkt(port, VSOCK_OP_RST, NULL, 0);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };

	config_reset();
	vsock_init(&fake);
	transport_discard = true; /* the host side reads nothing back */
	memset(&srv, 0, sizeof(srv));
	fake_now = 1;
	if (!iperf3_ctx.cpu && poll_ctx_add(&iperf3_ctx))
		abort();
	iperf3_start();
	while (in.left) {
		host_action(&in);
		poll_once();
		vsock_poll();
	}
	/* tear down: the server lets go; timeouts reset what the host left open */
	close_pending();
	if (srv.ctl)
		test_finish(false);
	close_pending();
	if (srv.listener)
		vsock_close(srv.listener);
	fake_now += 120ull * 1000000000ull;
	vsock_poll();
	if (vsock_next(NULL) || vsock_pkt_live())
		abort();
	return 0;
}
