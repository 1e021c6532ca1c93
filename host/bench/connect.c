// SPDX-License-Identifier: MIT
/*
 * Reaching a guest port: AF_VSOCK (--cid) on hosts with vhost-vsock, or
 * hybrid vsock (--uds) through a back end's Unix socket: write
 * "CONNECT <port>\n", read "OK <hostport>\n", then the socket is the
 * stream (the convention of Firecracker and vhost-device-vsock); or TCP
 * (--tcp) to a back end's --forward-tcp listener, which names the guest
 * port itself.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "bench.h"

const char *bench_mode = "";

void bench_fail(int status, const char *fmt, ...)
{
	/* never unlocked: a second failing thread waits here until we exit */
	static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
	va_list ap;

	pthread_mutex_lock(&once);
	fprintf(stderr, "ringside-bench: %s: ", bench_mode);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* What went wrong on a connection, errno 0 being EOF. */
static const char *io_error(const struct bench_opts *o, char *buf, size_t n)
{
	if (errno == 0)
		return "connection closed";
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINPROGRESS) {
		snprintf(buf, n, "timed out after %g s (--timeout)", o->timeout_s);
		return buf;
	}
	return strerror(errno);
}

void bench_io_fail(const struct bench_opts *o, unsigned port, bool reading, unsigned long long off)
{
	char why[64];
	const char *e = io_error(o, why, sizeof(why));

	if (o->tcp)
		bench_fail(1, "%s %s at offset %llu: %s", reading ? "reading from" : "writing to",
			   o->tcp, off, e);
	bench_fail(1, "%s port %u at offset %llu: %s", reading ? "reading from" : "writing to",
		   port, off, e);
}

/*
 * Reads and writes give up after --timeout: a port that never answers
 * (the sink, a guest that hung) is an error, not a hang. On Linux the
 * send timeout bounds connect() too.
 */
static void set_timeouts(int fd, const struct bench_opts *o)
{
	struct timeval tv = {
		.tv_sec = (time_t)o->timeout_s,
		.tv_usec = (suseconds_t)((o->timeout_s - (time_t)o->timeout_s) * 1e6),
	};

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		bench_fail(2, "setting --timeout: %s", strerror(errno));
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void pattern_fill(uint8_t *p, size_t n, uint64_t off)
{
	uint8_t v = off % 251;

	for (size_t i = 0; i < n; i++) {
		p[i] = v;
		if (++v == 251)
			v = 0;
	}
}

long long pattern_check(const uint8_t *p, size_t n, uint64_t off)
{
	uint8_t v = off % 251;

	for (size_t i = 0; i < n; i++) {
		if (p[i] != v)
			return i;
		if (++v == 251)
			v = 0;
	}
	return -1;
}

int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= w;
	}
	return 0;
}

int read_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = 0; /* EOF */
		if (r <= 0)
			return -1;
		p = (char *)p + r;
		n -= r;
	}
	return 0;
}

static int connect_uds(const struct bench_opts *o, unsigned port)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = o->uds;
	char line[64], why[64];
	unsigned n = 0;
	ssize_t r = 0;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		bench_fail(2, "--uds %s: path too long (at most %zu bytes)", path,
			   sizeof(sa.sun_path) - 1);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		bench_fail(2, "socket: %s", strerror(errno));
	set_timeouts(fd, o);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		bench_fail(2, "connecting to %s: %s (is the vsock back end running?)", path,
			   strerror(errno));
	n = snprintf(line, sizeof(line), "CONNECT %u\n", port);
	if (write_all(fd, line, n) < 0)
		bench_fail(2,
			   "sending CONNECT %u to %s: %s (is a guest running behind the back "
			   "end, and does its port %u answer?)",
			   port, path, io_error(o, why, sizeof(why)), port);
	/* byte by byte: the stream starts right after the newline */
	for (n = 0; n < sizeof(line) - 1;) {
		r = read(fd, &line[n], 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1 || line[n++] == '\n')
			break;
	}
	if (r != 1) {
		if (r == 0)
			errno = 0;
		bench_fail(2,
			   "no \"OK\" for CONNECT %u on %s: %s (is a guest running behind the "
			   "back end, and does its port %u answer?)",
			   port, path, io_error(o, why, sizeof(why)), port);
	}
	if (n && line[n - 1] == '\n')
		n--;
	line[n] = 0;
	if (strncmp(line, "OK ", 3))
		bench_fail(
			2,
			"no \"OK\" for CONNECT %u on %s: got '%.40s' (is %s a hybrid vsock socket?)",
			port, path, line, path);
	return fd;
}

static int connect_vsock(const struct bench_opts *o, unsigned port)
{
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK,
		.svm_cid = o->cid,
		.svm_port = port,
	};
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		bench_fail(2, "vsock socket: %s", strerror(errno));
	set_timeouts(fd, o);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		bench_fail(2, "connecting to vsock %u:%u: %s (does the guest's port %u answer?)",
			   o->cid, port, strerror(errno), port);
	return fd;
}

/* HOST:PORT ([v6]:PORT too); latency runs want every write out at once. */
static int connect_tcp(const struct bench_opts *o)
{
	const char *spec = o->tcp;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	const char *colon = strrchr(spec, ':');
	char host[128];
	size_t n = colon ? (size_t)(colon - spec) : 0;
	int fd, err, one = 1;

	if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']') {
		spec++;
		n -= 2;
	}
	if (!colon || n == 0 || n >= sizeof(host))
		bench_fail(2, "--tcp: expected HOST:PORT, got '%s'", o->tcp);
	memcpy(host, spec, n);
	host[n] = 0;
	err = getaddrinfo(host, colon + 1, &hints, &ai);
	if (err)
		bench_fail(2, "--tcp %s: %s", o->tcp, gai_strerror(err));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		bench_fail(2, "socket: %s", strerror(errno));
	set_timeouts(fd, o);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0)
		bench_fail(2, "connecting to %s: %s (is the back end's --forward-tcp listening?)",
			   o->tcp, strerror(errno));
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int bench_connect(const struct bench_opts *o, unsigned port)
{
	if (o->tcp)
		return connect_tcp(o);
	if (o->uds)
		return connect_uds(o, port);
	return connect_vsock(o, port);
}
