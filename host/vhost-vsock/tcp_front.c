// SPDX-License-Identifier: MIT
/*
 * The TCP front: --forward-tcp [ADDR:]HOSTPORT=GUESTPORT listens on a TCP
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

/*
 * A port number, all decimal digits, in [min, 65535]: strtoul would
 * take "-1" and "0x10", and getaddrinfo() takes "99999" and truncates it
 * to 16 bits. -1 if not.
 */
static long port_number(const char *s, size_t n, long min)
{
	long v = 0;

	if (n == 0 || n > 5 || strspn(s, "0123456789") < n)
		return -1;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v >= min && v <= 65535 ? v : -1;
}

/*
 * "[ADDR:]HOSTPORT=GUESTPORT"; ADDR may be [v6]. NULL on success, else
 * what is wrong, written to @err.
 */
static const char *parse_spec(const char *spec, char *host, size_t host_len, char *port,
			      size_t port_len, uint32_t *guest_port, char *err, size_t err_len)
{
	const char *eq = strchr(spec, '='), *colon, *hp = spec;
	long v;
	size_t n;

	if (!eq || eq == spec || !eq[1] || strchr(eq + 1, '='))
		goto format;
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
			goto format;
		memcpy(host, h, n);
		host[n] = 0;
		hp = colon + 1;
	}
	n = eq - hp;
	if (n == 0 || strspn(hp, "0123456789") < n)
		goto format;
	/* 0 asks the kernel for a free port */
	if (port_number(hp, n, 0) < 0 || n >= port_len) {
		snprintf(err, err_len, "HOSTPORT '%.*s' in '%s' is not 0..65535", (int)n, hp, spec);
		return err;
	}
	memcpy(port, hp, n);
	port[n] = 0;
	if (strspn(eq + 1, "0123456789") != strlen(eq + 1))
		goto format;
	v = port_number(eq + 1, strlen(eq + 1), 1);
	if (v < 0) {
		snprintf(err, err_len, "GUESTPORT '%s' in '%s' is not 1..65535", eq + 1, spec);
		return err;
	}
	*guest_port = v;
	return NULL;
format:
	snprintf(err, err_len, "expected [ADDR:]HOSTPORT=GUESTPORT, got '%s'", spec);
	return err;
}

const char *tcp_forward_check(const char *spec, char *err, size_t err_len)
{
	char host[64], port[8];
	uint32_t guest_port;

	return parse_spec(spec, host, sizeof(host), port, sizeof(port), &guest_port, err, err_len);
}

/* -1 with the reason in @err */
static int listen_tcp(const char *host, const char *port, char *err, size_t err_len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	int fd, one = 1, e;

	e = getaddrinfo(host, port, &hints, &ai);
	if (e) {
		snprintf(err, err_len, "cannot resolve '%s': %s", host, gai_strerror(e));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
			e = errno;
			close(fd);
			errno = e;
			fd = -1;
		}
	}
	if (fd < 0)
		snprintf(err, err_len, "cannot listen on %s%s%s:%s: %s",
			 ai->ai_family == AF_INET6 ? "[" : "", host,
			 ai->ai_family == AF_INET6 ? "]" : "", port, strerror(errno));
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
int tcp_forward_add(struct vsock_dev *d, const char *spec, char *err, size_t err_len)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char host[64], port[8];
	struct tcp_listener *l;

	if (tcp_count >= TCP_MAX_FORWARDS) {
		snprintf(err, err_len, "at most %d", TCP_MAX_FORWARDS);
		return -1;
	}
	l = &tcp_listeners[tcp_count];
	if (parse_spec(spec, host, sizeof(host), port, sizeof(port), &l->guest_port, err, err_len))
		return -1;
	l->fd = listen_tcp(host, port, err, err_len);
	if (l->fd < 0)
		return -1;
	l->ep.kind = EP_TCP_LISTEN;
	ev.data.ptr = &l->ep;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, l->fd, &ev) < 0) {
		snprintf(err, err_len, "epoll_ctl: %s", strerror(errno));
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
