// SPDX-License-Identifier: MIT
/*
 * Host microbenchmark of the driver side of both rings: ns per buffer for
 * add + kick_prepare + get_used, with the back end's device-side ring code
 * (host/vring) on the same thread. Not a unit test; run it with
 * host/bench-rings. Numbers are for comparing layouts and options side by
 * side on one machine, not absolute costs.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drivers/virtio/virtqueue.h"
#include "kernel/dma.h"
#include "host/vring/vring.h"

#define QSIZE 256

/*
 * ---- the device: host/vring, the back end's ring code ----
 * Every buffer is popped (with the back end's checks), completed with its
 * writable length and the driver's notification wishes honoured, batched
 * per pass like the back end. Guest "physical" addresses are virtual
 * addresses here (kernel/dma.h), so guest memory is all of it but 0.
 */

struct dev {
	struct guest_mem mem;
	struct device_ring vr;
	struct vq_elem e;
	uint64_t irqs;
};

static void dev_init(struct dev *d, struct virtq *vq)
{
	memset(d, 0, sizeof(*d));
	d->mem.nregions = 1;
	d->mem.r[0] = (struct guest_region){
		.gpa = 1,
		.size = UINTPTR_MAX - 1,
		.uaddr = 1,
		.host = (uint8_t *)1,
	};
	d->vr.num = virtq_size(vq);
	d->vr.packed = virtq_layout(vq) == VIRTQ_PACKED;
	d->vr.event_idx = virtq_features(vq) & VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
	d->vr.desc_uaddr = virtq_desc_addr(vq);
	d->vr.avail_uaddr = virtq_driver_addr(vq);
	d->vr.used_uaddr = virtq_device_addr(vq);
	vring_set_base(&d->vr, d->vr.packed ? 1u << 15 : 0);
	if (!vring_map(&d->vr, &d->mem)) {
		fprintf(stderr, "device: ring not mappable\n");
		exit(1);
	}
}

static unsigned int dev_run(struct dev *d)
{
	unsigned int n = 0;
	int r;

	while ((r = vring_pop(&d->vr, &d->e)) == 1) {
		vring_push(&d->vr, &d->e, (uint32_t)d->e.in_len);
		n++;
	}
	if (r < 0) {
		fprintf(stderr, "device: the driver broke the ring\n");
		exit(1);
	}
	if (!n)
		return 0;
	/* ask for the next kick (EVENT_IDX: for the next new buffer) */
	vring_set_kicks(&d->vr, true);
	if (vring_need_notify(&d->vr))
		d->irqs++;
	return n;
}

/* ---- the measured loop ---- */

struct config {
	enum virtq_layout layout;
	unsigned int chain;
	bool event_idx;
	bool polling;
};

static uint8_t bufs[QSIZE][2][64];

static void noop_notify(struct virtq *vq)
{
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double run_once(const struct config *c, unsigned long n, unsigned int batch)
{
	uint64_t features = c->event_idx ? VIRTIO_BIT(VIRTIO_F_EVENT_IDX) : 0;
	struct virtq *vq = virtq_create(c->layout, 0, QSIZE, features, noop_notify, NULL);
	unsigned long done = 0, added = 0;
	unsigned int i, slot = 0;
	static struct dev d;
	uint32_t len;
	double t0, t1;

	if (!vq) {
		fprintf(stderr, "virtq_create failed\n");
		exit(1);
	}
	dev_init(&d, vq);
	if (c->polling)
		virtq_disable_cb(vq);
	t0 = now_ns();
	while (done < n) {
		for (i = 0; i < batch && added < n; i++) {
			struct vbuf v[2] = { { bufs[slot][0], 64 }, { bufs[slot][1], 64 } };

			/* chain 1: one writable buffer; 2: header + data */
			if (virtq_add(vq, v, c->chain - 1, v + c->chain - 1, 1, bufs[slot]))
				break;
			slot = (slot + 1) % QSIZE;
			added++;
		}
		virtq_kick(vq);
		dev_run(&d);
		while (virtq_get_used(vq, &len))
			done++;
	}
	t1 = now_ns();
	virtq_destroy(vq);
	return (t1 - t0) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define NCONF 16

/* split/packed x chain 1/2 x EVENT_IDX off/on x interrupt/polling */
static void conf_of(unsigned int i, struct config *c)
{
	c->layout = (i >> 3) & 1 ? VIRTQ_PACKED : VIRTQ_SPLIT;
	c->chain = 1 + ((i >> 2) & 1);
	c->event_idx = (i >> 1) & 1;
	c->polling = i & 1;
}

/* "name":[each run's ns per buffer]: the samples the median is of. */
static void print_runs(const char *name, const double *v, unsigned int runs)
{
	printf("\"%s\":[", name);
	for (unsigned int r = 0; r < runs; r++)
		printf("%s%.2f", r ? "," : "", v[r]);
	printf("]");
}

static void usage(void)
{
	printf("usage: bench_rings [-n buffers] [-r runs] [-b batch] [--json]\n"
	       "  ns per buffer (add + kick_prepare + device + get_used),\n"
	       "  queue size %d, median of runs; interrupt mode keeps\n"
	       "  callbacks on, polling mode turns them off (disable_cb).\n",
	       QSIZE);
}

/* A plain decimal number in [min, max], or one line naming the option. */
static unsigned long parse_count(const char *opt, const char *s, unsigned long min,
				 unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < min || v > max) {
		if (max == ULONG_MAX)
			fprintf(stderr, "bench_rings: %s: expected a positive number, got '%s'\n",
				opt, s);
		else
			fprintf(stderr,
				"bench_rings: %s: expected a number from %lu to %lu, got '%s'\n",
				opt, min, max, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "buffers", required_argument, NULL, 'n' },
		{ "runs", required_argument, NULL, 'r' },
		{ "batch", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long n = 2000000;
	unsigned int runs = 7, batch = 32, r, i;
	static double v[NCONF][64];
	struct config c;
	bool json = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "n:r:b:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			n = parse_count("-n", optarg, 1, ULONG_MAX);
			break;
		case 'r':
			runs = parse_count("-r", optarg, 1, 64);
			break;
		case 'b':
			batch = parse_count("-b", optarg, 1, QSIZE);
			break;
		case 'j':
			json = true;
			break;
		default:
			usage();
			return opt == 'h' ? 0 : 2;
		}
	}
	/*
	 * Interleave: every round runs every configuration once, so load
	 * from other processes spreads over all of them alike.
	 */
	for (r = 0; r < runs; r++)
		for (i = 0; i < NCONF; i++) {
			conf_of(i, &c);
			v[i][r] = run_once(&c, n, batch);
		}
	if (json)
		printf("[");
	else
		printf("%-7s %5s %9s %13s %13s\n", "ring", "chain", "event_idx", "irq ns/buf",
		       "poll ns/buf");
	for (i = 0; i < NCONF; i += 2) {
		double irq = median(v[i], runs), poll = median(v[i + 1], runs);
		const char *ring;

		conf_of(i, &c);
		ring = c.layout == VIRTQ_PACKED ? "packed" : "split";
		if (json) {
			printf("%s{\"ring\":\"%s\",\"chain\":%u,\"event_idx\":%u,"
			       "\"irq_ns_per_buf\":%.2f,\"poll_ns_per_buf\":%.2f,",
			       i ? "," : "", ring, c.chain, c.event_idx, irq, poll);
			print_runs("irq_runs", v[i], runs);
			printf(",");
			print_runs("poll_runs", v[i + 1], runs);
			printf("}");
		} else
			printf("%-7s %5u %9s %13.2f %13.2f\n", ring, c.chain,
			       c.event_idx ? "on" : "off", irq, poll);
	}
	if (json)
		printf("]\n");
	else
		printf("(%lu buffers per run, batch %u, median of %u runs)\n", n, batch, runs);
	return 0;
}
