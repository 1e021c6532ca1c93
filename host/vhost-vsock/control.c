// SPDX-License-Identifier: MIT
/*
 * The control socket (--control PATH): a program connects, writes one
 * request line and reads one line of JSON back, then the back end closes.
 *
 *   counters       {"counters": {...every counter...}, "inject": {...}}
 *   inject stop    the same, after injecting stopped (as SIGUSR1 does)
 *
 * Anything else is answered {"error": "..."}. A request longer than a line
 * buffer, or a client that never finishes its line, is dropped: the data
 * path never waits on a control client.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control.h"
#include "inject.h"
#include "stats.h"

#define REQUEST_MAX 64
#define REPLY_MAX 4096

struct ctl_conn {
	struct ep_src src; /* first: epoll hands back &src */
	int fd;
	size_t len;
	char line[REQUEST_MAX];
};

/* One "name":value member per counter, in STATS_LIST's order. */
static size_t counters_json(char *buf, size_t cap)
{
	const char *sep = "";
	size_t n = snprintf(buf, cap, "{\"counters\":{");

#define STATS_JSON(name)                                                     \
	if (n < cap)                                                         \
		n += snprintf(buf + n, cap - n, "%s\"%s\":%llu", sep, #name, \
			      (unsigned long long)stats.name);               \
	sep = ",";
	STATS_LIST(STATS_JSON)
#undef STATS_JSON
	if (n < cap)
		n += snprintf(buf + n, cap - n, "},\"inject\":");
	if (n < cap)
		n += inject_json(buf + n, cap - n);
	if (n < cap)
		n += snprintf(buf + n, cap - n, "}\n");
	return n;
}

static void reply(struct ctl_conn *c, const char *req)
{
	char out[REPLY_MAX];
	size_t n;

	if (!strcmp(req, "inject stop"))
		inject_stop();
	if (!strcmp(req, "counters") || !strcmp(req, "inject stop"))
		n = counters_json(out, sizeof(out));
	else
		n = snprintf(out, sizeof(out),
			     "{\"error\":\"unknown request (counters, inject stop)\"}\n");
	if (n >= sizeof(out))
		n = snprintf(out, sizeof(out), "{\"error\":\"reply too long\"}\n");
	/* a fresh socket's buffer takes a reply this small whole, or the client is gone */
	if (send(c->fd, out, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)n)
		stats.host_io_errors++;
}

static void close_conn(struct vsock_dev *d, struct ctl_conn *c)
{
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
}

void control_accept(struct vsock_dev *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ctl_conn *c;
	int fd = accept4(d->ctl_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->src.kind = EP_CTL_CONN;
	c->fd = fd;
	ev.data.ptr = &c->src;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		free(c);
	}
}

void control_event(struct vsock_dev *d, struct ep_src *src)
{
	struct ctl_conn *c = (struct ctl_conn *)src;
	ssize_t n = read(c->fd, c->line + c->len, sizeof(c->line) - 1 - c->len);
	char *eol;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_conn(d, c);
		return;
	}
	c->len += n;
	c->line[c->len] = '\0';
	eol = strchr(c->line, '\n');
	if (!eol && c->len < sizeof(c->line) - 1)
		return; /* the rest of the line is on its way */
	if (eol) {
		*eol = '\0';
		if (eol > c->line && eol[-1] == '\r')
			eol[-1] = '\0';
		reply(c, c->line);
	}
	close_conn(d, c);
}
