// SPDX-License-Identifier: MIT
/*
 * virtio-rng (virtio 1.2, 5.4): one queue; the driver posts device-writable
 * buffers and the device fills them with entropy. Small, so it is the
 * simplest real device to prove the transport and both rings against.
 * One request at a time: virtio_rng_request(), then virtio_rng_collect()
 * from the caller's wait (app/rng_cmd.c runs it in the poll loop).
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
	uint64_t bytes, requests, short_reads;
};

static struct virtio_rng *rng;
static const struct poller rng_poller;

/* idle_wait asks rng_pending only while a request is out. */
static void ask_pending(bool on)
{
	poll_ask_pending(poll_bit(&rng_poller), on);
}

static int rng_probe(struct virtio_device *vdev)
{
	struct virtio_rng *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	r->buf = malloc(VIRTIO_RNG_MAX_READ);
	r->vdev = vdev;
	/* the interrupt only ends idle_wait's hlt; the waiting command collects */
	r->vq = virtio_setup_queue_raise(vdev, 0, 0, poll_bit(&rng_poller));
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

	if (rng == r) {
		rng = NULL;
		ask_pending(false);
	}
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
 * idle=halt must not sleep past a completion the waiting command wants:
 * its interrupt may come between the command's look and the pass, which
 * takes the raised bit, so the ring is looked at.
 */
static bool rng_pending(void)
{
	return rng && virtq_has_used(rng->vq);
}

static const struct poller rng_poller = {
	.name = "virtio-rng",
	.pending = rng_pending,
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
	ask_pending(true);
	rng->requests++;
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
	ask_pending(false);
	rng->bytes += *got;
	*data = rng->buf;
	return 1;
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
	poll_register(&rng_poller);
	ask_pending(false);
}
