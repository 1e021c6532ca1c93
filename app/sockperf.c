// SPDX-License-Identifier: MIT
/*
 * The server side of sockperf's TCP protocol on a vsock port, so Debian's
 * `sockperf ping-pong --tcp` reaches the guest through the back end's TCP
 * forwarding (--forward-tcp). A plain echo is not enough: sockperf's client
 * drops replies that still carry its client flag.
 *
 * Every message starts with a 14-byte header, big-endian on the wire:
 *	u64 sequence number, u16 flags, u32 length of the whole message.
 * A message with PONG_REQUEST goes back whole with CLIENT cleared; others
 * (throughput mode, warm-up) are read and dropped. One message at a time
 * per connection: while its reply waits for credit, nothing more is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/stats.h"
#include "net/vsock/vsock.h"

CONFIG_KEY(cfg_sockperf_port) = {
	.name = "sockperf_port",
	.help = "vsock sockperf server port (0: off)",
	.type = CONFIG_UINT,
	.max = 0xffffffff,
	.def = 11111,
};

#define SP_HDR_LEN 14
#define SP_OFF_FLAGS 8
#define SP_OFF_LEN 10
#define SP_FLAG_CLIENT 0x1
#define SP_FLAG_PONG_REQUEST 0x2
#define SP_MAX_MSG 65536 /* sockperf's own limit on a message */
#define SP_MAX_CONNS 32
#define SP_BACKLOG 32

struct sp_conn {
	struct vsock_sock *sock;
	uint8_t *msg;
	uint32_t have, need; /* bytes of the message read; its length */
	uint32_t sent; /* reply bytes sent; meaningful while replying */
	bool replying;
};

static struct vsock_sock *listener;
static struct poll_ctx sockperf_ctx;
static struct vsock_owner sockperf_owner = { .ctx = &sockperf_ctx };
static uint32_t port;
static struct sp_conn conns[SP_MAX_CONNS];
static unsigned int n_conns;
static struct config_hook port_hook;
static uint64_t accepted, refused, pongs, dropped_msgs, bad_msgs;

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A whole message is in: answer it or drop it, then wait for the next. */
static void message_done(struct sp_conn *c)
{
	if (c->msg[SP_OFF_FLAGS + 1] & SP_FLAG_PONG_REQUEST) {
		c->msg[SP_OFF_FLAGS + 1] &= ~SP_FLAG_CLIENT;
		c->replying = true;
		c->sent = 0;
		return;
	}
	dropped_msgs++;
	c->have = 0;
	c->need = SP_HDR_LEN;
}

/* false: the peer broke the protocol; the connection ends. */
static bool serve(struct sp_conn *c)
{
	ssize_t n;

	for (;;) {
		if (c->replying) {
			n = vsock_send(c->sock, c->msg + c->sent, c->need - c->sent, false);

			if (n <= 0)
				return true;
			c->sent += n;
			if (c->sent < c->need)
				return true;
			pongs++;
			c->replying = false;
			c->have = 0;
			c->need = SP_HDR_LEN;
		}
		n = vsock_recv(c->sock, c->msg + c->have, c->need - c->have, NULL);

		if (n <= 0)
			return true;
		c->have += n;
		if (c->have < c->need)
			continue;
		if (c->need == SP_HDR_LEN) {
			/* the header is in: now we know the length (untrusted) */
			c->need = get_be32(c->msg + SP_OFF_LEN);
			if (c->need < SP_HDR_LEN || c->need > SP_MAX_MSG) {
				bad_msgs++;
				return false;
			}
			if (c->have < c->need)
				continue;
		}
		message_done(c);
	}
}

static void conn_close(unsigned int i)
{
	vsock_close(conns[i].sock);
	free(conns[i].msg);
	conns[i] = conns[--n_conns];
}

static void accept_all(void)
{
	struct vsock_sock *s;

	while (listener && (s = vsock_accept(listener))) {
		struct sp_conn *c = &conns[n_conns];

		if (n_conns == SP_MAX_CONNS || !(c->msg = malloc(SP_MAX_MSG))) {
			refused++;
			vsock_close(s);
			continue;
		}
		c->sock = s;
		vsock_set_owner(s, &sockperf_owner, NULL);
		c->have = c->sent = 0;
		c->need = SP_HDR_LEN;
		c->replying = false;
		n_conns++;
		accepted++;
	}
}

/*
 * Scheduled by the socket layer when one of its sockets changed (each is
 * handed to its owner); it serves every connection then, and empties
 * the ready list first so a change during the run schedules it again.
 */
static unsigned int sockperf_poll(struct poll_ctx *ctx, unsigned int budget)
{
	unsigned int changed = 0;

	while (vsock_take_ready(&sockperf_owner, NULL))
		changed++;
	accept_all();
	for (unsigned int i = 0; i < n_conns;) {
		struct sp_conn *c = &conns[i];
		bool ok = vsock_state(c->sock) != VSOCK_CONNECTED || serve(c);

		if (!ok || vsock_state(c->sock) == VSOCK_CLOSED ||
		    (vsock_eof(c->sock) && !vsock_rx_queued(c->sock) && !c->replying))
			conn_close(i);
		else
			i++;
	}
	return changed != 0;
}

static struct poll_ctx sockperf_ctx = {
	.name = "sockperf",
	.poll = sockperf_poll,
};

/* Follow the key: close the old listener and its connections, listen anew. */
static void port_changed(struct config_key *key)
{
	while (n_conns)
		conn_close(0);
	if (listener)
		vsock_close(listener);
	listener = NULL;
	port = config_get(key);
	if (port && !(listener = vsock_listen(port, VSOCK_TYPE_STREAM, SP_BACKLOG)))
		printf("vsock: sockperf cannot listen on port %u\n", port);
	if (listener)
		vsock_set_owner(listener, &sockperf_owner, NULL);
	poll_schedule(&sockperf_ctx);
}

static void sockperf_stats(void)
{
	printf("  port %u conns %u accepted %llu refused %llu pongs %llu dropped %llu "
	       "bad %llu\n",
	       port, n_conns, (unsigned long long)accepted, (unsigned long long)refused,
	       (unsigned long long)pongs, (unsigned long long)dropped_msgs,
	       (unsigned long long)bad_msgs);
}

static void sockperf_stats_json(struct json_writer *w)
{
	json_put_u64(w, "port", port);
	json_put_u64(w, "conns", n_conns);
	json_put_u64(w, "accepted", accepted);
	json_put_u64(w, "refused", refused);
	json_put_u64(w, "pongs", pongs);
	json_put_u64(w, "dropped", dropped_msgs);
	json_put_u64(w, "bad", bad_msgs);
}

void sockperf_init(void)
{
	poll_ctx_add(&sockperf_ctx);
	port_changed(&cfg_sockperf_port);
	port_hook.fn = port_changed;
	config_on_change(&cfg_sockperf_port, &port_hook);
	stats_register("sockperf", sockperf_stats, sockperf_stats_json);
}
