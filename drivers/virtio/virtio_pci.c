// SPDX-License-Identifier: MIT
/*
 * virtio 1.2, 4.1: PCI devices with vendor 0x1af4 and device 0x1040 + type
 * (modern) or 0x1000..0x103f (transitional; the type is the subsystem id).
 * We use only the modern interface: a device without the common config
 * capability is legacy-only and skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtio_pci_regs.h"
#include "kernel/barrier.h"
#include "kernel/config.h"
#include "kernel/cpu.h"
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/printk.h"
#include "kernel/shell.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"

enum ring_choice { RING_SPLIT, RING_PACKED, RING_CHOICES };
static const char *const ring_choices[RING_CHOICES + 1] = {
	[RING_SPLIT] = "split",
	[RING_PACKED] = "packed",
};
CONFIG_KEY(cfg_ring) = {
	.name = "ring",
	.help = "virtqueue layout: packed when the device offers it, or always split",
	.type = CONFIG_ENUM,
	.choices = ring_choices,
	.def = RING_PACKED,
};

CONFIG_KEY(cfg_event_idx) = {
	.name = "event_idx",
	.help = "negotiate VIRTIO_F_EVENT_IDX (notification suppression by index)",
	.type = CONFIG_BOOL,
	.def = 1,
};

CONFIG_KEY(cfg_indirect) = {
	.name = "indirect",
	.help = "negotiate VIRTIO_F_INDIRECT_DESC (chains in indirect tables)",
	.type = CONFIG_BOOL,
	.def = 1,
};

enum irq_choice { IRQ_POLL, IRQ_MSIX, IRQ_CHOICES };
static const char *const irq_choices[IRQ_CHOICES + 1] = {
	[IRQ_POLL] = "poll",
	[IRQ_MSIX] = "msix",
};
CONFIG_KEY(cfg_irq) = {
	.name = "irq",
	.help = "virtqueue completions: poll (no interrupts) or msix",
	.type = CONFIG_ENUM,
	.choices = irq_choices,
	.def = IRQ_MSIX,
};

#define VIRTIO_PCI_VENDOR 0x1af4
#define MAX_DEVICES 8
#define MAX_DRIVERS 8
#define NO_VECTOR 0xffff

/* 4.1.4 Virtio Structure PCI Capabilities: cfg_type */
#define CAP_COMMON_CFG 1
#define CAP_NOTIFY_CFG 2
#define CAP_ISR_CFG 3
#define CAP_DEVICE_CFG 4

static const struct virtio_driver *drivers[MAX_DRIVERS];
static unsigned int n_drivers;
static struct virtio_device devices[MAX_DEVICES];
static unsigned int n_devices;

void virtio_register_driver(const struct virtio_driver *drv)
{
	if (n_drivers < MAX_DRIVERS)
		drivers[n_drivers++] = drv;
}

unsigned int virtio_device_count(void)
{
	return n_devices;
}

struct virtio_device *virtio_device_get(unsigned int i)
{
	return i < n_devices ? &devices[i] : NULL;
}

/* ---- common config accessors ---- */

static uint8_t c_read8(struct virtio_device *v, unsigned int off)
{
	return *(volatile uint8_t *)(v->common + off);
}

static uint16_t c_read16(struct virtio_device *v, unsigned int off)
{
	return *(volatile uint16_t *)(v->common + off);
}

static uint32_t c_read32(struct virtio_device *v, unsigned int off)
{
	return *(volatile uint32_t *)(v->common + off);
}

static void c_write8(struct virtio_device *v, unsigned int off, uint8_t x)
{
	*(volatile uint8_t *)(v->common + off) = x;
}

static void c_write16(struct virtio_device *v, unsigned int off, uint16_t x)
{
	*(volatile uint16_t *)(v->common + off) = x;
}

static void c_write32(struct virtio_device *v, unsigned int off, uint32_t x)
{
	*(volatile uint32_t *)(v->common + off) = x;
}

/* 64-bit fields as two 32-bit writes, low first (4.1.3.1). */
static void c_write64(struct virtio_device *v, unsigned int off, uint64_t x)
{
	c_write32(v, off, (uint32_t)x);
	c_write32(v, off + 4, (uint32_t)(x >> 32));
}

uint8_t virtio_get_status(struct virtio_device *vdev)
{
	return c_read8(vdev, COMMON_STATUS);
}

static void set_status(struct virtio_device *v, uint8_t bits)
{
	c_write8(v, COMMON_STATUS, c_read8(v, COMMON_STATUS) | bits);
}

bool virtio_device_ok(struct virtio_device *vdev)
{
	return vdev->common && !(virtio_get_status(vdev) & (STATUS_NEEDS_RESET | STATUS_FAILED));
}

/* 4.1.4.3.2: writing 0 resets; the device is reset once status reads 0. */
static int device_reset(struct virtio_device *v)
{
	uint64_t deadline = now_ns() + 1000000000ULL;

	c_write8(v, COMMON_STATUS, 0);
	while (c_read8(v, COMMON_STATUS)) {
		if (now_ns() > deadline)
			return -ETIMEDOUT;
		cpu_relax();
	}
	return 0;
}

void virtio_config_read(struct virtio_device *vdev, uint32_t off, void *buf, uint32_t len)
{
	uint8_t gen;
	uint8_t *out = buf;

	if (!vdev->device_cfg || off > vdev->device_cfg_len || len > vdev->device_cfg_len - off) {
		memset(buf, 0, len);
		return;
	}
	do {
		gen = c_read8(vdev, COMMON_CFGGENERATION);
		for (uint32_t i = 0; i < len; i++)
			out[i] = vdev->device_cfg[off + i];
	} while (gen != c_read8(vdev, COMMON_CFGGENERATION));
}

/* ---- capabilities ---- */

static volatile uint8_t *map_cap(struct virtio_device *v, uint8_t cap, uint32_t *len_out)
{
	struct pci_dev *d = v->pci;
	uint8_t bar = pci_read8(d, cap + 4);
	uint32_t off = pci_read32(d, cap + 8);
	uint32_t len = pci_read32(d, cap + 12);
	uint8_t *base;

	if (bar >= 6 || (uint64_t)off + len > d->bar[bar].size)
		return NULL;
	base = pci_map_bar(d, bar);
	if (!base)
		return NULL;
	if (len_out)
		*len_out = len;
	return base + off;
}

static int find_caps(struct virtio_device *v)
{
	struct pci_dev *d = v->pci;

	for (uint8_t cap = pci_find_cap(d, PCI_CAP_VENDOR, 0); cap;
	     cap = pci_find_cap(d, PCI_CAP_VENDOR, cap)) {
		uint8_t type = pci_read8(d, cap + 3);
		uint32_t len = 0;

		switch (type) {
		case CAP_COMMON_CFG:
			if (!v->common) {
				v->common = map_cap(v, cap, &len);
				if (v->common && len < COMMON_LEN)
					v->common = NULL;
				v->common_len = len;
			}
			break;
		case CAP_NOTIFY_CFG:
			if (!v->notify_base) {
				v->notify_base = map_cap(v, cap, &v->notify_len);
				v->notify_mult = pci_read32(d, cap + 16);
			}
			break;
		case CAP_ISR_CFG:
			if (!v->isr)
				v->isr = map_cap(v, cap, NULL);
			break;
		case CAP_DEVICE_CFG:
			if (!v->device_cfg)
				v->device_cfg = map_cap(v, cap, &v->device_cfg_len);
			break;
		}
	}
	return v->common && v->notify_base ? 0 : -ENODEV;
}

/* ---- queues ---- */

static void queue_notify(struct virtq *vq)
{
	struct virtio_queue *q = virtq_priv(vq);

	/* 4.1.5.2: the queue index, unless NOTIFICATION_DATA (not negotiated) */
	*q->notify = virtq_index(vq);
}

/*
 * A vector sent to a CPU that does not own the queue (net_irq=other):
 * counted here, and the owner's context scheduled there, through
 * poll_schedule's IPI.
 */
static void queue_steered(void *arg)
{
	struct virtio_queue *q = arg;

	virtq_interrupt(q->vq);
	poll_schedule(q->ctx);
}

static bool use_msix(struct virtio_device *v)
{
	return config_get(&cfg_irq) == IRQ_MSIX && v->pci->msix_cap;
}

/*
 * A LAPIC vector for @q routed through MSI-X entry @entry; -1 if none.
 * To the context's own CPU, a raise entry (isr.S: no C call, the bit
 * ORed where it is taken); elsewhere, a C handler that schedules it.
 */
static int queue_vector(struct virtio_device *v, struct virtio_queue *q, uint16_t entry)
{
	unsigned int owner;
	int vec;

	if (!q->ctx || !q->ctx->cpu || !use_msix(v) || entry >= v->pci->msix_size)
		return -1;
	owner = q->ctx->cpu->index;
	if (q->irq_cpu != owner) {
		q->steered = (struct irq_action){ queue_steered, q };
		vec = irq_alloc_vector(&q->steered);
		if (vec >= 0 && !pci_msix_route_to(v->pci, entry, vec, smp_apic_id(q->irq_cpu)))
			return vec;
		pr_warn("virtio: queue %u: cpu %u (apic %u) cannot be an MSI target, cpu %u takes it\n",
			entry, q->irq_cpu, smp_apic_id(q->irq_cpu), owner);
		irq_free_vector(vec);
		q->irq_cpu = owner;
	}
	vec = irq_alloc_raise(virtq_interrupt_counter(q->vq), q->ctx);
	if (vec >= 0 && pci_msix_route_to(v->pci, entry, vec, smp_apic_id(owner))) {
		irq_free_vector(vec);
		vec = -1;
	}
	return vec;
}

/* A CPU that can take a queue's interrupts: online, else the owner. */
static unsigned int online_or(unsigned int cpu, unsigned int owner)
{
	return cpu < smp_cpus() && smp_state(cpu) == SMP_ONLINE ? cpu : owner;
}

static struct virtq *setup_queue(struct virtio_device *v, uint16_t index, uint16_t max_size,
				 struct poll_ctx *ctx, unsigned int irq_cpu)
{
	bool packed = virtio_has_feature(v, VIRTIO_F_RING_PACKED);
	struct virtio_queue *q;
	uint16_t size, noff, msix = NO_VECTOR;
	uint64_t notify_off;

	if (index >= VIRTIO_MAX_QUEUES || index >= v->num_queues)
		return NULL;
	q = &v->queues[index];
	c_write16(v, COMMON_Q_SELECT, index);
	size = c_read16(v, COMMON_Q_SIZE);
	if (!size)
		return NULL; /* 4.1.5.1.3: queue not available */
	if (max_size && size > max_size)
		size = max_size;
	if (!packed) /* split rings want a power of two; round down */
		while (size & (size - 1))
			size &= size - 1;

	noff = c_read16(v, COMMON_Q_NOFF);
	notify_off = (uint64_t)noff * v->notify_mult;
	if (notify_off + 2 > v->notify_len) {
		pr_err("virtio: queue %u notify offset %#llx outside the window\n", index,
		       (unsigned long long)notify_off);
		return NULL;
	}

	q->vdev = v;
	q->ctx = ctx;
	q->irq_cpu = ctx && ctx->cpu ? online_or(irq_cpu, ctx->cpu->index) : 0;
	q->notify = (volatile uint16_t *)(v->notify_base + notify_off);
	q->vq = virtq_create(packed ? VIRTQ_PACKED : VIRTQ_SPLIT, index, size, v->features,
			     queue_notify, q);
	if (!q->vq)
		return NULL;
	/*
	 * 4.1.4.3: queue_msix_vector names any table entry. Configuration
	 * changes get no vector (COMMON_MSIX is NO_VECTOR), so queue i takes
	 * entry i: a table with one entry per queue (QEMU's vhost-user-vsock
	 * has 3) then gives every queue an interrupt and none is polled.
	 */
	q->vector = queue_vector(v, q, index);
	if (q->vector >= 0)
		msix = index;
	else
		virtq_disable_cb(q->vq); /* polled: ask for no notifications */

	c_write16(v, COMMON_Q_SIZE, size);
	c_write64(v, COMMON_Q_DESC, virtq_desc_addr(q->vq));
	c_write64(v, COMMON_Q_DRIVER, virtq_driver_addr(q->vq));
	c_write64(v, COMMON_Q_DEVICE, virtq_device_addr(q->vq));
	c_write16(v, COMMON_Q_MSIX, msix);
	if (c_read16(v, COMMON_Q_MSIX) != msix) {
		/* 4.1.5.1.2.1: the device could not take the vector */
		pr_warn("virtio: queue %u: device refused MSI-X entry, polling\n", index);
		irq_free_vector(q->vector);
		q->vector = -1;
		c_write16(v, COMMON_Q_MSIX, NO_VECTOR);
		virtq_disable_cb(q->vq);
	}
	c_write16(v, COMMON_Q_ENABLE, 1);
	return q->vq;
}

struct virtq *virtio_setup_queue(struct virtio_device *v, uint16_t index, uint16_t max_size,
				 struct poll_ctx *ctx)
{
	return setup_queue(v, index, max_size, ctx, ctx && ctx->cpu ? ctx->cpu->index : 0);
}

struct virtq *virtio_setup_queue_steered(struct virtio_device *v, uint16_t index, uint16_t max_size,
					 struct poll_ctx *ctx, unsigned int irq_cpu)
{
	return setup_queue(v, index, max_size, ctx, irq_cpu);
}

enum poll_verdict virtio_queue_check(struct virtq *vq, bool count)
{
	return vq ? virtq_watch(vq, virtio_queue_interrupts(vq), count) : POLL_IDLE;
}

/*
 * The device was reset (it sends nothing more): every vector back to its
 * default, then every CPU that took one passed through its loop, so no
 * interrupt entry still reads the queue. A CPU that did not answer keeps
 * its queues' rings from being freed (held).
 */
#define SYNC_NS 2000000000ULL

static void queues_unhook(struct virtio_device *v)
{
	for (int i = 0; i < VIRTIO_MAX_QUEUES; i++) {
		struct virtio_queue *q = &v->queues[i];

		if (q->vector < 0)
			continue;
		irq_free_vector(q->vector);
		q->vector = -1;
		if (q->irq_cpu && q->irq_cpu != percpu_read(index) &&
		    !xcpu_sync(q->irq_cpu, NULL, 0, SYNC_NS))
			v->held |= 1u << i;
	}
}

/*
 * After the driver's remove(): the rings, unless a CPU that owned one or
 * took its interrupts never let go (then kept, and said so).
 */
static void free_queues(struct virtio_device *v)
{
	for (int i = 0; i < VIRTIO_MAX_QUEUES; i++) {
		struct virtio_queue *q = &v->queues[i];
		unsigned int owner = q->vq ? virtq_owner_index(q->vq) : 0;

		if (q->vq && owner && owner != percpu_read(index) &&
		    !xcpu_sync(owner, NULL, 0, SYNC_NS))
			v->held |= 1u << i;
		if (q->vq && (v->held & (1u << i)))
			pr_err("virtio: queue %d: a CPU did not let go of it: its ring stays "
			       "allocated\n",
			       i);
		else if (q->vq)
			virtq_destroy(q->vq);
		memset(q, 0, sizeof(*q));
		q->vector = -1;
	}
	v->held = 0;
}

/* ---- features and initialisation (3.1.1) ---- */

static uint64_t read_device_features(struct virtio_device *v)
{
	c_write32(v, COMMON_DFSELECT, 0);
	uint64_t lo = c_read32(v, COMMON_DF);

	c_write32(v, COMMON_DFSELECT, 1);
	return lo | (uint64_t)c_read32(v, COMMON_DF) << 32;
}

static void write_driver_features(struct virtio_device *v, uint64_t f)
{
	c_write32(v, COMMON_GFSELECT, 0);
	c_write32(v, COMMON_GF, (uint32_t)f);
	c_write32(v, COMMON_GFSELECT, 1);
	c_write32(v, COMMON_GF, (uint32_t)(f >> 32));
}

/* The transport's wish list, trimmed by the ring=, event_idx=, indirect= keys. */
static uint64_t transport_features(void)
{
	uint64_t f = VIRTIO_BIT(VIRTIO_F_VERSION_1);

	if (config_get(&cfg_ring) == RING_PACKED)
		f |= VIRTIO_BIT(VIRTIO_F_RING_PACKED);
	if (config_get(&cfg_event_idx))
		f |= VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
	if (config_get(&cfg_indirect))
		f |= VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC);
	return f;
}

/* Bits a hostile restart asks for on top (virtio_restart). */
static uint64_t restart_features;

static uint64_t driver_features(const struct virtio_driver *drv)
{
	return drv->features | (drv->config_features ? drv->config_features() : 0) |
	       restart_features;
}

static int fail(struct virtio_device *v, const char *why)
{
	pr_err("virtio %02x:%02x.%x (%s): %s\n", v->pci->bus, v->pci->dev, v->pci->fn,
	       v->driver->name, why);
	set_status(v, STATUS_FAILED);
	v->state = why;
	return -EIO;
}

void virtio_quiesce(struct virtio_device *v)
{
	device_reset(v);
	queues_unhook(v);
}

static int device_start(struct virtio_device *v)
{
	int ret;

	if (device_reset(v))
		return fail(v, "reset did not complete");
	set_status(v, STATUS_ACKNOWLEDGE);
	set_status(v, STATUS_DRIVER);
	v->offered = read_device_features(v);
	if (!(v->offered & VIRTIO_BIT(VIRTIO_F_VERSION_1)))
		return fail(v, "device does not offer VIRTIO_F_VERSION_1");
	v->features = v->offered & (transport_features() | driver_features(v->driver));
	write_driver_features(v, v->features);
	set_status(v, STATUS_FEATURES_OK);
	if (!(virtio_get_status(v) & STATUS_FEATURES_OK))
		return fail(v, "device rejected our features (FEATURES_OK cleared)");

	v->num_queues = c_read16(v, COMMON_NUMQ);
	v->config_vector = -1;
	c_write16(v, COMMON_MSIX, NO_VECTOR);
	if (use_msix(v) && pci_msix_enable(v->pci))
		pr_warn("virtio: MSI-X table unusable, polling\n");
	free_queues(v);
	ret = v->driver->probe(v);
	if (ret) {
		virtio_quiesce(v);
		free_queues(v);
		return fail(v, "driver probe failed");
	}
	set_status(v, STATUS_DRIVER_OK);
	v->state = "running";
	return 0;
}

/*
 * Teardown in the reverse order of setup, unhooking before freeing: the
 * device stops using our memory and sending interrupts (reset), the
 * vectors go (queues_unhook), the driver takes its contexts out of the
 * loops and frees its state (remove), then the rings (free_queues).
 */
static void device_stop(struct virtio_device *v)
{
	if (!v->driver || !v->common)
		return;
	device_reset(v);
	queues_unhook(v);
	if (v->driver->remove && v->state && !strcmp(v->state, "running"))
		v->driver->remove(v);
	free_queues(v);
	pci_msix_disable(v->pci);
	v->state = "stopped";
}

void virtio_reprobe_all(void)
{
	for (unsigned int i = 0; i < n_devices; i++) {
		device_stop(&devices[i]);
		if (devices[i].driver && devices[i].common)
			device_start(&devices[i]);
	}
}

/* ---- The hostile driver (fuzz_transport.c), never on a data path ---- */

uint32_t virtio_common_read(struct virtio_device *v, unsigned int off, unsigned int width)
{
	if (!v->common || off + width > v->common_len)
		return 0;
	if (width == 1)
		return c_read8(v, off);
	return width == 2 ? c_read16(v, off) : c_read32(v, off);
}

void virtio_common_write(struct virtio_device *v, unsigned int off, unsigned int width,
			 uint32_t val)
{
	if (!v->common || off + width > v->common_len)
		return;
	if (width == 1)
		c_write8(v, off, (uint8_t)val);
	else if (width == 2)
		c_write16(v, off, (uint16_t)val);
	else
		c_write32(v, off, val);
}

int virtio_restart(struct virtio_device *v, uint64_t extra_features)
{
	int ret;

	if (!v->driver || !v->common)
		return -ENODEV;
	device_stop(v);
	restart_features = extra_features;
	ret = device_start(v);
	restart_features = 0;
	return ret;
}

/* The first queue marked broken, or -1. */
static int device_broken(const struct virtio_device *v)
{
	for (int q = 0; q < VIRTIO_MAX_QUEUES; q++)
		if (v->queues[q].vq && virtq_is_broken(v->queues[q].vq))
			return q;
	return -1;
}

/*
 * A queue the device wrote something into that the ring cannot
 * resynchronise after (virtq_is_broken) returns nothing more: reset the
 * device and set it up again with fresh queues, the path a ring= change
 * takes. The driver's remove() ends what lived on the old rings (vsock:
 * connections reset, listeners kept). A context of its own on CPU 0, so
 * it runs outside every driver's poll function, since remove() frees
 * their state; the ring schedules it when it marks a queue broken, from
 * whichever CPU owns the queue (poll_schedule's IPI then wakes CPU 0).
 */
static unsigned int recover_broken_poll(struct poll_ctx *ctx, unsigned int budget)
{
	unsigned int done = 0;

	for (unsigned int i = 0; i < n_devices && done < budget; i++) {
		struct virtio_device *v = &devices[i];
		int q = v->driver && v->common ? device_broken(v) : -1;

		if (q < 0)
			continue;
		v->recoveries++;
		pr_err("virtio %02x:%02x.%x (%s): queue broken by the device (queue %d: a "
		       "garbled completion, lost buffers or silence): reset and re-probe #%llu\n",
		       v->pci->bus, v->pci->dev, v->pci->fn, v->driver->name, q,
		       (unsigned long long)v->recoveries);
		device_stop(v);
		device_start(v);
		done++;
	}
	return done;
}

/* The watchdog's look: a broken queue nobody scheduled the recovery for. */
static enum poll_verdict recover_check(struct poll_ctx *ctx, bool count, const char **what)
{
	*what = "virtio-recover (a queue broken)";
	for (unsigned int i = 0; i < n_devices; i++)
		if (devices[i].driver && devices[i].common && device_broken(&devices[i]) >= 0)
			return POLL_LOST;
	return POLL_IDLE;
}

static struct poll_ctx recover_ctx = {
	.name = "virtio-recover",
	.poll = recover_broken_poll,
	.check = recover_check,
};

static void recover_schedule(void)
{
	poll_schedule(&recover_ctx);
}

static uint16_t device_type(const struct pci_dev *d)
{
	if (d->device >= 0x1040 && d->device <= 0x107f)
		return d->device - 0x1040;
	if (d->device >= 0x1000 && d->device <= 0x103f)
		return d->subsys_id; /* transitional (4.1.2.1) */
	return 0;
}

static const struct virtio_driver *find_driver(uint16_t type)
{
	for (unsigned int i = 0; i < n_drivers; i++)
		if (drivers[i]->device_type == type)
			return drivers[i];
	return NULL;
}

static void reprobe_hook(struct config_key *key)
{
	virtio_reprobe_all();
}

void virtio_pci_init(void)
{
	for (unsigned int i = 0; i < pci_count(); i++) {
		struct pci_dev *d = pci_get(i);
		struct virtio_device *v;

		if (d->vendor != VIRTIO_PCI_VENDOR || !device_type(d))
			continue;
		if (n_devices == MAX_DEVICES)
			break;
		v = &devices[n_devices++];
		memset(v, 0, sizeof(*v));
		for (int q = 0; q < VIRTIO_MAX_QUEUES; q++)
			v->queues[q].vector = -1;
		v->pci = d;
		v->type = device_type(d);
		v->driver = find_driver(v->type);
		if (find_caps(v)) {
			v->state = "legacy-only: skipped";
			v->common = NULL;
			pr_warn("virtio %02x:%02x.%x: no modern interface, skipped\n", d->bus,
				d->dev, d->fn);
			continue;
		}
		if (!v->driver) {
			v->state = "no driver";
			continue;
		}
		pci_enable(d);
		device_start(v);
	}
	virtio_show_init();
	/* a hook sits in one key's list, so one per key */
	static struct config_hook hooks[] = {
		{ .fn = reprobe_hook },
		{ .fn = reprobe_hook },
		{ .fn = reprobe_hook },
		{ .fn = reprobe_hook },
	};

	config_on_change(&cfg_ring, &hooks[0]);
	config_on_change(&cfg_event_idx, &hooks[1]);
	config_on_change(&cfg_indirect, &hooks[2]);
	config_on_change(&cfg_irq, &hooks[3]);
	poll_ctx_add(&recover_ctx);
	virtq_on_broken(recover_schedule);
}
