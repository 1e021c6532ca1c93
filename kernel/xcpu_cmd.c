// SPDX-License-Identifier: MIT
/*
 * `cpus ping [N]` and `cpus stats`: the first users of cross-CPU messages
 * (xcpu.h). One request is in flight at a time; the BSP waits for its
 * reply in poll_wait, so its services keep running meanwhile. A reply
 * that comes after its request timed out is recognised by its number
 * and dropped.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"
#include "kernel/xcpu_cmd.h"

#define PING_DEFAULT 10
#define PING_MAX 100000
#define REPLY_TIMEOUT_MS 5000ULL /* TCG or nested KVM on a busy host is slow */
#define REKICK_MS 10ULL

/* The request in flight; the reply fills in its words. */
static struct {
	unsigned int cpu;
	uint64_t seq;
	uint64_t kicked_ns; /* the last mail IPI sent */
	bool done;
	uint64_t arg[7];
} want;
static uint64_t last_seq;

/* On the BSP, from the reply poller or the wait's step. */
static void on_reply(const struct spsc_msg *m, unsigned int ap)
{
	if (ap != want.cpu || m->arg[0] != want.seq)
		return; /* late: its request timed out */
	memcpy(want.arg, m->arg, sizeof(want.arg));
	want.done = true;
}

/* On the AP: the reply carries the request's number back. */
static void ap_ping(const struct spsc_msg *m, unsigned int ap)
{
	struct spsc_msg r = { .fn = on_reply, .arg = { m->arg[0] } };

	xcpu_reply(ap, &r);
}

/* On the AP: its own counters, copied into the reply. */
static void ap_stats(const struct spsc_msg *m, unsigned int ap)
{
	struct xcpu_stats s;
	struct spsc_msg r = { .fn = on_reply };

	xcpu_own_stats(ap, &s);
	r.arg[0] = m->arg[0];
	r.arg[1] = s.msgs;
	r.arg[2] = s.ipis;
	r.arg[3] = s.halts;
	r.arg[4] = s.dropped;
	xcpu_reply(ap, &r);
}

/*
 * Each REKICK_MS without its request taken, the AP is sent the mail IPI
 * again. Under nested KVM (L1 under TCG, host/nested) an AP was seen
 * halted for the whole timeout with the request in its ring, about once
 * in a few thousand round trips at -smp 4, and the next request's IPI
 * woke it: the same kind of wake-up lost below the guest that idle.c's
 * idle_guard bounds on the BSP. `cpus stats` counts the kicks sent again.
 */
static enum poll_step reply_in(void *arg)
{
	uint64_t now;

	xcpu_drain();
	if (want.done)
		return POLL_DONE;
	now = now_ns();
	if (now - want.kicked_ns >= REKICK_MS * 1000000ULL) {
		want.kicked_ns = now;
		xcpu_rekick(want.cpu);
	}
	return POLL_AGAIN;
}

/* One request to AP @cpu and its reply; *@ns the round trip. 0 or -errno. */
static int ask(unsigned int cpu, void (*fn)(const struct spsc_msg *, unsigned int), uint64_t *ns)
{
	struct spsc_msg m = { .fn = fn };
	uint64_t t0;
	int ret;

	want.cpu = cpu;
	want.seq = ++last_seq;
	want.done = false;
	m.arg[0] = want.seq;
	t0 = now_ns();
	want.kicked_ns = t0;
	ret = xcpu_send(cpu, &m);
	if (ret)
		return ret;
	/* once more after the deadline: the BSP's vCPU may have been stopped */
	if (!poll_wait(reply_in, NULL, t0 + REPLY_TIMEOUT_MS * 1000000ULL) &&
	    reply_in(NULL) != POLL_DONE)
		return -ETIMEDOUT;
	*ns = now_ns() - t0;
	return 0;
}

static const char *ask_error(int err)
{
	switch (err) {
	case -ETIMEDOUT:
		return "no reply within 5000 ms";
	case -ENOSPC:
		return "its request ring is full";
	case -EIO:
		return "the IPI could not be sent";
	default:
		return "no rings or no IPI vector";
	}
}

/* Whether @cpu can take requests; if not, one line saying why. */
static bool ap_usable(unsigned int cpu)
{
	int s = smp_state(cpu);

	if (s == SMP_ONLINE)
		return true;
	printf("cpu %u apic %u: %s, skipped\n", cpu, smp_apic_id(cpu), smp_state_name(s));
	return false;
}

/* A timeout says whether the AP took the request: awake or not. */
static void skip(unsigned int cpu, int err)
{
	printf("cpu %u apic %u: %s", cpu, smp_apic_id(cpu), ask_error(err));
	if (err == -ETIMEDOUT)
		printf(" (%u requests not taken)", xcpu_untaken(cpu));
	printf(", skipped\n");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* @n round trips to AP @cpu, then its line; 0, or -errno after a skip line. */
static int ping_one(unsigned int cpu, uint64_t *ns, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		int ret = ask(cpu, ap_ping, &ns[i]);

		if (ret) {
			skip(cpu, ret);
			return ret;
		}
	}
	qsort(ns, n, sizeof(*ns), cmp_u64);
	printf("cpu %u apic %u: %u round trips, min %llu p50 %llu max %llu ns\n", cpu,
	       smp_apic_id(cpu), n, (unsigned long long)ns[0], (unsigned long long)ns[n / 2],
	       (unsigned long long)ns[n - 1]);
	return 0;
}

int cpus_ping(int argc, char **argv)
{
	uint64_t n = PING_DEFAULT, *ns;
	unsigned int tried = 0, failed = 0;

	if (argc > 2)
		return shell_error("cpus ping: unexpected argument '%s'", argv[2]);
	if (argc == 2 && (config_parse_uint(argv[1], &n) || !n || n > PING_MAX))
		return shell_error("cpus ping: N must be 1..%u, not '%s'", PING_MAX, argv[1]);
	ns = malloc(n * sizeof(*ns));
	if (!ns)
		return shell_error("cpus ping: no memory for %llu samples", (unsigned long long)n);
	for (unsigned int cpu = 1; cpu < smp_cpus(); cpu++) {
		if (!ap_usable(cpu))
			continue;
		tried++;
		failed += ping_one(cpu, ns, (unsigned int)n) != 0;
	}
	free(ns);
	if (!tried)
		return shell_error("cpus ping: no application processor online, nothing to ping");
	if (failed)
		return shell_error("cpus ping: %u of %u APs did not answer", failed, tried);
	return 0;
}

static void bsp_line(void)
{
	struct xcpu_bsp_stats b;

	xcpu_bsp_stats(&b);
	printf("cpu 0 apic %u: bsp, requests %llu replies %llu reply_ipis %llu rekicks %llu\n",
	       smp_apic_id(0), (unsigned long long)b.sent, (unsigned long long)b.replies,
	       (unsigned long long)b.ipis, (unsigned long long)b.rekicks);
}

int cpus_stats(int argc, char **argv)
{
	unsigned int tried = 0, failed = 0;
	uint64_t ns;

	if (argc > 1)
		return shell_error("cpus stats: unexpected argument '%s'", argv[1]);
	bsp_line(); /* before this command's own requests */
	for (unsigned int cpu = 1; cpu < smp_cpus(); cpu++) {
		int ret;

		if (!ap_usable(cpu))
			continue;
		tried++;
		ret = ask(cpu, ap_stats, &ns);
		if (ret) {
			skip(cpu, ret);
			failed++;
			continue;
		}
		printf("cpu %u apic %u: messages %llu ipis %llu halts %llu dropped %llu\n", cpu,
		       smp_apic_id(cpu), (unsigned long long)want.arg[1],
		       (unsigned long long)want.arg[2], (unsigned long long)want.arg[3],
		       (unsigned long long)want.arg[4]);
	}
	if (failed)
		return shell_error("cpus stats: %u of %u APs did not answer", failed, tried);
	return 0;
}
