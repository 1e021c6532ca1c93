/* SPDX-License-Identifier: MIT */
/*
 * The virtio over PCI modern transport (virtio 1.2, 4.1) and the small
 * driver model on top: a driver names a device type and the features it
 * wants; the transport finds the device, negotiates, calls probe() to set
 * up queues, and sets DRIVER_OK.
 */
#ifndef DRIVERS_VIRTIO_VIRTIO_PCI_H
#define DRIVERS_VIRTIO_VIRTIO_PCI_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/virtqueue.h"
#include "kernel/config.h"
#include "kernel/cpu.h"
#include "kernel/pci.h"
#include "kernel/poll.h"

#define VIRTIO_F_VERSION_1 32

/* 5 Device Types */
#define VIRTIO_ID_NET 1
#define VIRTIO_ID_RNG 4
#define VIRTIO_ID_VSOCK 19

#define VIRTIO_MAX_QUEUES 8

struct virtio_device;

struct virtio_driver {
	const char *name;
	uint16_t device_type;
	uint64_t features; /* device-specific bits the driver can use */
	/* More bits wanted now, from the config keys (optional). */
	uint64_t (*config_features)(void);
	const char *const *feature_names; /* names of bits 0..23, for `virtio` */
	/* Set up queues (virtio_setup_queue); 0 or a negative errno. */
	int (*probe)(struct virtio_device *vdev);
	/* The device has been reset: free what probe allocated. */
	void (*remove)(struct virtio_device *vdev);
	/* Show driver state in the `virtio` command (optional). */
	void (*show)(struct virtio_device *vdev);
};

struct virtio_queue {
	struct virtq *vq;
	struct virtio_device *vdev;
	volatile uint16_t *notify;
	int vector; /* LAPIC vector, or -1 when polled */
	struct poll_ctx *ctx; /* what its interrupt schedules; NULL: it never interrupts */
	unsigned int irq_cpu; /* the CPU its MSI-X message targets */
	struct irq_action steered; /* taken away from the owner: schedules ctx there */
};

struct virtio_device {
	struct pci_dev *pci;
	uint16_t type;
	const struct virtio_driver *driver;
	void *priv; /* the driver's */
	const char *state;
	/* capability windows (4.1.4) */
	volatile uint8_t *common;
	uint32_t common_len; /* of the common configuration structure */
	volatile uint8_t *isr;
	volatile uint8_t *device_cfg;
	volatile uint8_t *notify_base;
	uint32_t device_cfg_len;
	uint32_t notify_len;
	uint32_t notify_mult;
	uint64_t offered, features;
	uint16_t num_queues;
	int config_vector;
	struct virtio_queue queues[VIRTIO_MAX_QUEUES];
	uint64_t recoveries; /* resets after a queue broke (virtq_is_broken) */
	uint32_t held; /* queues a CPU never let go of at teardown: rings kept */
};

void virtio_register_driver(const struct virtio_driver *drv);
/* Find virtio PCI functions and probe the registered drivers. */
void virtio_pci_init(void);

static inline bool virtio_has_feature(const struct virtio_device *vdev, unsigned int bit)
{
	return vdev->features & (1ULL << bit);
}

/*
 * Set up queue @index with at most @max_size entries (0: the device's
 * size), in the ring layout negotiated. @ctx (added to its CPU's loop
 * already) is the context that works on the queue: with irq=msix its
 * MSI-X vector schedules @ctx on its CPU; NULL, or no vector to be had,
 * and the device is asked for no notifications (the context looks at
 * the queue when it runs: poll_schedule_polled when nothing else wakes
 * it). The ring belongs to the calling CPU until virtq_set_owner hands
 * it to @ctx's (virtqueue.h: an operation from another CPU is refused).
 */
struct virtq *virtio_setup_queue(struct virtio_device *vdev, uint16_t index, uint16_t max_size,
				 struct poll_ctx *ctx);
/*
 * The same with the MSI-X message sent to CPU @irq_cpu (an online CPU,
 * else @ctx's): taken there, the interrupt schedules @ctx on its own CPU
 * through poll_schedule's IPI (net_irq=other).
 */
struct virtq *virtio_setup_queue_steered(struct virtio_device *vdev, uint16_t index,
					 uint16_t max_size, struct poll_ctx *ctx,
					 unsigned int irq_cpu);
/*
 * A probe that fails, before it frees what its queues' contexts point
 * at: the device reset (it stops using the rings and interrupting) and
 * every vector gone, on every CPU that took one. The rings stay for the
 * transport to free.
 */
void virtio_quiesce(struct virtio_device *vdev);

/*
 * For a context's check() (kernel/poll.h): what @vq holds that its
 * context was not scheduled for. Used entries the device had to announce
 * (an interrupt, the used_event or flags published, 2.7.7.2 and 2.8.10)
 * are POLL_OWED, counted in the queue's missed_notifications when
 * @count; any other work waiting is POLL_LOST.
 */
enum poll_verdict virtio_queue_check(struct virtq *vq, bool count);

/*
 * The queue has a working interrupt (an MSI-X vector the device took):
 * a completion is announced; without one its context must look by time.
 */
static inline bool virtio_queue_interrupts(struct virtq *vq)
{
	const struct virtio_queue *q = virtq_priv(vq);

	return q->vector >= 0;
}

/* Config space reads that retry across config_generation changes (4.1.4.3.1). */
void virtio_config_read(struct virtio_device *vdev, uint32_t off, void *buf, uint32_t len);
uint8_t virtio_get_status(struct virtio_device *vdev);
/* True while the device runs; false once it set DEVICE_NEEDS_RESET. */
bool virtio_device_ok(struct virtio_device *vdev);

/* Reset every device and probe again with the current config (ring=...). */
void virtio_reprobe_all(void);

/*
 * The hostile driver (fuzz_transport.c), never on a data path: the
 * common configuration read and written as it is, @width 1, 2 or 4
 * bytes at @off (virtio_pci_regs.h; nothing past the structure), and a
 * reset and probe again of @v, negotiating @extra_features too when
 * the device offers them (0, or the probe's error).
 */
uint32_t virtio_common_read(struct virtio_device *v, unsigned int off, unsigned int width);
void virtio_common_write(struct virtio_device *v, unsigned int off, unsigned int width,
			 uint32_t val);
int virtio_restart(struct virtio_device *v, uint64_t extra_features);

/* txpoll=1: reclaim TX buffers only in the poll loop (txpoll.c). */
extern struct config_key cfg_txpoll;

/* Each driver registers itself; called before virtio_pci_init(). */
void virtio_rng_init(void);
void virtio_net_init(void);
void virtio_vsock_init(void);

/* The `virtio` shell command (virtio_show.c). */
void virtio_show_init(void);

unsigned int virtio_device_count(void);
struct virtio_device *virtio_device_get(unsigned int i);

#endif
