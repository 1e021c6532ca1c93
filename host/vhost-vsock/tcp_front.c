// SPDX-License-Identifier: MIT
/*
 * The TCP front: --forward-tcp [ADDR:]PORT=GUESTPORT listens on a TCP
 * address (loopback unless ADDR says otherwise) and joins every accepted
 * connection to a new vsock connection to GUESTPORT. It feeds the same
 * connection machinery as the hybrid front (hybrid_front.c), minus the
 * CONNECT line: so credit, bounded buffering and half-close are theirs.
 * What is TCP's own: an RST from the guest (refused or aborted) becomes a
 * TCP RST (SO_LINGER 0), and a TCP RST from the client becomes a vsock RST.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "stats.h"

struct tcp_listener {
	struct ep_src ep; /* first: epoll data points here */
	int fd;
	uint32_t guest_port;
	char spec[80];
};

static struct tcp_listener tcp_listeners[TCP_MAX_FORWARDS];
static unsigned tcp_count;

/* "[ADDR:]PORT=GUESTPORT"; ADDR may be [v6]. 0 on success. */
static int parse_spec(const char *spec, char *host, size_t host_len, char *port, size_t port_len,
		      uint32_t *guest_port)
{
	const char *eq = strchr(spec, '='), *colon;
	unsigned long gp;
	char *end;
	size_t n;

	if (!eq || eq == spec)
		return -1;
	errno = 0;
	gp = strtoul(eq + 1, &end, 10);
	if (*end || end == eq + 1 || errno || gp > UINT32_MAX)
		return -1;
	*guest_port = gp;
	colon = memrchr(spec, ':', eq - spec);
	strcpy(host, "127.0.0.1");
	if (colon) {
		const char *h = spec;

		n = colon - spec;
		if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
			h++;
			n -= 2;
		}
		if (n == 0 || n >= host_len)
			return -1;
		memcpy(host, h, n);
		host[n] = 0;
		spec = colon + 1;
	}
	n = eq - spec;
	if (n == 0 || n >= port_len || strspn(spec, "0123456789") != n)
		return -1;
	memcpy(port, spec, n);
	port[n] = 0;
	return 0;
}

static int listen_tcp(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	int fd, one = 1;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	return fd;
}

/* The port the kernel gave us (PORT 0 asks for any free one). */
static unsigned bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* --forward-tcp: listen now, so a bad address fails at start. */
int tcp_forward_add(struct vsock_dev *d, const char *spec)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char host[64], port[8];
	struct tcp_listener *l;

	if (tcp_count >= TCP_MAX_FORWARDS)
		return -1;
	l = &tcp_listeners[tcp_count];
	if (parse_spec(spec, host, sizeof(host), port, sizeof(port), &l->guest_port))
		return -1;
	l->fd = listen_tcp(host, port);
	if (l->fd < 0)
		return -1;
	l->ep.kind = EP_TCP_LISTEN;
	ev.data.ptr = &l->ep;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, l->fd, &ev) < 0) {
		close(l->fd);
		return -1;
	}
	snprintf(l->spec, sizeof(l->spec), "%s:%u", host, bound_port(l->fd));
	fprintf(stderr, "ringside-vhost-vsock: forwarding tcp %s to guest port %u\n", l->spec,
		l->guest_port);
	tcp_count++;
	return 0;
}

/* One accepted client: a REQUEST to the guest, like a hybrid CONNECT line. */
static void tcp_start(struct vsock_dev *d, int fd, uint32_t guest_port)
{
	struct conn *c;
	int one = 1;

	/* no guest, no connection: the client sees EOF at once */
	if (!d->vq_ready[VQ_RX] || !d->vq_ready[VQ_TX]) {
		close(fd);
		return;
	}
	/* ping-pong clients want each message out now */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c = conn_new(d, fd, ST_REQUEST, VSOCK_TYPE_STREAM);
	if (!c) {
		close(fd);
		return;
	}
	c->tcp = true;
	c->guest_port = guest_port;
	do {
		c->host_port = d->next_host_port++;
		if (d->next_host_port == 0)
			d->next_host_port = 1u << 30;
	} while (conn_find(d, c->host_port, c->guest_port));
	conn_hash_add(d, c);
	c->readable = true;
	c->pending |= P_REQUEST;
	c->deadline = now_ms() + CONNECT_TIMEOUT_MS;
	stats.conns_host++;
	stats.conns_tcp++;
	work_add(d, c);
}

void tcp_accept(struct vsock_dev *d, struct ep_src *src)
{
	struct tcp_listener *l = (struct tcp_listener *)src;

	for (;;) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		tcp_start(d, fd, l->guest_port);
	}
}

/*
 * The guest reset c. A reset after the guest's full SHUTDOWN is an
 * orderly close (Linux ends every connection so); any other reset, a
 * refused REQUEST included, the TCP client sees as a reset too.
 */
void tcp_guest_reset(struct conn *c)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (!c->tcp || c->fd < 0 || c->state == ST_CLOSING ||
	    c->guest_shut == (VSOCK_SHUTDOWN_SEND | VSOCK_SHUTDOWN_RCV))
		return;
	setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	stats.tcp_resets_tx++;
}

void tcp_close_listeners(void)
{
	for (unsigned i = 0; i < tcp_count; i++)
		close(tcp_listeners[i].fd);
	tcp_count = 0;
}

void tcp_note_reset(struct conn *c, int err)
{
	if (!c->tcp || c->tcp_reset || (err != ECONNRESET && err != EPIPE))
		return;
	c->tcp_reset = true;
	stats.tcp_resets_rx++;
}

bool tcp_reset_seen(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (!c->tcp || getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return false;
	tcp_note_reset(c, err);
	return c->tcp_reset;
}
