// SPDX-License-Identifier: MIT
/*
 * virtio-rng (virtio 1.2, 5.4): one queue; the driver posts device-writable
 * buffers and the device fills them with entropy. Small, so it is the
 * simplest real device to prove the transport and both rings against.
 * `rng BYTES` posts requests of up to 4 KiB until BYTES arrived and prints
 * a digest of them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "drivers/virtio/virtio_pci.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/time.h"

#define RNG_BUF 4096
#define RNG_TIMEOUT_NS 10000000000ULL

struct virtio_rng {
	struct virtio_device *vdev;
	struct virtq *vq;
	uint8_t *buf;
	uint64_t bytes, requests, short_reads;
};

static struct virtio_rng *rng;

static void rng_irq(struct virtq *vq)
{
	/* completions are collected by the waiting command; counting is enough */
}

static int rng_probe(struct virtio_device *vdev)
{
	struct virtio_rng *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	r->buf = malloc(RNG_BUF);
	r->vdev = vdev;
	r->vq = virtio_setup_queue(vdev, 0, 0, rng_irq);
	if (!r->buf || !r->vq) {
		free(r->buf);
		free(r);
		return -1;
	}
	vdev->priv = r;
	rng = r;
	return 0;
}

static void rng_remove(struct virtio_device *vdev)
{
	struct virtio_rng *r = vdev->priv;

	if (rng == r)
		rng = NULL;
	free(r->buf);
	free(r);
	vdev->priv = NULL;
}

static void rng_show(struct virtio_device *vdev)
{
	struct virtio_rng *r = vdev->priv;

	printf("  rng: %llu bytes in %llu requests, %llu short\n", (unsigned long long)r->bytes,
	       (unsigned long long)r->requests, (unsigned long long)r->short_reads);
}

/* idle=halt must not sleep past a completion the waiting command wants */
static bool rng_pending(void)
{
	return rng && virtq_has_used(rng->vq);
}

static const struct poller rng_poller = {
	.name = "virtio-rng",
	.pending = rng_pending,
};

struct rng_wait {
	struct virtio_rng *r;
	void *token;
	uint32_t got;
};

static enum poll_step rng_completed(void *arg)
{
	struct rng_wait *w = arg;

	w->token = virtq_get_used(w->r->vq, &w->got);
	return w->token ? POLL_DONE : POLL_AGAIN;
}

/* One request: post @len bytes, wait for the device to return them. */
static int rng_read(struct virtio_rng *r, uint32_t len, uint32_t *got)
{
	struct vbuf in = { r->buf, len };
	struct rng_wait w = { .r = r };
	void *token;

	if (virtq_add(r->vq, NULL, 0, &in, 1, r))
		return shell_error("rng: queue full");
	virtq_kick(r->vq);
	r->requests++;
	if (!poll_wait(rng_completed, &w, now_ns() + RNG_TIMEOUT_NS))
		return shell_error("rng: device did not answer in 10 s");
	token = w.token;
	*got = w.got;
	if (token != r)
		return shell_error("rng: unexpected completion token");
	if (*got < len)
		r->short_reads++;
	r->bytes += *got;
	return 0;
}

static int cmd_rng(int argc, char **argv)
{
	unsigned long want = 64, have = 0;
	uint32_t sum = 0, ones = 0;
	char *end;

	if (argc > 2)
		return shell_error("usage: rng [BYTES]");
	if (argc == 2) {
		want = strtoul(argv[1], &end, 0);
		if (*end || !want || want > (64UL << 20))
			return shell_error("rng: BYTES must be 1..67108864, got '%s'", argv[1]);
	}
	if (!rng)
		return shell_error("rng: no virtio-rng device");
	while (have < want) {
		uint32_t len = want - have > RNG_BUF ? RNG_BUF : want - have, got = 0;

		if (rng_read(rng, len, &got))
			return -1;
		for (uint32_t i = 0; i < got; i++) {
			sum = sum * 31 + rng->buf[i];
			ones += __builtin_popcount(rng->buf[i]);
		}
		have += got;
	}
	/* for random data about half the bits are set */
	printf("rng: %lu bytes, %u one bits (%.1f%%), digest %08x\n", have, ones,
	       100.0 * ones / (8.0 * have), sum);
	return 0;
}

static const struct shell_cmd rng_cmd = {
	.name = "rng",
	.usage = "[BYTES]",
	.help = "read entropy from virtio-rng",
	.run = cmd_rng,
};

static const struct virtio_driver rng_driver = {
	.name = "virtio-rng",
	.device_type = VIRTIO_ID_RNG,
	.probe = rng_probe,
	.remove = rng_remove,
	.show = rng_show,
};

void virtio_rng_init(void)
{
	virtio_register_driver(&rng_driver);
	poll_register(&rng_poller);
	shell_register(&rng_cmd);
}
