// SPDX-License-Identifier: MIT
/*
 * echo, sink and source: each listens on its port (stream; echo also
 * seqpacket), accepts up to MAX_CONNS connections and serves them from the
 * poll loop. Nothing blocks: a connection without credit or data waits.
 *
 * Every listener and connection is handed to the services' owner, its
 * connection (or service) as the owner pointer (vsock_set_owner): the
 * services' poll context is scheduled when the socket layer readies one
 * of them, and serves just those. Walking every connection on every change cost more
 * than the echo itself, and grew with the sessions bench-rr opens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/services.h"
#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/stats.h"
#include "net/vsock/vsock.h"

CONFIG_KEY(cfg_echo_port) = {
	.name = "echo_port",
	.help = "vsock echo service port (0: off)",
	.type = CONFIG_UINT,
	.max = 0xffffffff,
	.def = 1234,
};

CONFIG_KEY(cfg_sink_port) = {
	.name = "sink_port",
	.help = "vsock sink service port (0: off)",
	.type = CONFIG_UINT,
	.max = 0xffffffff,
	.def = 1235,
};

CONFIG_KEY(cfg_source_port) = {
	.name = "source_port",
	.help = "vsock source service port (0: off)",
	.type = CONFIG_UINT,
	.max = 0xffffffff,
	.def = 1236,
};

#define MAX_CONNS 256 /* bench-rr runs up to 200 sessions on the echo */
#define BACKLOG 128

enum service_kind { SVC_ECHO, SVC_SINK, SVC_SOURCE, SVC_COUNT };

struct conn {
	struct vsock_sock *sock; /* its owner pointer is this conn */
	enum service_kind kind;
	uint64_t offset; /* source: pattern bytes sent */
	bool seqpacket; /* the connection's type, fixed at accept */
	uint8_t *msg; /* echo seqpacket: a message waiting for credit */
	size_t msg_cap; /* msg's size: vsock_buf at accept, like buf_alloc */
	size_t msg_len;
	bool msg_eor;
};

struct service {
	const char *name;
	struct config_key *port_key;
	struct config_hook port_hook;
	uint32_t port;
	struct vsock_sock *listen_stream, *listen_seq; /* owner pointer: the service */
	struct conn conns[MAX_CONNS];
	unsigned int n_conns;
	uint64_t accepted, closed, refused, bytes_in, bytes_out;
};

static struct service services[SVC_COUNT] = {
	[SVC_ECHO] = { .name = "echo", .port_key = &cfg_echo_port },
	[SVC_SINK] = { .name = "sink", .port_key = &cfg_sink_port },
	[SVC_SOURCE] = { .name = "source", .port_key = &cfg_source_port },
};

static uint8_t *pattern;
static struct poll_ctx services_ctx;
static struct vsock_owner services_owner = { .ctx = &services_ctx }; /* every socket's */

const uint8_t *vsock_pattern(void)
{
	return pattern;
}

/* ---- per-connection work ---- */

/*
 * A received packet goes back in its own buffer when it can; one the peer
 * has too little credit for is copied, as much as the credit allows. An
 * empty queue ends the loop at vsock_send_rx_head (-ENODATA).
 */
static void echo_stream(struct service *svc, struct conn *c)
{
	const uint8_t *data;
	ssize_t sent;
	size_t n;

	for (;;) {
		sent = vsock_send_rx_head(c->sock);
		if (sent < 0)
			break;
		if (!sent) {
			n = vsock_peek(c->sock, &data, NULL);
			if (!n)
				break;
			sent = vsock_send(c->sock, data, n, false);
			if (sent <= 0)
				break;
			vsock_consume(c->sock, sent);
		}
		svc->bytes_in += sent;
		svc->bytes_out += sent;
	}
}

/* Messages go back whole; one waits in c->msg while the peer lacks credit. */
static void echo_seqpacket(struct service *svc, struct conn *c)
{
	for (;;) {
		if (!c->msg_len && !c->msg_eor) {
			ssize_t n;

			/* no memory at accept: try again, never serve as a stream */
			if (!c->msg && !(c->msg = malloc(c->msg_cap))) {
				vsock_set_ready(c->sock);
				return;
			}
			n = vsock_recv(c->sock, c->msg, c->msg_cap, &c->msg_eor);
			if (n <= 0 && !c->msg_eor)
				return;
			c->msg_len = n;
			svc->bytes_in += n;
		}
		if (vsock_send(c->sock, c->msg, c->msg_len, c->msg_eor) < 0)
			return;
		svc->bytes_out += c->msg_len;
		c->msg_len = 0;
		c->msg_eor = false;
	}
}

static void sink(struct service *svc, struct conn *c)
{
	const uint8_t *data;
	size_t n;

	while ((n = vsock_peek(c->sock, &data, NULL))) {
		vsock_consume(c->sock, n);
		svc->bytes_in += n;
	}
}

static void source(struct service *svc, struct conn *c)
{
	const uint8_t *data;
	size_t n;

	while ((n = vsock_peek(c->sock, &data, NULL)))
		vsock_consume(c->sock, n); /* whatever the client says is ignored */
	for (;;) {
		size_t space = vsock_send_space(c->sock);
		ssize_t sent;

		if (!space)
			return;
		if (space > VSOCK_MAX_PKT_PAYLOAD)
			space = VSOCK_MAX_PKT_PAYLOAD;
		/* the pattern never changes: packets point into it, no copy */
		sent = vsock_send_static(c->sock, pattern + c->offset % 251, space);
		if (sent <= 0)
			return;
		c->offset += sent;
		svc->bytes_out += sent;
	}
}

/* Closed, or EOF with no message left to send back. */
static bool conn_done(const struct conn *c)
{
	if (c->msg_len)
		return vsock_state(c->sock) == VSOCK_CLOSED;
	return vsock_done(c->sock);
}

static void serve(struct service *svc, enum service_kind kind, struct conn *c, enum vsock_state st)
{
	if (st == VSOCK_CONNECTED) {
		if (kind == SVC_ECHO && c->seqpacket)
			echo_seqpacket(svc, c);
		else if (kind == SVC_ECHO)
			echo_stream(svc, c);
		else if (kind == SVC_SINK)
			sink(svc, c);
		else
			source(svc, c);
	}
}

static void conn_close(struct service *svc, unsigned int i)
{
	struct conn *c = &svc->conns[i];

	vsock_close(c->sock);
	free(c->msg);
	svc->conns[i] = svc->conns[--svc->n_conns];
	svc->closed++;
	/* the last one moved into the hole: its socket must point there */
	if (i < svc->n_conns)
		vsock_set_owner(c->sock, &services_owner, c);
}

static void accept_all(struct service *svc, struct vsock_sock *l, bool seqpacket)
{
	enum service_kind kind = svc - services;
	struct vsock_sock *s;

	while (l && (s = vsock_accept(l))) {
		struct conn *c;

		if (svc->n_conns == MAX_CONNS) {
			svc->refused++;
			vsock_close(s);
			continue;
		}
		c = &svc->conns[svc->n_conns++];
		memset(c, 0, sizeof(*c));
		c->sock = s;
		c->kind = kind;
		c->seqpacket = seqpacket;
		if (seqpacket) {
			c->msg_cap = config_get(&cfg_vsock_buf);
			c->msg = malloc(c->msg_cap);
		}
		svc->accepted++;
		/* it may hold data, or be closed, already: serve it this pass */
		vsock_set_owner(s, &services_owner, c);
		vsock_set_ready(s);
	}
}

/* @owner: the socket's owner pointer, a service (listener) or a conn. */
static void serve_sock(struct vsock_sock *s, void *owner)
{
	enum vsock_state st = vsock_state(s);
	struct service *svc;
	struct conn *c;

	if (st == VSOCK_LISTEN) {
		svc = owner;
		accept_all(svc, s, s == svc->listen_seq);
		return;
	}
	c = owner;
	svc = &services[c->kind];
	serve(svc, c->kind, c, st);
	if (conn_done(c))
		conn_close(svc, c - svc->conns);
}

/*
 * At most @budget sockets a pass: the rest wait for the next (the
 * budget used up keeps the context scheduled), and one queued again (no
 * memory yet) cannot keep the pass here. Completing needs no re-check:
 * the socket layer schedules the context on every socket it readies.
 */
static unsigned int services_poll(struct poll_ctx *ctx, unsigned int budget)
{
	unsigned int served = 0;
	struct vsock_sock *s;
	void *owner;

	while (served < budget && (s = vsock_take_ready(&services_owner, &owner))) {
		serve_sock(s, owner);
		served++;
	}
	return served;
}

static struct poll_ctx services_ctx = {
	.name = "services",
	.poll = services_poll,
};

/* ---- listeners, following the *_port keys ---- */

static void service_stop(struct service *svc)
{
	while (svc->n_conns)
		conn_close(svc, 0);
	if (svc->listen_stream)
		vsock_close(svc->listen_stream);
	if (svc->listen_seq)
		vsock_close(svc->listen_seq);
	svc->listen_stream = svc->listen_seq = NULL;
}

static void service_start(struct service *svc, enum service_kind kind)
{
	poll_schedule(&services_ctx);
	svc->port = config_get(svc->port_key);
	if (!svc->port)
		return;
	svc->listen_stream = vsock_listen(svc->port, VSOCK_TYPE_STREAM, BACKLOG);
	if (kind == SVC_ECHO)
		svc->listen_seq = vsock_listen(svc->port, VSOCK_TYPE_SEQPACKET, BACKLOG);
	if (svc->listen_stream)
		vsock_set_owner(svc->listen_stream, &services_owner, svc);
	if (svc->listen_seq)
		vsock_set_owner(svc->listen_seq, &services_owner, svc);
	if (!svc->listen_stream)
		printf("vsock: %s cannot listen on port %u\n", svc->name, svc->port);
}

static void port_changed(struct config_key *key)
{
	for (int k = 0; k < SVC_COUNT; k++) {
		if (services[k].port_key == key) {
			service_stop(&services[k]);
			service_start(&services[k], k);
		}
	}
}

static void services_stats(void)
{
	for (int k = 0; k < SVC_COUNT; k++) {
		const struct service *s = &services[k];

		printf("  %-6s port %-5u conns %u accepted %llu closed %llu refused %llu "
		       "in %llu B out %llu B\n",
		       s->name, s->port, s->n_conns, (unsigned long long)s->accepted,
		       (unsigned long long)s->closed, (unsigned long long)s->refused,
		       (unsigned long long)s->bytes_in, (unsigned long long)s->bytes_out);
	}
}

/* One object a service, under its name: "echo": {"port": 1234, ...}. */
static void services_stats_json(struct json_writer *w)
{
	for (int k = 0; k < SVC_COUNT; k++) {
		const struct service *s = &services[k];

		json_open(w, s->name, '{');
		json_put_u64(w, "port", s->port);
		json_put_u64(w, "conns", s->n_conns);
		json_put_u64(w, "accepted", s->accepted);
		json_put_u64(w, "closed", s->closed);
		json_put_u64(w, "refused", s->refused);
		json_put_u64(w, "bytes_in", s->bytes_in);
		json_put_u64(w, "bytes_out", s->bytes_out);
		json_close(w, '}');
	}
}

void services_init(void)
{
	pattern = malloc(VSOCK_PATTERN_LEN);
	for (uint32_t i = 0; i < VSOCK_PATTERN_LEN; i++)
		pattern[i] = vsock_pattern_byte(i);
	poll_ctx_add(&services_ctx);
	for (int k = 0; k < SVC_COUNT; k++) {
		service_start(&services[k], k);
		services[k].port_hook.fn = port_changed;
		config_on_change(services[k].port_key, &services[k].port_hook);
	}
	stats_register("services", services_stats, services_stats_json);
}
