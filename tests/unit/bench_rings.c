// SPDX-License-Identifier: MIT
/*
 * Host microbenchmark of the driver side of both rings: ns per buffer for
 * add + kick_prepare + get_used, with a minimal device on the same thread
 * (fetch, write a used element, publish). Not a unit test; run it with
 * host/bench-rings. Numbers are for comparing layouts and options side by
 * side on one machine, not absolute costs.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drivers/virtio/virtqueue.h"
#include "kernel/barrier.h"
#include "kernel/dma.h"

#define QSIZE 256

/* ---- a minimal device: no checks, just what the spec makes it do ---- */

struct dev {
	enum virtq_layout layout;
	uint16_t size;
	bool event_idx;
	struct virtq_desc *desc;
	struct virtq_avail *avail;
	struct virtq_used *used;
	uint16_t last_avail, used_idx;
	struct virtq_packed_desc *pdesc;
	struct virtq_packed_event *driver, *device;
	uint16_t avail_pos, used_pos;
	bool avail_wrap, used_wrap;
	uint64_t irqs;
};

static void dev_init(struct dev *d, struct virtq *vq)
{
	memset(d, 0, sizeof(*d));
	d->layout = virtq_layout(vq);
	d->size = virtq_size(vq);
	d->event_idx = virtq_features(vq) & VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
	if (d->layout == VIRTQ_SPLIT) {
		d->desc = phys_to_virt(virtq_desc_addr(vq));
		d->avail = phys_to_virt(virtq_driver_addr(vq));
		d->used = phys_to_virt(virtq_device_addr(vq));
		return;
	}
	d->pdesc = phys_to_virt(virtq_desc_addr(vq));
	d->driver = phys_to_virt(virtq_driver_addr(vq));
	d->device = phys_to_virt(virtq_device_addr(vq));
	d->avail_wrap = d->used_wrap = true;
	if (d->event_idx)
		d->device->flags = RING_EVENT_FLAGS_DESC;
}

static unsigned int dev_run_split(struct dev *d)
{
	uint16_t idx = READ_ONCE(d->avail->idx), old = d->used_idx;
	unsigned int n = 0;

	virt_rmb();
	while (d->last_avail != idx) {
		uint16_t head = d->avail->ring[d->last_avail++ & (d->size - 1)];
		uint16_t i = head;
		uint32_t len = 0;

		for (;;) {
			if (d->desc[i].flags & VIRTQ_DESC_F_WRITE)
				len += d->desc[i].len;
			if (!(d->desc[i].flags & VIRTQ_DESC_F_NEXT))
				break;
			i = d->desc[i].next;
		}
		d->used->ring[d->used_idx & (d->size - 1)] = (struct virtq_used_elem){ head, len };
		d->used_idx++;
		n++;
	}
	if (!n)
		return 0;
	virt_wmb();
	WRITE_ONCE(d->used->idx, d->used_idx);
	if (d->event_idx)
		*virtq_avail_event(d->used, d->size) = d->last_avail;
	virt_mb();
	if (d->event_idx ?
		    virtq_need_event(*virtq_used_event(d->avail, d->size), d->used_idx, old) :
		    !(d->avail->flags & VIRTQ_AVAIL_F_NO_INTERRUPT))
		d->irqs++;
	return n;
}

static unsigned int dev_run_packed(struct dev *d)
{
	unsigned int n = 0;
	bool irq = false;

	for (;;) {
		struct virtq_packed_desc *p = &d->pdesc[d->avail_pos];
		uint16_t flags = READ_ONCE(p->flags), id, ndescs = 0;
		uint32_t len = 0;

		if (!!(flags & VIRTQ_DESC_F_AVAIL) != d->avail_wrap ||
		    !!(flags & VIRTQ_DESC_F_USED) == d->avail_wrap)
			break;
		virt_rmb();
		for (;;) {
			p = &d->pdesc[d->avail_pos];
			flags = p->flags;
			if (flags & VIRTQ_DESC_F_WRITE)
				len += p->len;
			id = p->id;
			ndescs++;
			if (++d->avail_pos == d->size) {
				d->avail_pos = 0;
				d->avail_wrap = !d->avail_wrap;
			}
			if (!(flags & VIRTQ_DESC_F_NEXT))
				break;
		}
		p = &d->pdesc[d->used_pos];
		p->id = id;
		p->len = len;
		virt_wmb();
		WRITE_ONCE(p->flags, d->used_wrap ? VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED : 0);
		d->used_pos += ndescs;
		if (d->used_pos >= d->size) {
			d->used_pos -= d->size;
			d->used_wrap = !d->used_wrap;
		}
		n++;
	}
	if (!n)
		return 0;
	if (d->event_idx)
		d->device->off_wrap = (uint16_t)(d->avail_pos | d->avail_wrap << 15);
	virt_mb();
	/* Coarse: one look per batch, enough to exercise the driver. */
	irq = d->driver->flags != RING_EVENT_FLAGS_DISABLE;
	d->irqs += irq;
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
	struct dev d;
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
		if (d.layout == VIRTQ_SPLIT)
			dev_run_split(&d);
		else
			dev_run_packed(&d);
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

static void usage(void)
{
	printf("usage: bench_rings [-n buffers] [-r runs] [-b batch] [--json]\n"
	       "  ns per buffer (add + kick_prepare + device + get_used),\n"
	       "  queue size %d, median of runs; interrupt mode keeps\n"
	       "  callbacks on, polling mode turns them off (disable_cb).\n",
	       QSIZE);
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
			n = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			runs = strtoul(optarg, NULL, 0);
			break;
		case 'b':
			batch = strtoul(optarg, NULL, 0);
			break;
		case 'j':
			json = true;
			break;
		default:
			usage();
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!n || !runs || runs > 64 || !batch || batch > QSIZE) {
		usage();
		return 2;
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
		if (json)
			printf("%s{\"ring\":\"%s\",\"chain\":%u,\"event_idx\":%u,"
			       "\"irq_ns_per_buf\":%.2f,\"poll_ns_per_buf\":%.2f}",
			       i ? "," : "", ring, c.chain, c.event_idx, irq, poll);
		else
			printf("%-7s %5u %9s %13.2f %13.2f\n", ring, c.chain,
			       c.event_idx ? "on" : "off", irq, poll);
	}
	if (json)
		printf("]\n");
	else
		printf("(%lu buffers per run, batch %u, median of %u runs)\n", n, batch, runs);
	return 0;
}
