// SPDX-License-Identifier: MIT
/*
 * virtio-rng (virtio 1.2, 5.4): one queue; the driver posts device-writable
 * buffers and the device fills them with entropy. Small, so it is the
 * simplest real device to prove the transport and both rings against.
 * One request at a time: virtio_rng_request(), then virtio_rng_collect()
 * from the caller's wait (app/rng_cmd.c runs it in the poll loop). The
 * queue's interrupt schedules the driver's context, which only reports
 * the completion as work: the wait then looks again before any halt.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtio_rng.h"
#include "kernel/poll.h"

struct virtio_rng {
	struct virtio_device *vdev;
	struct virtq *vq;
	uint8_t *buf;
	uint32_t outstanding; /* bytes asked for in the one request in flight */
	bool abandoned; /* its command gave up: the answer is dropped when it comes */
	uint64_t bytes, requests, short_reads;
};

static struct virtio_rng *rng;
static struct poll_ctx rng_ctx;

static int rng_probe(struct virtio_device *vdev)
{
	struct virtio_rng *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	r->buf = malloc(VIRTIO_RNG_MAX_READ);
	r->vdev = vdev;
	/* the interrupt only schedules rng_ctx; the waiting command collects */
	r->vq = virtio_setup_queue(vdev, 0, 0, &rng_ctx);
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

/*
 * The wait that runs this pass collects; a completion there counts as
 * work, so the wait looks before the loop may halt.
 */
static unsigned int rng_poll(struct poll_ctx *ctx, unsigned int budget)
{
	const uint8_t *late;
	uint32_t got;

	if (!rng || !rng->outstanding)
		return 0;
	if (rng->abandoned)
		return virtio_rng_collect(&late, &got) == 1;
	if (virtq_has_used(rng->vq))
		return 1;
	if (!virtio_queue_interrupts(rng->vq))
		poll_schedule_polled(ctx);
	return 0;
}

/* The watchdog's look: a completion the waiting command was not woken for. */
static enum poll_verdict rng_check(struct poll_ctx *ctx, bool count, const char **what)
{
	*what = "virtio-rng";
	return rng && rng->outstanding && !rng->abandoned ? virtio_queue_check(rng->vq, count) :
							    POLL_IDLE;
}

static struct poll_ctx rng_ctx = {
	.name = "virtio-rng",
	.poll = rng_poll,
	.check = rng_check,
};

bool virtio_rng_present(void)
{
	return rng;
}

int virtio_rng_request(uint32_t len)
{
	struct vbuf in;

	if (!rng)
		return -ENODEV;
	if (!len || len > VIRTIO_RNG_MAX_READ)
		return -EINVAL;
	if (rng->outstanding)
		return -EBUSY;
	in = (struct vbuf){ rng->buf, len };
	if (virtq_add(rng->vq, NULL, 0, &in, 1, rng))
		return -ENOSPC;
	virtq_kick(rng->vq);
	rng->outstanding = len;
	rng->abandoned = false;
	rng->requests++;
	if (!virtio_queue_interrupts(rng->vq))
		poll_schedule_polled(&rng_ctx);
	return 0;
}

int virtio_rng_collect(const uint8_t **data, uint32_t *got)
{
	void *token;

	if (!rng)
		return -ENODEV;
	token = virtq_get_used(rng->vq, got);
	if (!token)
		return 0;
	if (token != rng)
		return -EIO; /* the command reports it */
	if (*got < rng->outstanding)
		rng->short_reads++;
	rng->outstanding = 0;
	rng->abandoned = false;
	rng->bytes += *got;
	*data = rng->buf;
	return 1;
}

void virtio_rng_abandon(void)
{
	if (rng && rng->outstanding)
		rng->abandoned = true;
}

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
	poll_ctx_add(&rng_ctx);
}
