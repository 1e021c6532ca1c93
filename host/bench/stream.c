// SPDX-License-Identifier: MIT
/*
 * stream: iperf-vsock style throughput. -P connections, each a thread:
 * h2g writes -l byte buffers of the pattern to the sink port, g2h reads
 * -l byte buffers from the source port and checks every byte. Gb/s with
 * G = 10^9. --cpu-pids adds CPU% of other processes (QEMU, the back end)
 * to ours for the efficiency of Linux's vsock throughput series, Mbps / CPU%.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

struct stream {
	const struct bench_opts *o;
	unsigned port;
	pthread_t thread;
	int fd;
	uint64_t bytes;
	uint64_t ns;
	volatile uint64_t progress_bytes;
};

static volatile int stop;

static void *stream_thread(void *arg)
{
	struct stream *s = arg;
	const struct bench_opts *o = s->o;
	uint8_t *buf = malloc(o->len);
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(o->time_s * 1e9);
	long long bad;
	ssize_t n;

	if (!buf) {
		bench_fail(2, "malloc: %s", strerror(errno));
	}
	while (!stop && now_ns() < end) {
		if (!o->g2h) {
			/* chunks continue the pattern where the last ended */
			pattern_fill(buf, o->len, s->bytes);
			if (write_all(s->fd, buf, o->len) < 0)
				bench_io_fail(o, s->port, false, s->bytes);
			s->bytes += o->len;
		} else {
			n = read(s->fd, buf, o->len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				errno = 0; /* EOF */
			if (n <= 0)
				bench_io_fail(o, s->port, true, s->bytes);
			bad = pattern_check(buf, n, s->bytes);
			if (bad >= 0)
				bench_fail(3, "mismatch at offset %llu: got %u want %u",
					   (unsigned long long)(s->bytes + bad), buf[bad],
					   pattern_byte(s->bytes + bad));
			s->bytes += n;
		}
		s->progress_bytes = s->bytes;
	}
	s->ns = now_ns() - t0;
	free(buf);
	return NULL;
}

/* utime + stime of a process in clock ticks; -1 if it is gone */
static long long proc_ticks(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return -1;
	/* fields after the command: state ... utime(14) stime(15) */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return ut + st;
}

static unsigned parse_pids(const char *s, int *pids, unsigned max)
{
	unsigned n = 0;

	pids[n++] = getpid();
	while (s && *s && n < max) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v <= 0)
			break; /* main() checked the list */
		pids[n++] = v;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

/*
 * Fairness across streams: Jain's index (sum x)^2 / (n sum x^2) over the
 * per-stream rates (1: all equal, 1/n: one stream has everything) and
 * the slowest stream's rate.
 */
static double jain_index(const struct stream *s, unsigned n, double *slowest)
{
	double sum = 0, sq = 0;

	*slowest = -1;
	for (unsigned i = 0; i < n; i++) {
		double x = s[i].ns ? s[i].bytes * 8.0 / s[i].ns : 0.0;

		sum += x;
		sq += x * x;
		if (*slowest < 0 || x < *slowest)
			*slowest = x;
	}
	return sq > 0 ? sum * sum / (n * sq) : 0;
}

int run_stream(const struct bench_opts *o)
{
	unsigned port = o->port >= 0 ? (unsigned)o->port : o->g2h ? PORT_SOURCE : PORT_SINK;
	struct stream *s = calloc(o->parallel, sizeof(*s));
	int pids[17];
	unsigned npids = parse_pids(o->cpu_pids, pids, 17);
	long long t0[17], t1[17];
	uint64_t total = 0, start, wall;
	double gbps_total, cpu = 0, hz = sysconf(_SC_CLK_TCK), jain, slowest;

	if (!s)
		bench_fail(2, "malloc: %s", strerror(errno));
	for (unsigned i = 0; i < o->parallel; i++) {
		s[i].o = o;
		s[i].port = port;
		s[i].fd = bench_connect(o, port);
	}
	for (unsigned i = 0; i < npids; i++)
		t0[i] = proc_ticks(pids[i]);
	start = now_ns();
	for (unsigned i = 0; i < o->parallel; i++)
		pthread_create(&s[i].thread, NULL, stream_thread, &s[i]);
	if (o->progress) {
		uint64_t end = start + (uint64_t)(o->time_s * 1e9);

		while (now_ns() + 1000000000ull < end) {
			uint64_t b = 0;

			sleep(1);
			for (unsigned i = 0; i < o->parallel; i++)
				b += s[i].progress_bytes;
			fprintf(stderr, "stream %s: %.1f s, %.3f Gb/s\n", o->g2h ? "g2h" : "h2g",
				(now_ns() - start) / 1e9, b * 8.0 / (now_ns() - start));
		}
	}
	for (unsigned i = 0; i < o->parallel; i++) {
		pthread_join(s[i].thread, NULL);
		total += s[i].bytes;
	}
	wall = now_ns() - start;
	for (unsigned i = 0; i < npids; i++) {
		t1[i] = proc_ticks(pids[i]);
		if (t0[i] >= 0 && t1[i] >= 0)
			cpu += (t1[i] - t0[i]) / hz / (wall / 1e9) * 100.0;
	}
	for (unsigned i = 0; i < o->parallel; i++)
		close(s[i].fd);
	gbps_total = total * 8.0 / wall;
	jain = jain_index(s, o->parallel, &slowest);
	if (o->json) {
		printf("{\"mode\": \"stream\", \"dir\": \"%s\", \"len\": %zu, "
		       "\"parallel\": %u, \"seconds\": %.3f, \"bytes\": %llu, "
		       "\"gbps\": %.4f, \"streams_gbps\": [",
		       o->g2h ? "g2h" : "h2g", o->len, o->parallel, wall / 1e9,
		       (unsigned long long)total, gbps_total);
		for (unsigned i = 0; i < o->parallel; i++)
			printf("%s%.4f", i ? ", " : "", s[i].ns ? s[i].bytes * 8.0 / s[i].ns : 0.0);
		printf("], \"jain\": %.4f, \"slowest_gbps\": %.4f, "
		       "\"cpu_percent\": %.1f, \"mbps_per_cpu_percent\": %.3f}\n",
		       jain, slowest, cpu, cpu > 0 ? gbps_total * 1000 / cpu : 0.0);
	} else {
		printf("stream %s, -l %zu, -P %u, %.1f s\n",
		       o->g2h ? "g2h (guest source -> host)" : "h2g (host -> guest sink)", o->len,
		       o->parallel, wall / 1e9);
		for (unsigned i = 0; i < o->parallel; i++)
			printf("  stream %u: %12llu bytes %8.3f Gb/s\n", i,
			       (unsigned long long)s[i].bytes,
			       s[i].ns ? s[i].bytes * 8.0 / s[i].ns : 0.0);
		printf("  total:    %12llu bytes %8.3f Gb/s\n", (unsigned long long)total,
		       gbps_total);
		printf("  fairness: Jain %.3f, slowest stream %.3f Gb/s\n", jain, slowest);
		printf("  cpu %.1f%% (bench%s), %.3f Mbps/CPU%%\n", cpu,
		       o->cpu_pids ? " + --cpu-pids" : "", cpu > 0 ? gbps_total * 1000 / cpu : 0.0);
	}
	free(s);
	return 0;
}
