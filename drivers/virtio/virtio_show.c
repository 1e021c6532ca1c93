// SPDX-License-Identifier: MIT
/* The `virtio` shell command: devices, features by name, queues, counters. */
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/virtio_pci.h"
#include "kernel/config.h"
#include "kernel/cpu.h"
#include "kernel/io.h"
#include "kernel/percpu.h"
#include "kernel/shell.h"
#include "kernel/shell_json.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"

/* 6 Reserved Feature Bits */
static const char *transport_feature_name(unsigned int bit)
{
	switch (bit) {
	case 24:
		return "NOTIFY_ON_EMPTY";
	case 27:
		return "ANY_LAYOUT";
	case VIRTIO_F_INDIRECT_DESC:
		return "INDIRECT_DESC";
	case VIRTIO_F_EVENT_IDX:
		return "EVENT_IDX";
	case VIRTIO_F_VERSION_1:
		return "VERSION_1";
	case 33:
		return "ACCESS_PLATFORM";
	case VIRTIO_F_RING_PACKED:
		return "RING_PACKED";
	case VIRTIO_F_IN_ORDER:
		return "IN_ORDER";
	case 36:
		return "ORDER_PLATFORM";
	case 37:
		return "SR_IOV";
	case 38:
		return "NOTIFICATION_DATA";
	case 39:
		return "NOTIF_CONFIG_DATA";
	case 40:
		return "RING_RESET";
	default:
		return NULL;
	}
}

static void print_features(const struct virtio_device *v, const char *label, uint64_t f)
{
	printf("  %s:", label);
	for (unsigned int bit = 0; bit < 64; bit++) {
		const char *name = NULL;

		if (!(f & (1ULL << bit)))
			continue;
		if (bit < 24 && v->driver && v->driver->feature_names)
			name = v->driver->feature_names[bit];
		else if (bit >= 24)
			name = transport_feature_name(bit);
		if (name)
			printf(" %s", name);
		else
			printf(" bit%u", bit);
	}
	printf("\n");
}

static const char *type_name(uint16_t type)
{
	switch (type) {
	case VIRTIO_ID_NET:
		return "net";
	case VIRTIO_ID_RNG:
		return "rng";
	case VIRTIO_ID_VSOCK:
		return "vsock";
	default:
		return "other";
	}
}

static void print_queue(const struct virtio_queue *q)
{
	struct virtq_stats st;

	virtq_get_stats(q->vq, &st);
	printf("  queue %u: %s size %u, %s", virtq_index(q->vq),
	       virtq_layout(q->vq) == VIRTQ_PACKED ? "packed" : "split", virtq_size(q->vq),
	       q->vector >= 0 ? "msix" : "polled");
	if (q->vector >= 0)
		printf(" vector %d (%llu irqs)", q->vector,
		       (unsigned long long)irq_count(q->vector));
	printf("\n    added %llu completed %llu kicks %llu suppressed %llu interrupts %llu "
	       "bad %llu full %llu indirect %llu missed %llu wrong_cpu %llu\n",
	       (unsigned long long)st.added, (unsigned long long)st.completed,
	       (unsigned long long)st.kicks, (unsigned long long)st.kicks_suppressed,
	       (unsigned long long)st.interrupts, (unsigned long long)st.bad_completions,
	       (unsigned long long)st.full, (unsigned long long)st.indirect,
	       (unsigned long long)st.missed_notifications, (unsigned long long)st.wrong_cpu);
	virtq_print_indices(q->vq);
}

#define BREAK_AFTER_MAX_MS 10000ULL

/* On the queue's owner, arg[1] ms after the request came: as if its device had garbled it. */
static void break_here(const struct spsc_msg *m, unsigned int cpu)
{
	uint64_t end = now_ns() + m->arg[1] * 1000000ULL;

	while (now_ns() < end)
		cpu_relax();
	virtq_mark_broken((struct virtq *)(uintptr_t)m->arg[0]);
}

/*
 * `virtio break DEV Q [MS]`: queue Q of device DEV marked broken on the
 * CPU that owns it, MS ms later (the command has returned and CPU 0 is
 * asleep by then), as a device that garbled it would: the recovery on
 * CPU 0 resets and re-probes the device. The path a queue broken on
 * another CPU takes, for the tests of it; a console command only.
 */
static int cmd_virtio_break(int argc, char **argv)
{
	struct spsc_msg m = { .fn = break_here };
	struct virtio_device *v;
	uint64_t dev, q, ms = 0;
	unsigned int owner;

	if ((argc != 4 && argc != 5) || config_parse_uint(argv[2], &dev) ||
	    config_parse_uint(argv[3], &q) ||
	    (argc == 5 && (config_parse_uint(argv[4], &ms) || ms > BREAK_AFTER_MAX_MS)))
		return shell_error("virtio: usage: virtio break DEV QUEUE [MS (up to 10000)]");
	v = dev < virtio_device_count() ? virtio_device_get((unsigned int)dev) : NULL;
	if (!v || q >= VIRTIO_MAX_QUEUES || !v->queues[q].vq)
		return shell_error("virtio: no queue %llu on device %llu", (unsigned long long)q,
				   (unsigned long long)dev);
	m.arg[0] = (uintptr_t)v->queues[q].vq;
	m.arg[1] = ms;
	owner = virtq_owner_index(v->queues[q].vq);
	if (owner == percpu_read(index))
		break_here(&m, owner);
	else if (xcpu_send(owner, &m))
		return shell_error("virtio: cpu %u, which owns the queue, cannot be asked", owner);
	printf("virtio: device %llu queue %llu marked broken on cpu %u after %llu ms\n",
	       (unsigned long long)dev, (unsigned long long)q, owner, (unsigned long long)ms);
	return 0;
}

static void queue_json(struct json_writer *w, const struct virtio_queue *q)
{
	struct virtq_stats st;

	virtq_get_stats(q->vq, &st);
	json_open(w, NULL, '{');
	json_put_u64(w, "index", virtq_index(q->vq));
	json_put_string(w, "layout", virtq_layout(q->vq) == VIRTQ_PACKED ? "packed" : "split");
	json_put_u64(w, "size", virtq_size(q->vq));
	json_put_i64(w, "vector", q->vector);
	json_put_u64(w, "added", st.added);
	json_put_u64(w, "completed", st.completed);
	json_put_u64(w, "kicks", st.kicks);
	json_put_u64(w, "suppressed", st.kicks_suppressed);
	json_put_u64(w, "interrupts", st.interrupts);
	json_put_u64(w, "bad", st.bad_completions);
	json_put_u64(w, "full", st.full);
	json_put_u64(w, "indirect", st.indirect);
	json_put_u64(w, "missed", st.missed_notifications);
	json_put_u64(w, "wrong_cpu", st.wrong_cpu);
	json_close(w, '}');
}

/* One device for programs: its PCI function and memory BARs, state, queues. */
static void device_json(struct json_writer *w, struct virtio_device *v)
{
	json_open(w, NULL, '{');
	json_put_u64(w, "bus", v->pci->bus);
	json_put_u64(w, "dev", v->pci->dev);
	json_put_u64(w, "fn", v->pci->fn);
	json_put_string(w, "type", type_name(v->type));
	json_put_string(w, "driver", v->driver ? v->driver->name : "none");
	json_put_string(w, "state", v->state ? v->state : "?");
	json_open(w, "bars", '[');
	for (unsigned int b = 0; b < 6; b++) {
		if (!v->pci->bar[b].addr || v->pci->bar[b].io)
			continue;
		json_open(w, NULL, '{');
		json_put_u64(w, "addr", v->pci->bar[b].addr);
		json_put_u64(w, "size", v->pci->bar[b].size);
		json_close(w, '}');
	}
	json_close(w, ']');
	if (v->common) {
		json_put_u64(w, "offered", v->offered);
		json_put_u64(w, "negotiated", v->features);
		json_put_u64(w, "recoveries", v->recoveries);
	}
	json_open(w, "queues", '[');
	for (int q = 0; v->common && q < VIRTIO_MAX_QUEUES; q++)
		if (v->queues[q].vq)
			queue_json(w, &v->queues[q]);
	json_close(w, ']');
	json_close(w, '}');
}

static int virtio_json(void)
{
	struct json_writer *w = shell_json_begin();

	json_open(w, "devices", '[');
	for (unsigned int i = 0; i < virtio_device_count(); i++)
		device_json(w, virtio_device_get(i));
	json_close(w, ']');
	return shell_json_end("virtio");
}

static int cmd_virtio(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "break"))
		return cmd_virtio_break(argc, argv);
	if (shell_json_wanted(&argc, argv) && argc == 1)
		return virtio_json();
	if (argc > 1)
		return shell_error("virtio: unexpected argument '%s'", argv[1]);
	printf("%u virtio device(s)\n", virtio_device_count());
	for (unsigned int i = 0; i < virtio_device_count(); i++) {
		struct virtio_device *v = virtio_device_get(i);

		printf("%02x:%02x.%x virtio-%s (type %u, pci %04x:%04x) driver %s: %s\n",
		       v->pci->bus, v->pci->dev, v->pci->fn, type_name(v->type), v->type,
		       v->pci->vendor, v->pci->device, v->driver ? v->driver->name : "none",
		       v->state ? v->state : "?");
		if (!v->common)
			continue;
		if (!virtio_device_ok(v))
			printf("  device status %#x: DEVICE_NEEDS_RESET or FAILED\n",
			       virtio_get_status(v));
		print_features(v, "offered", v->offered);
		print_features(v, "negotiated", v->features);
		printf("  queues: %u, msix entries: %u, broken-queue resets: %llu\n", v->num_queues,
		       v->pci->msix_size, (unsigned long long)v->recoveries);
		for (int q = 0; q < VIRTIO_MAX_QUEUES; q++)
			if (v->queues[q].vq)
				print_queue(&v->queues[q]);
		if (v->driver && v->driver->show && v->state && v->state[0] == 'r')
			v->driver->show(v);
	}
	return 0;
}

static const struct shell_cmd virtio_cmd = {
	.name = "virtio",
	.usage = "[json | break DEV QUEUE [MS]]",
	.help = "virtio devices: features, rings, queues, counters (break: as if garbled)",
	.run = cmd_virtio,
};

void virtio_show_init(void)
{
	shell_register(&virtio_cmd);
}
