// SPDX-License-Identifier: MIT
/*
 * The guest's vsock socket layer (net/vsock/) under a hostile peer: the
 * input is a script of packets from the "host" (any header, any payload)
 * interleaved with application actions (accept, read, write, shutdown,
 * close, connect, time passing). The layer must never crash, an owner
 * with ready sockets must have its poll context scheduled (else nothing
 * would run it), and once the application lets go and time passes, no
 * socket and no packet buffer may be left.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/time.h"
#include "net/vsock/vsock.h"
#include "tests/unit/fake_transport.h"
#include "tests/unit/stub_kernel.h"

#define MAX_APP 16

static uint64_t fake_now;

uint64_t now_ns(void)
{
	return fake_now;
}

/*
 * Four owners for the application's sockets, each with its context in
 * the real loop (kernel/poll.c); the pass takes their ready sockets.
 */
static struct vsock_sock **app_slots;
static unsigned int owner_poll(struct poll_ctx *ctx, unsigned int budget);
static struct poll_ctx owner_ctx[4] = {
	{ .name = "owner0", .poll = owner_poll },
	{ .name = "owner1", .poll = owner_poll },
	{ .name = "owner2", .poll = owner_poll },
	{ .name = "owner3", .poll = owner_poll },
};
static struct vsock_owner owners[4] = {
	{ .ctx = &owner_ctx[0] },
	{ .ctx = &owner_ctx[1] },
	{ .ctx = &owner_ctx[2] },
	{ .ctx = &owner_ctx[3] },
};

struct input {
	const uint8_t *p;
	size_t left;
};

static uint32_t take(struct input *in, unsigned int bytes)
{
	uint32_t v = 0;

	while (bytes-- && in->left) {
		v = v << 8 | *in->p++;
		in->left--;
	}
	return v;
}

static void peer_packet(struct input *in)
{
	uint32_t len = take(in, 2) % 9000;
	struct vsock_pkt *pkt = vsock_pkt_alloc(len);

	if (!pkt)
		return;
	pkt->hdr.src_cid = take(in, 1) & 1 ? 2 : take(in, 4);
	pkt->hdr.dst_cid = GUEST_CID;
	pkt->hdr.src_port = 5000 + take(in, 1) % 4;
	pkt->hdr.dst_port = take(in, 1) & 1 ? 1234 : 49152 + take(in, 1) % 4;
	pkt->hdr.type = 1 + take(in, 1) % 2;
	pkt->hdr.op = 1 + take(in, 1) % 7;
	pkt->hdr.flags = take(in, 1);
	pkt->hdr.buf_alloc = take(in, 4);
	pkt->hdr.fwd_cnt = take(in, 4);
	pkt->hdr.len = len;
	for (uint32_t i = 0; i < len; i++)
		pkt->data[i] = (uint8_t)i;
	vsock_pkt_free(vsock_rx(pkt));
}

/*
 * Readiness: a ready socket must be one the application holds, with the
 * owner pointer it set (a closed one never comes back).
 */
static unsigned int owner_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct vsock_owner *o = &owners[ctx - owner_ctx];
	struct vsock_sock *s;
	unsigned int n = 0;
	void *owner_ptr;

	while (n < budget && (s = vsock_take_ready(o, &owner_ptr))) {
		struct vsock_sock **owner = vsock_owner(s);

		if (owner_ptr != owner || owner < app_slots || owner >= app_slots + MAX_APP ||
		    *owner != s)
			abort();
		n++;
	}
	return n;
}

/* Every owner with ready sockets is scheduled; then a pass serves them. */
static void take_ready(void)
{
	struct vsock_pass p;

	vsock_poll_pass(&p);
	for (unsigned int i = 0; i < 4; i++)
		if (vsock_ready_count(&owners[i]) && !stub_scheduled(&owner_ctx[i]))
			abort(); /* a lost wake-up */
	poll_once();
	for (unsigned int i = 0; i < 4; i++)
		if (vsock_ready_count(&owners[i]) && !stub_scheduled(&owner_ctx[i]))
			abort(); /* more than a budget: still scheduled */
}

static void app_action(struct input *in, struct vsock_sock **app, struct vsock_sock **listeners)
{
	static uint8_t buf[70000];
	unsigned int slot = take(in, 1) % MAX_APP;
	struct vsock_sock *s = app[slot];
	bool eor;

	switch (take(in, 1) % 10) {
	case 0:
		if (!s && (app[slot] = vsock_accept(listeners[take(in, 1) & 1])))
			vsock_set_owner(app[slot], &owners[slot & 3], &app[slot]);
		break;
	case 1:
		if (s && vsock_recv(s, buf, take(in, 3) % sizeof(buf), &eor) < 0)
			abort();
		break;
	case 2:
		if (s)
			vsock_send(s, buf, take(in, 3) % sizeof(buf), take(in, 1) & 1);
		break;
	case 3:
		if (s)
			vsock_shutdown(s, take(in, 1));
		break;
	case 4:
		if (s) {
			vsock_close(s);
			app[slot] = NULL;
		}
		break;
	case 5:
		if (!s)
			app[slot] = vsock_connect(2, 6000 + take(in, 1) % 4, 1 + take(in, 1) % 2);
		break;
	case 6:
		fake_now += (uint64_t)take(in, 2) * 1000000ULL;
		vsock_poll();
		break;
	case 7:
		transport_full = !transport_full;
		break;
	case 8:
		take_ready();
		break;
	default:
		clear_sent();
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct vsock_sock *app[MAX_APP] = { 0 };
	struct vsock_sock *listeners[2];
	struct vsock_sock *s;

	config_reset();
	vsock_init(&fake);
	fake_loop_init();
	for (unsigned int i = 0; i < 4; i++)
		if (!owner_ctx[i].cpu && poll_ctx_add(&owner_ctx[i]))
			abort();
	app_slots = app;
	fake_now = 1;
	transport_full = false;
	/* full changes at the input's whim: never "sent directly", tx_full() asked */
	transport_direct = false;
	listeners[0] = vsock_listen(1234, VSOCK_TYPE_STREAM, 4);
	listeners[1] = vsock_listen(1234, VSOCK_TYPE_SEQPACKET, 4);
	while (in.left) {
		if (take(&in, 1) & 1)
			peer_packet(&in);
		else
			app_action(&in, app, listeners);
	}
	/* tear down: the application lets go, the peer resets what remains */
	for (unsigned int i = 0; i < MAX_APP; i++)
		if (app[i])
			vsock_close(app[i]);
	vsock_close(listeners[0]);
	vsock_close(listeners[1]);
	fake_now += 60ULL * 1000000000ULL;
	vsock_poll();
	while ((s = vsock_next(NULL))) {
		/* only closed-and-orphaned sockets may remain; none should */
		abort();
	}
	clear_sent();
	if (vsock_pkt_live())
		abort();
	return 0;
}
