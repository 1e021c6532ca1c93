// SPDX-License-Identifier: MIT
/*
 * ringside-cost.so: a QEMU TCG plugin that counts what the guest executes.
 *
 *   -plugin build/host/ringside-cost.so,shm=PATH[,io=on][,prof=on]
 *           [,prof_slots=N][,notify=BASE+LEN ...]
 *
 * The counters live in PATH, a file mapped MAP_SHARED (layout:
 * host/cost/cost_shm.h), so any host process reads them while the guest
 * runs and after QEMU exits. (`file=` is QEMU's own key for the plugin path,
 * hence `shm=`.)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "host/cost/cost.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct cost_state cost;

struct cost_args {
	const char *shm;
	bool io;
	bool prof;
	unsigned long prof_slots;
	unsigned int n_notify;
	struct cost_range notify[COST_MAX_NOTIFY];
};

static void say(const char *fmt, const char *a, const char *b)
{
	char line[512];

	snprintf(line, sizeof(line), fmt, a, b);
	qemu_plugin_outs(line);
}

static int parse_on_off(const char *key, const char *val, bool *out)
{
	if (!strcmp(val, "on") || !strcmp(val, "yes") || !strcmp(val, "true"))
		*out = true;
	else if (!strcmp(val, "off") || !strcmp(val, "no") || !strcmp(val, "false"))
		*out = false;
	else
		return -1;
	return 0;
}

/* "BASE+LEN", both in C notation (0x... for hex). */
static int parse_range(const char *val, struct cost_range *r)
{
	char *end;

	errno = 0;
	r->base = strtoull(val, &end, 0);
	if (errno || *end != '+')
		return -1;
	r->len = strtoull(end + 1, &end, 0);
	if (errno || *end || !r->len || r->base + r->len < r->base)
		return -1;
	return 0;
}

static int parse_arg(struct cost_args *a, char *arg)
{
	char *val = strchr(arg, '=');
	char *end;

	if (!val)
		return -1;
	*val++ = '\0';
	if (!strcmp(arg, "shm")) {
		a->shm = val;
		return *val ? 0 : -1;
	}
	if (!strcmp(arg, "io"))
		return parse_on_off(arg, val, &a->io);
	if (!strcmp(arg, "prof"))
		return parse_on_off(arg, val, &a->prof);
	if (!strcmp(arg, "prof_slots")) {
		a->prof_slots = strtoul(val, &end, 0);
		return *end || a->prof_slots < 64 || a->prof_slots > (1ul << 24) ? -1 : 0;
	}
	if (!strcmp(arg, "notify")) {
		if (a->n_notify == COST_MAX_NOTIFY)
			return -1;
		return parse_range(val, &a->notify[a->n_notify++]);
	}
	return -1;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Create PATH at its full size, map it, fill the header; magic last. */
static int map_block(const struct cost_args *a, unsigned int n_vcpus)
{
	size_t vcpu_off = align8(sizeof(struct cost_shm_header));
	size_t prof_off = align8(vcpu_off + n_vcpus * sizeof(struct cost_vcpu));
	size_t slots = a->prof ? a->prof_slots : 0;
	size_t size = prof_off + slots * sizeof(struct cost_prof_entry);
	struct cost_shm_header *h;
	int fd;

	fd = open(a->shm, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size) < 0) {
		close(fd);
		return -errno;
	}
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED)
		return -errno;
	h->version = COST_SHM_VERSION;
	h->header_size = sizeof(*h);
	h->vcpu_size = sizeof(struct cost_vcpu);
	h->n_vcpus = n_vcpus;
	h->prof_entry_size = sizeof(struct cost_prof_entry);
	h->prof_slots = slots;
	h->vcpu_offset = vcpu_off;
	h->prof_offset = slots ? prof_off : 0;
	h->flags = (a->io ? COST_F_IO : 0) | (a->prof ? COST_F_PROF : 0);
	h->state = COST_STATE_RUNNING;
	memcpy(h->notify, a->notify, sizeof(h->notify));
	h->n_notify = a->n_notify;
	__atomic_store_n(&h->magic, COST_SHM_MAGIC, __ATOMIC_RELEASE);

	cost.hdr = h;
	cost.vcpu = (struct cost_vcpu *)((char *)h + vcpu_off);
	cost.prof = slots ? (struct cost_prof_entry *)((char *)h + prof_off) : NULL;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void vcpu_idle(qemu_plugin_id_t id, unsigned int vcpu_index)
{
	if (vcpu_index >= cost.n_vcpus)
		return;
	cost.vcpu[vcpu_index].halts++;
	cost.idle_since[vcpu_index] = now_ns();
}

static void vcpu_resume(qemu_plugin_id_t id, unsigned int vcpu_index)
{
	uint64_t since;

	if (vcpu_index >= cost.n_vcpus)
		return;
	since = cost.idle_since[vcpu_index];
	if (since) {
		cost.vcpu[vcpu_index].idle_ns += now_ns() - since;
		cost.idle_since[vcpu_index] = 0;
	}
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	__atomic_store_n(&cost.hdr->state, COST_STATE_EXITED, __ATOMIC_RELEASE);
	msync(cost.hdr, cost.hdr->vcpu_offset, MS_ASYNC);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_plugin_info *info,
					   int argc, char **argv)
{
	struct cost_args a = { .prof_slots = 65536 };
	unsigned int n_vcpus;
	int err;

	for (int i = 0; i < argc; i++) {
		if (parse_arg(&a, argv[i]) < 0) {
			say("ringside-cost: bad argument '%s'%s\n", argv[i],
			    " (shm=PATH io=on|off prof=on|off prof_slots=N notify=BASE+LEN)");
			return -1;
		}
	}
	if (!a.shm) {
		say("ringside-cost: %s%s\n", "needs shm=PATH", "");
		return -1;
	}
	if (!info->system_emulation) {
		say("ringside-cost: %s%s\n", "system emulation only", "");
		return -1;
	}
	n_vcpus = info->system.max_vcpus > 0 ? info->system.max_vcpus : 1;
	err = map_block(&a, n_vcpus);
	if (err < 0) {
		say("ringside-cost: %s: %s\n", a.shm, strerror(-err));
		return -1;
	}
	cost.n_vcpus = n_vcpus;
	cost.io = a.io;
	cost.per_vcpu_cb = n_vcpus > 1;
	cost.idle_since = calloc(n_vcpus, sizeof(*cost.idle_since));
	if (!cost.idle_since)
		return -1;

	qemu_plugin_register_vcpu_tb_trans_cb(id, cost_tb_trans);
	qemu_plugin_register_vcpu_idle_cb(id, vcpu_idle);
	qemu_plugin_register_vcpu_resume_cb(id, vcpu_resume);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
