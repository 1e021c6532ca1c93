// SPDX-License-Identifier: MIT
/*
 * rr: request/response with many sessions at once, like netperf TCP_RR and
 * UDP_RR with -P N. Each session is a closed loop: write a request of
 * SIZE bytes, read the SIZE byte response (the echo service returns the
 * request), check every byte, start the next. All sessions run from one
 * epoll loop, no thread per session. Transactions per second (total and
 * per session), latency percentiles over all transactions, and Jain's
 * fairness index over the sessions' transaction counts.
 *
 * Over vsock (--uds, --cid) a session is a stream connection to the echo
 * port; with --udp HOST:PORT it is a connected UDP socket to a UDP echo
 * (RFC 862). UDP may lose datagrams: a request unanswered for
 * --udp-timeout is sent again (counted); an answer to an older request
 * (its pattern is the previous offset's) is dropped and counted.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

#include "bench.h"

struct session {
	int fd;
	unsigned index;
	uint64_t off; /* pattern offset of the current request */
	size_t sent, got; /* bytes of the current request/response */
	uint64_t t0; /* start of the current transaction */
	uint64_t asked; /* its first send: t0 moves on a UDP resend, this does not */
	unsigned long done; /* transactions completed */
	unsigned long measured; /* of those, inside the measured window */
	bool want_out; /* registered for EPOLLOUT */
};

struct rr_run {
	const struct bench_opts *o;
	size_t size;
	unsigned nsess;
	unsigned port; /* the guest's, over vsock */
	struct session *s;
	int ep;
	uint8_t *tx, *rx;
	uint64_t *lat; /* latencies of measured transactions */
	unsigned long nlat, cap;
	uint64_t start, end; /* measured window; start 0 until warm */
	unsigned warm; /* sessions through their warm-up */
	unsigned long retransmits, stale;
};

struct rr_result {
	unsigned sessions;
	size_t size;
	double seconds, tps, mean, p50, p90, p99, p999, max;
	double jain, slowest_tps;
	unsigned long n, retransmits, stale;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, unsigned long n, double p)
{
	unsigned long i = (unsigned long)(p / 100.0 * (n - 1) + 0.5);

	return n ? v[i < n ? i : n - 1] : 0;
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		bench_fail(2, "fcntl: %s", strerror(errno));
	}
}

/* A connected UDP socket to HOST:PORT. */
static int connect_udp(const char *spec)
{
	char host[256], *colon;
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	int fd, err;

	if (strlen(spec) >= sizeof(host) || !(colon = strrchr(spec, ':')))
		bench_fail(2, "--udp: expected HOST:PORT, got '%s'", spec);
	memcpy(host, spec, colon - spec);
	host[colon - spec] = 0;
	err = getaddrinfo(host, colon + 1, &hints, &ai);
	if (err)
		bench_fail(2, "--udp %s: %s", spec, gai_strerror(err));
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0)
		bench_fail(2, "connecting to udp %s: %s", spec, strerror(errno));
	freeaddrinfo(ai);
	return fd;
}

static void watch(struct rr_run *r, struct session *s, bool out)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (out ? EPOLLOUT : 0),
		.data.ptr = s,
	};

	if (s->want_out == out)
		return;
	s->want_out = out;
	if (epoll_ctl(r->ep, EPOLL_CTL_MOD, s->fd, &ev) < 0) {
		bench_fail(2, "epoll_ctl: %s", strerror(errno));
	}
}

/* A session's connection failed (errno; 0 for EOF): one line, exit 1. */
static void lost(const struct rr_run *r, const struct session *s, bool reading)
{
	const char *e = errno ? strerror(errno) : "connection closed";
	const char *dir = reading ? "reading from" : "writing to";

	if (r->o->udp || r->o->tcp)
		bench_fail(1, "session %u: %s %s at offset %llu: %s", s->index, dir,
			   r->o->udp ? r->o->udp : r->o->tcp, (unsigned long long)s->off, e);
	bench_fail(1, "session %u: %s port %u at offset %llu: %s", s->index, dir, r->port,
		   (unsigned long long)s->off, e);
}

/* A request unanswered for --timeout ends the run (checked every 100 ms). */
static void check_timeouts(struct rr_run *r, uint64_t now, uint64_t *last)
{
	uint64_t limit = (uint64_t)(r->o->timeout_s * 1e9);

	if (now - *last < 100000000ull)
		return;
	*last = now;
	for (unsigned i = 0; i < r->nsess; i++) {
		const struct session *s = &r->s[i];

		if (now - s->asked < limit)
			continue;
		if (r->o->udp || r->o->tcp)
			bench_fail(1, "session %u: no answer from %s in %g s (--timeout)", s->index,
				   r->o->udp ? r->o->udp : r->o->tcp, r->o->timeout_s);
		bench_fail(1, "session %u: no answer from port %u in %g s (--timeout)", s->index,
			   r->port, r->o->timeout_s);
	}
}

static void mismatch(const struct session *s, const uint8_t *p, long long bad, uint64_t off)
{
	fprintf(stderr,
		"ringside-bench: rr: session %u: mismatch at offset "
		"%llu: got %u want %u\n",
		s->index, (unsigned long long)(off + bad), p[bad], pattern_byte(off + bad));
	exit(3);
}

/* Write what is left of the current request (all of it for UDP). */
static void send_request(struct rr_run *r, struct session *s)
{
	size_t left = r->size - s->sent;
	ssize_t w;

	pattern_fill(r->tx, left, s->off + s->sent);
	w = send(s->fd, r->tx, left, MSG_NOSIGNAL);
	if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
		watch(r, s, true);
		return;
	}
	if (w < 0 && r->o->udp && errno == ECONNREFUSED)
		w = 0; /* ICMP unreachable from an earlier datagram */
	if (w < 0)
		lost(r, s, false);
	s->sent += w;
	if (r->o->udp)
		s->sent = r->size;
	watch(r, s, s->sent < r->size);
}

static void start_transaction(struct rr_run *r, struct session *s)
{
	s->sent = s->got = 0;
	s->t0 = s->asked = now_ns();
	send_request(r, s);
}

static void record(struct rr_run *r, struct session *s, uint64_t t1)
{
	if (!r->start || s->t0 < r->start || t1 > r->end)
		return;
	if (r->nlat == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 65536;
		r->lat = realloc(r->lat, r->cap * sizeof(*r->lat));
		if (!r->lat) {
			bench_fail(2, "realloc: %s", strerror(errno));
		}
	}
	r->lat[r->nlat++] = t1 - s->t0;
	s->measured++;
}

/* The response is complete: account it and go on. */
static void complete(struct rr_run *r, struct session *s, uint64_t t1)
{
	record(r, s, t1);
	s->off += r->size;
	if (++s->done == r->o->warmup && !r->start && ++r->warm == r->nsess) {
		r->start = t1;
		r->end = t1 + (uint64_t)(r->o->time_s * 1e9);
	}
	if (r->start && t1 >= r->end)
		return; /* this session is finished */
	start_transaction(r, s);
}

static void read_udp(struct rr_run *r, struct session *s)
{
	for (;;) {
		ssize_t n = recv(s->fd, r->rx, r->size + 1, 0);
		long long bad;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0 && errno == ECONNREFUSED)
			continue;
		if (n < 0)
			lost(r, s, true);
		if ((size_t)n != r->size) {
			fprintf(stderr,
				"ringside-bench: rr: session %u: %zd byte "
				"answer to a %zu byte request\n",
				s->index, n, r->size);
			exit(3);
		}
		bad = pattern_check(r->rx, n, s->off);
		if (bad >= 0 && s->off >= r->size &&
		    pattern_check(r->rx, n, s->off - r->size) < 0) {
			r->stale++; /* a retransmitted request's 2nd echo */
			continue;
		}
		if (bad >= 0)
			mismatch(s, r->rx, bad, s->off);
		if (s->done >= r->o->warmup && r->start && now_ns() >= r->end)
			return;
		complete(r, s, now_ns());
	}
}

static void read_stream(struct rr_run *r, struct session *s)
{
	for (;;) {
		ssize_t n = read(s->fd, r->rx, r->size - s->got);
		long long bad;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n == 0)
			errno = 0; /* EOF */
		if (n <= 0)
			lost(r, s, true);
		bad = pattern_check(r->rx, n, s->off + s->got);
		if (bad >= 0)
			mismatch(s, r->rx, bad, s->off + s->got);
		s->got += n;
		if (s->got < r->size)
			continue;
		if (s->sent < r->size) {
			/* an echo cannot answer bytes we have not sent */
			fprintf(stderr,
				"ringside-bench: rr: session %u: response "
				"ahead of request\n",
				s->index);
			exit(3);
		}
		complete(r, s, now_ns());
		if (r->start && now_ns() >= r->end)
			return;
	}
}

static void open_sessions(struct rr_run *r)
{
	unsigned port = r->o->port >= 0 ? (unsigned)r->o->port : PORT_ECHO;

	r->port = port;
	r->ep = epoll_create1(EPOLL_CLOEXEC);
	if (r->ep < 0) {
		bench_fail(2, "epoll_create1: %s", strerror(errno));
	}
	for (unsigned i = 0; i < r->nsess; i++) {
		struct session *s = &r->s[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };

		s->index = i;
		/* distinct offsets: a response on the wrong session fails */
		s->off = (uint64_t)i * 97;
		s->fd = r->o->udp ? connect_udp(r->o->udp) : bench_connect(r->o, port);
		set_nonblock(s->fd);
		if (epoll_ctl(r->ep, EPOLL_CTL_ADD, s->fd, &ev) < 0) {
			bench_fail(2, "epoll_ctl: %s", strerror(errno));
		}
	}
}

/* UDP: send again every request unanswered for --udp-timeout. */
static void retransmit(struct rr_run *r, uint64_t now)
{
	uint64_t limit = (uint64_t)(r->o->udp_timeout_s * 1e9);

	for (unsigned i = 0; i < r->nsess; i++) {
		struct session *s = &r->s[i];

		if (r->start && now >= r->end)
			break;
		if (now - s->t0 < limit)
			continue;
		r->retransmits++;
		s->sent = 0;
		s->t0 = now; /* latency counts from the resend */
		send_request(r, s);
	}
}

static void progress(struct rr_run *r, uint64_t now, uint64_t *last)
{
	unsigned long done = 0;

	if (!r->o->progress || now - *last < 1000000000ull)
		return;
	*last = now;
	for (unsigned i = 0; i < r->nsess; i++)
		done += r->s[i].done;
	fprintf(stderr, "rr %u sessions x %zu B: %s, %lu transactions\n", r->nsess, r->size,
		r->start ? "measuring" : "warming up", done);
}

static void loop(struct rr_run *r)
{
	struct epoll_event ev[64];
	uint64_t last = now_ns(), last_check = last, warm_limit = last + 600000000000ull;

	for (unsigned i = 0; i < r->nsess; i++)
		start_transaction(r, &r->s[i]);
	if (!r->o->warmup) {
		r->start = now_ns();
		r->end = r->start + (uint64_t)(r->o->time_s * 1e9);
	}
	for (;;) {
		uint64_t now = now_ns();
		int n;

		if (r->start && now >= r->end)
			return;
		if (!r->start && now > warm_limit) {
			fprintf(stderr, "ringside-bench: rr: warm-up did not "
					"finish in 600 s\n");
			exit(1);
		}
		n = epoll_wait(r->ep, ev, 64, 100);
		if (n < 0 && errno != EINTR) {
			bench_fail(2, "epoll_wait: %s", strerror(errno));
		}
		for (int i = 0; i < n; i++) {
			struct session *s = ev[i].data.ptr;

			if (ev[i].events & EPOLLOUT && s->sent < r->size)
				send_request(r, s);
			if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				r->o->udp ? read_udp(r, s) : read_stream(r, s);
		}
		if (r->o->udp)
			retransmit(r, now_ns());
		check_timeouts(r, now_ns(), &last_check);
		progress(r, now_ns(), &last);
	}
}

static void summarize(struct rr_run *r, struct rr_result *res)
{
	double sum = 0, sq = 0, mean = 0, slowest = -1;
	double secs = (r->end - r->start) / 1e9;

	qsort(r->lat, r->nlat, sizeof(*r->lat), cmp_u64);
	for (unsigned long i = 0; i < r->nlat; i++)
		mean += r->lat[i];
	for (unsigned i = 0; i < r->nsess; i++) {
		double x = r->s[i].measured;

		sum += x;
		sq += x * x;
		if (slowest < 0 || x < slowest)
			slowest = x;
	}
	*res = (struct rr_result){
		.sessions = r->nsess,
		.size = r->size,
		.seconds = secs,
		.n = r->nlat,
		.tps = r->nlat / secs,
		.mean = r->nlat ? mean / r->nlat : 0,
		.p50 = pct(r->lat, r->nlat, 50),
		.p90 = pct(r->lat, r->nlat, 90),
		.p99 = pct(r->lat, r->nlat, 99),
		.p999 = pct(r->lat, r->nlat, 99.9),
		.max = r->nlat ? r->lat[r->nlat - 1] : 0,
		/* Jain: (sum x)^2 / (n sum x^2); 1 when all sessions are equal */
		.jain = sq > 0 ? sum * sum / (r->nsess * sq) : 0,
		.slowest_tps = slowest / secs,
		.retransmits = r->retransmits,
		.stale = r->stale,
	};
}

static void one_cell(const struct bench_opts *o, unsigned nsess, size_t size, struct rr_result *res)
{
	struct rr_run r = {
		.o = o,
		.size = size,
		.nsess = nsess,
		.s = calloc(nsess, sizeof(struct session)),
		.tx = malloc(size),
		.rx = malloc(size + 1),
	};

	if (!r.s || !r.tx || !r.rx) {
		bench_fail(2, "malloc: %s", strerror(errno));
	}
	open_sessions(&r);
	loop(&r);
	summarize(&r, res);
	for (unsigned i = 0; i < nsess; i++)
		close(r.s[i].fd);
	close(r.ep);
	free(r.s);
	free(r.tx);
	free(r.rx);
	free(r.lat);
}

static void print_json(const struct bench_opts *o, const struct rr_result *r, unsigned n)
{
	printf("{\"mode\": \"rr\", \"transport\": \"%s\", \"unit\": \"ns\", "
	       "\"results\": [",
	       o->udp ? "udp" : "vsock");
	for (unsigned i = 0; i < n; i++, r++)
		printf("%s\n  {\"sessions\": %u, \"size\": %zu, \"response\": %zu, "
		       "\"seconds\": %.3f, \"transactions\": %lu, \"tps\": %.1f, "
		       "\"tps_per_session\": %.2f, \"mean\": %.1f, \"p50\": %.0f, "
		       "\"p90\": %.0f, \"p99\": %.0f, \"p99_9\": %.0f, "
		       "\"max\": %.0f, \"jain\": %.4f, \"slowest_tps\": %.2f, "
		       "\"retransmits\": %lu, \"stale\": %lu}",
		       i ? "," : "", r->sessions, r->size, r->size, r->seconds, r->n, r->tps,
		       r->tps / r->sessions, r->mean, r->p50, r->p90, r->p99, r->p999, r->max,
		       r->jain, r->slowest_tps, r->retransmits, r->stale);
	printf("\n]}\n");
}

static void print_table(const struct bench_opts *o, const struct rr_result *r, unsigned n)
{
	printf("request/response over %s (response = request size), "
	       "latency in ns\n",
	       o->udp ? "UDP" : "vsock");
	printf("%8s %6s %9s %10s %9s %9s %9s %9s %9s %6s %9s\n", "sessions", "size", "trans", "tps",
	       "tps/sess", "p50", "p90", "p99", "p99.9", "jain", "slowest");
	for (unsigned i = 0; i < n; i++, r++)
		printf("%8u %6zu %9lu %10.1f %9.2f %9.0f %9.0f %9.0f %9.0f "
		       "%6.3f %9.2f\n",
		       r->sessions, r->size, r->n, r->tps, r->tps / r->sessions, r->p50, r->p90,
		       r->p99, r->p999, r->jain, r->slowest_tps);
	if (o->udp)
		for (r -= n; n--; r++)
			if (r->retransmits || r->stale)
				printf("  %u x %zu B: %lu retransmits, %lu late "
				       "answers dropped\n",
				       r->sessions, r->size, r->retransmits, r->stale);
}

int run_rr(const struct bench_opts *o)
{
	unsigned n = o->nsessions * o->nsizes, k = 0;
	struct rr_result *res = calloc(n, sizeof(*res));

	if (!res) {
		bench_fail(2, "malloc: %s", strerror(errno));
	}
	for (unsigned i = 0; i < o->nsessions; i++)
		for (unsigned j = 0; j < o->nsizes; j++)
			one_cell(o, o->sessions[i], o->sizes[j], &res[k++]);
	if (o->json)
		print_json(o, res, n);
	else
		print_table(o, res, n);
	free(res);
	return 0;
}
