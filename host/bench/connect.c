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
		if (r <= 0)
			return -1;
		p = (char *)p + r;
		n -= r;
	}
	return 0;
}

static int connect_uds(const char *path, unsigned port)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[64];
	unsigned n = 0;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "ringside-bench: --uds path too long\n");
		exit(2);
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "ringside-bench: connect %s: %s\n", path, strerror(errno));
		exit(2);
	}
	n = snprintf(line, sizeof(line), "CONNECT %u\n", port);
	if (write_all(fd, line, n) < 0)
		goto bad;
	/* byte by byte: the stream starts right after the newline */
	for (n = 0; n < sizeof(line) - 1; n++) {
		if (read(fd, &line[n], 1) != 1)
			goto bad;
		if (line[n] == '\n')
			break;
	}
	line[n] = 0;
	if (strncmp(line, "OK ", 3)) {
		line[n] = 0;
		goto bad;
	}
	return fd;
bad:
	fprintf(stderr,
		"ringside-bench: %s: no \"OK\" for CONNECT %u (nothing "
		"listening in the guest?)\n",
		path, port);
	exit(2);
}

static int connect_vsock(unsigned cid, unsigned port)
{
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK,
		.svm_cid = cid,
		.svm_port = port,
	};
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "ringside-bench: vsock %u:%u: %s\n", cid, port, strerror(errno));
		exit(2);
	}
	return fd;
}

/* HOST:PORT ([v6]:PORT too); latency runs want every write out at once. */
static int connect_tcp(const char *spec)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	const char *colon = strrchr(spec, ':');
	char host[128];
	size_t n = colon ? (size_t)(colon - spec) : 0;
	int fd, one = 1;

	if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']') {
		spec++;
		n -= 2;
	}
	if (!colon || n == 0 || n >= sizeof(host)) {
		fprintf(stderr, "ringside-bench: --tcp wants HOST:PORT\n");
		exit(2);
	}
	memcpy(host, spec, n);
	host[n] = 0;
	if (getaddrinfo(host, colon + 1, &hints, &ai)) {
		fprintf(stderr, "ringside-bench: --tcp %s: bad address\n", host);
		exit(2);
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		fprintf(stderr, "ringside-bench: connect %s:%s: %s\n", host, colon + 1,
			strerror(errno));
		exit(2);
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int bench_connect(const struct bench_opts *o, unsigned port)
{
	if (o->tcp)
		return connect_tcp(o->tcp);
	if (o->uds)
		return connect_uds(o->uds, port);
	return connect_vsock(o->cid, port);
}
