/* SPDX-License-Identifier: MIT */
/* ringside-bench: shared definitions of the benchmark client. */
#ifndef RB_BENCH_H
#define RB_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The services every ringside guest (and the Linux baseline) runs. */
#define PORT_ECHO 1234
#define PORT_SINK 1235
#define PORT_SOURCE 1236

/* The one data pattern: byte at stream offset i. */
static inline uint8_t pattern_byte(uint64_t i)
{
	return (uint8_t)(i % 251);
}

void pattern_fill(uint8_t *p, size_t n, uint64_t off);
/* Offset (relative to p) of the first byte that is wrong, or -1. */
long long pattern_check(const uint8_t *p, size_t n, uint64_t off);

struct bench_opts {
	const char *uds; /* hybrid vsock: Unix socket of the back end */
	unsigned cid; /* AF_VSOCK peer when uds is NULL */
	const char *tcp; /* HOST:PORT of a back end's --forward-tcp (it picks the guest port) */
	int port; /* -1: the service's default port */
	bool json, progress;
	/* pingpong */
	size_t sizes[64];
	unsigned nsizes;
	unsigned long count, warmup;
	double time_s; /* 0: use count */
	/* stream */
	size_t len; /* -l */
	unsigned parallel; /* -P */
	bool g2h; /* --dir g2h: read from the source */
	const char *cpu_pids;
	/* rr */
	unsigned sessions[64];
	unsigned nsessions;
	const char *trace; /* pingpong: one line per measured round trip */
	const char *cost_shm; /* the ringside-cost plugin's block: guest cost per round trip */
	const char *udp; /* HOST:PORT of a UDP echo instead of vsock */
	double udp_timeout_s; /* resend an unanswered UDP request */
	double timeout_s; /* a guest port silent this long is an error (--timeout) */
};

/* pingpong, stream or rr: every runtime error names it */
extern const char *bench_mode;

/*
 * The one line of a failure, "ringside-bench: MODE: " and the message,
 * then exit(@status). Threads may fail at once: the first one reports.
 */
void bench_fail(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/*
 * A read or write on the connection to @port failed (errno; 0 for EOF):
 * report it as bench_fail(1, ...) naming the port, the stream offset and,
 * for a timeout, --timeout.
 */
void bench_io_fail(const struct bench_opts *o, unsigned port, bool reading, unsigned long long off)
	__attribute__((noreturn));

/* connect.c: a connected stream socket to port, or exit with a message */
int bench_connect(const struct bench_opts *o, unsigned port);
uint64_t now_ns(void);
int write_all(int fd, const void *p, size_t n); /* 0 ok, -1 error (errno) */
int read_all(int fd, void *p, size_t n); /* 0 ok, -1 error (errno) or EOF (errno 0) */

/* guest_cost.c: the cost plugin's counters, read live */
struct guest_cost {
	void *map;
	size_t len;
	const char *vcpus;
	uint32_t n_vcpus, stride;
};

struct guest_cost_sample {
	uint64_t insns, halts, idle_ns;
};

int guest_cost_open(struct guest_cost *gc, const char *path); /* 0 or -1 (printed) */
void guest_cost_read(const struct guest_cost *gc, struct guest_cost_sample *s);

int run_pingpong(const struct bench_opts *o);
int run_stream(const struct bench_opts *o);
int run_rr(const struct bench_opts *o);

#endif
