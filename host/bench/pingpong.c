// SPDX-License-Identifier: MIT
/*
 * pingpong: send SIZE bytes to the echo port, wait until all SIZE come
 * back, record the round trip (fio's pingpong=1 on a vsock/unix job does
 * the same). Warm-up rounds first; then --count rounds or --time seconds.
 * Latency percentiles in ns as in the table of Linux's vsock TX fast path (efcd71af38be).
 *
 * --trace FILE keeps every measured round trip in order; with --cost-shm
 * the guest's counters are read right before each round trip starts, so
 * consecutive readings split all the guest's instructions between round
 * trips (its work after a reply counts to the round trip that caused it)
 * and a slow round trip can be told apart from an expensive one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

struct pp_result {
	size_t size;
	unsigned long n;
	double p1, p50, mean, p99, p999, max;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of sorted v */
static double pct(const uint64_t *v, unsigned long n, double p)
{
	unsigned long i = (unsigned long)(p / 100.0 * (n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

/* One measured round trip for --trace: latency and the guest's counters at its start. */
struct pp_sample {
	uint64_t ns;
	struct guest_cost_sample at;
};

/*
 * One round trip; exits on a mismatch with the stream offset. With gc,
 * the guest's counters go to *at just before the clock starts.
 */
static uint64_t round_trip(const struct bench_opts *o, unsigned port, int fd, uint8_t *tx,
			   uint8_t *rx, size_t size, uint64_t *off, const struct guest_cost *gc,
			   struct guest_cost_sample *at)
{
	uint64_t t0, t1;
	long long bad;

	pattern_fill(tx, size, *off);
	if (gc)
		guest_cost_read(gc, at);
	t0 = now_ns();
	if (write_all(fd, tx, size) < 0)
		bench_io_fail(o, port, false, *off);
	if (read_all(fd, rx, size) < 0)
		bench_io_fail(o, port, true, *off);
	t1 = now_ns();
	bad = pattern_check(rx, size, *off);
	if (bad >= 0)
		bench_fail(3, "mismatch at offset %llu: got %u want %u",
			   (unsigned long long)(*off + bad), rx[bad], pattern_byte(*off + bad));
	*off += size;
	return t1 - t0;
}

static void *grow(void *p, unsigned long n, size_t size)
{
	p = realloc(p, n * size);
	if (!p) {
		bench_fail(2, "realloc: %s", strerror(errno));
	}
	return p;
}

/*
 * One line per round trip: size, index, ns and, with the guest's
 * counters, its instructions, halts and halted ns until the next one
 * started (the last round trip has no next reading and is left out).
 */
static void write_trace(FILE *f, size_t size, const struct pp_sample *t, unsigned long n, bool cost)
{
	for (unsigned long i = 0; i < n; i++) {
		if (!cost) {
			fprintf(f, "%zu %lu %llu\n", size, i, (unsigned long long)t[i].ns);
			continue;
		}
		if (i + 1 == n)
			break;
		fprintf(f, "%zu %lu %llu %llu %llu %llu\n", size, i, (unsigned long long)t[i].ns,
			(unsigned long long)(t[i + 1].at.insns - t[i].at.insns),
			(unsigned long long)(t[i + 1].at.halts - t[i].at.halts),
			(unsigned long long)(t[i + 1].at.idle_ns - t[i].at.idle_ns));
	}
}

static void one_size(const struct bench_opts *o, size_t size, struct pp_result *r,
		     const struct guest_cost *gc, FILE *trace)
{
	unsigned port = o->port >= 0 ? (unsigned)o->port : PORT_ECHO;
	int fd = bench_connect(o, port);
	uint8_t *tx = malloc(size), *rx = malloc(size);
	unsigned long cap = o->time_s ? 65536 : o->count, n = 0;
	uint64_t *v = malloc(cap * sizeof(*v)), off = 0, sum = 0;
	struct pp_sample *t = trace ? malloc(cap * sizeof(*t)) : NULL;
	struct guest_cost_sample scratch;
	uint64_t start, end, last_progress;

	if (!tx || !rx || !v || (trace && !t)) {
		bench_fail(2, "malloc: %s", strerror(errno));
	}
	for (unsigned long i = 0; i < o->warmup; i++)
		round_trip(o, port, fd, tx, rx, size, &off, NULL, NULL);
	start = last_progress = now_ns();
	end = start + (uint64_t)(o->time_s * 1e9);
	for (;;) {
		if (o->time_s ? now_ns() >= end : n >= o->count)
			break;
		if (n == cap) {
			cap *= 2;
			v = grow(v, cap, sizeof(*v));
			if (t)
				t = grow(t, cap, sizeof(*t));
		}
		v[n] = round_trip(o, port, fd, tx, rx, size, &off, t ? gc : NULL,
				  t ? &t[n].at : &scratch);
		if (t)
			t[n].ns = v[n];
		sum += v[n++];
		if (o->progress && now_ns() - last_progress > 1000000000ull) {
			last_progress = now_ns();
			fprintf(stderr, "pingpong %zu B: %lu rounds, mean %.0f ns\n", size, n,
				(double)sum / n);
		}
	}
	close(fd);
	if (t)
		write_trace(trace, size, t, n, gc != NULL);
	free(t);
	qsort(v, n, sizeof(*v), cmp_u64);
	r->size = size;
	r->n = n;
	if (n) {
		r->p1 = pct(v, n, 1);
		r->p50 = pct(v, n, 50);
		r->mean = (double)sum / n;
		r->p99 = pct(v, n, 99);
		r->p999 = pct(v, n, 99.9);
		r->max = v[n - 1];
	}
	free(tx);
	free(rx);
	free(v);
}

/* --trace and --cost-shm; exits with a message if either cannot be opened */
static FILE *open_trace(const struct bench_opts *o, struct guest_cost *gc, bool *have_gc)
{
	FILE *f;

	*have_gc = false;
	if (o->cost_shm) {
		if (guest_cost_open(gc, o->cost_shm) < 0)
			exit(2);
		*have_gc = true;
	}
	if (!o->trace)
		return NULL;
	f = fopen(o->trace, "w");
	if (!f) {
		fprintf(stderr, "ringside-bench: --trace %s: %s\n", o->trace, strerror(errno));
		exit(2);
	}
	fprintf(f, "# size round ns%s\n", *have_gc ? " guest_insns guest_halts guest_idle_ns" : "");
	return f;
}

int run_pingpong(const struct bench_opts *o)
{
	struct pp_result r[64];
	struct guest_cost gc;
	bool have_gc;
	FILE *trace = open_trace(o, &gc, &have_gc);

	for (unsigned i = 0; i < o->nsizes; i++)
		one_size(o, o->sizes[i], &r[i], have_gc ? &gc : NULL, trace);
	if (trace && fclose(trace)) {
		fprintf(stderr, "ringside-bench: --trace %s: %s\n", o->trace, strerror(errno));
		return 1;
	}
	if (o->json) {
		printf("{\"mode\": \"pingpong\", \"unit\": \"ns\", \"results\": [");
		for (unsigned i = 0; i < o->nsizes; i++)
			printf("%s\n  {\"size\": %zu, \"count\": %lu, \"p1\": %.0f, "
			       "\"p50\": %.0f, \"mean\": %.2f, \"p99\": %.0f, "
			       "\"p99_9\": %.0f, \"max\": %.0f}",
			       i ? "," : "", r[i].size, r[i].n, r[i].p1, r[i].p50, r[i].mean,
			       r[i].p99, r[i].p999, r[i].max);
		printf("\n]}\n");
		return 0;
	}
	printf("pingpong (host-guest-host round trip), ns\n");
	printf("%8s %8s %10s %10s %12s %10s %10s %10s\n", "size", "rounds", "1st perc.", "50th",
	       "mean", "99th", "99.9th", "max");
	for (unsigned i = 0; i < o->nsizes; i++)
		printf("%8zu %8lu %10.0f %10.0f %12.2f %10.0f %10.0f %10.0f\n", r[i].size, r[i].n,
		       r[i].p1, r[i].p50, r[i].mean, r[i].p99, r[i].p999, r[i].max);
	return 0;
}
