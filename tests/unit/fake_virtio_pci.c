// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "fake_virtio_pci.h"
#include "kernel/poll.h"

const struct virtio_driver *fake_pci_driver;
enum virtq_layout fake_pci_layout;
uint16_t fake_pci_qsize = 16;
int fake_pci_vector = -1;
int fake_pci_fail_index = -1;
struct virtq *fake_pci_queues[FAKE_PCI_QUEUES];
struct ring_model fake_pci_models[FAKE_PCI_QUEUES];
unsigned long fake_pci_kicks[FAKE_PCI_QUEUES];
unsigned int fake_pci_irq_cpu[FAKE_PCI_QUEUES];
uint8_t fake_pci_config[64];
unsigned int fake_pci_reprobes;
unsigned int fake_pci_quiesced; /* virtio_quiesce calls */

void virtio_register_driver(const struct virtio_driver *d)
{
	fake_pci_driver = d;
}

void virtio_reprobe_all(void)
{
	fake_pci_reprobes++;
}

void virtio_config_read(struct virtio_device *vdev, uint32_t off, void *buf, uint32_t len)
{
	if (off + len > sizeof(fake_pci_config))
		abort();
	memcpy(buf, fake_pci_config + off, len);
}

static void notify(struct virtq *vq)
{
	fake_pci_kicks[virtq_index(vq)]++;
}

/* As the transport: a context added gets the vector; polled, no notifications asked for. */
struct virtq *virtio_setup_queue_steered(struct virtio_device *vdev, uint16_t index,
					 uint16_t max_size, struct poll_ctx *ctx,
					 unsigned int irq_cpu)
{
	struct virtio_queue *q = &vdev->queues[index];

	if (index >= FAKE_PCI_QUEUES || index == fake_pci_fail_index)
		return NULL;
	q->vdev = vdev;
	q->ctx = ctx;
	q->irq_cpu = ctx && ctx->cpu ? irq_cpu : 0;
	q->vq = virtq_create(fake_pci_layout, index, fake_pci_qsize, vdev->features, notify, q);
	if (!q->vq)
		abort();
	q->vector = ctx && ctx->cpu ? fake_pci_vector : -1;
	if (q->vector < 0)
		virtq_disable_cb(q->vq);
	fake_pci_queues[index] = q->vq;
	fake_pci_irq_cpu[index] = q->irq_cpu;
	ring_model_init(&fake_pci_models[index], q->vq);
	return q->vq;
}

struct virtq *virtio_setup_queue(struct virtio_device *vdev, uint16_t index, uint16_t max_size,
				 struct poll_ctx *ctx)
{
	return virtio_setup_queue_steered(vdev, index, max_size, ctx,
					  ctx && ctx->cpu ? ctx->cpu->index : 0);
}

/* A failed probe's call before it frees: the device stops, the vectors go. */
void virtio_quiesce(struct virtio_device *vdev)
{
	fake_pci_quiesced++;
	for (int i = 0; i < FAKE_PCI_QUEUES; i++)
		vdev->queues[i].vector = -1;
}

/* The transport's verdict (virtio_pci.c): owed only where an interrupt was due. */
enum poll_verdict virtio_queue_check(struct virtq *vq, bool count)
{
	return vq ? virtq_watch(vq, virtio_queue_interrupts(vq), count) : POLL_IDLE;
}

void fake_pci_reset(void)
{
	memset(fake_pci_queues, 0, sizeof(fake_pci_queues));
	memset(fake_pci_kicks, 0, sizeof(fake_pci_kicks));
	memset(fake_pci_irq_cpu, 0, sizeof(fake_pci_irq_cpu));
}

void fake_pci_destroy_queues(void)
{
	for (int i = 0; i < FAKE_PCI_QUEUES; i++) {
		if (!fake_pci_queues[i])
			continue;
		if (fake_pci_models[i].errors)
			abort(); /* the driver broke a ring rule */
		ring_model_destroy(&fake_pci_models[i]);
		virtq_destroy(fake_pci_queues[i]);
		fake_pci_queues[i] = NULL;
	}
}

void fake_pci_interrupt(unsigned int q)
{
	struct virtio_queue *vq = virtq_priv(fake_pci_queues[q]);

	virtq_interrupt(vq->vq);
	if (vq->ctx)
		poll_schedule(vq->ctx);
}

bool fake_pci_complete(unsigned int q, unsigned int i, uint32_t len)
{
	bool notified = ring_model_complete(&fake_pci_models[q], i, len);
	struct virtio_queue *vq = virtq_priv(fake_pci_queues[q]);

	if (notified && vq->vector >= 0)
		fake_pci_interrupt(q);
	return notified;
}
