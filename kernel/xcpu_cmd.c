// SPDX-License-Identifier: MIT
/*
 * `cpus ping [N]`, `cpus stats`, `cpus sleep CPU MS`, `cpus busy CPU MS`,
 * `cpus irq V` and `cpus print CPU`: the cross-CPU messages (xcpu.h) seen
 * from the console. One request is in flight at a time; the BSP waits
 * for its reply in poll_wait, so its services keep running meanwhile. A
 * reply that comes after its request timed out is recognised by its
 * number and dropped.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/config.h"
#include "kernel/io.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"
#include "kernel/xcpu_cmd.h"

#define PING_DEFAULT 10
#define PING_MAX 100000
#define REPLY_TIMEOUT_MS 5000ULL /* TCG or nested KVM on a busy host is slow */
#define SLEEP_MAX_MS 60000ULL
#define BUSY_MAX_MS 60000ULL

/* The request in flight; the reply fills in its words. */
static struct {
	unsigned int cpu;
	uint64_t seq;
	bool done;
	uint64_t arg[7];
} want;
static uint64_t last_seq;

/* On the BSP, from the replies context or the wait's step. */
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
	r.arg[5] = s.timer_ticks;
	xcpu_reply(ap, &r);
}

/* The wait's step: the replies that came in, run here. */
static enum poll_step reply_in(void *arg)
{
	xcpu_drain();
	return want.done ? POLL_DONE : POLL_AGAIN;
}

/*
 * One request to AP @cpu (@arg its second word) and its reply within
 * @extra_ms more than the usual timeout; *@ns the round trip. 0 or -errno.
 */
static int ask_arg(unsigned int cpu, void (*fn)(const struct spsc_msg *, unsigned int),
		   uint64_t arg, uint64_t extra_ms, uint64_t *ns)
{
	struct spsc_msg m = { .fn = fn };
	uint64_t t0;
	int ret;

	want.cpu = cpu;
	want.seq = ++last_seq;
	want.done = false;
	m.arg[0] = want.seq;
	m.arg[1] = arg;
	t0 = now_ns();
	ret = xcpu_send(cpu, &m);
	if (ret)
		return ret;
	/* once more after the deadline: the BSP's vCPU may have been stopped */
	if (!poll_wait(reply_in, NULL, t0 + (REPLY_TIMEOUT_MS + extra_ms) * 1000000ULL) &&
	    reply_in(NULL) != POLL_DONE)
		return -ETIMEDOUT;
	*ns = now_ns() - t0;
	return 0;
}

static int ask(unsigned int cpu, void (*fn)(const struct spsc_msg *, unsigned int), uint64_t *ns)
{
	return ask_arg(cpu, fn, 0, 0, ns);
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
	printf("cpu 0 apic %u: bsp, requests %llu replies %llu ipis %llu\n", smp_apic_id(0),
	       (unsigned long long)b.sent, (unsigned long long)b.replies,
	       (unsigned long long)b.ipis);
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
		printf("cpu %u apic %u: messages %llu ipis %llu halts %llu dropped %llu "
		       "timer_ticks %llu\n",
		       cpu, smp_apic_id(cpu), (unsigned long long)want.arg[1],
		       (unsigned long long)want.arg[2], (unsigned long long)want.arg[3],
		       (unsigned long long)want.arg[4], (unsigned long long)want.arg[5]);
	}
	if (failed)
		return shell_error("cpus stats: %u of %u APs did not answer", failed, tried);
	return 0;
}

/*
 * `cpus sleep CPU MS`: AP CPU's own timer. The request adds (on the AP,
 * once) a context that asks to run when the time is up
 * (poll_schedule_at), so the AP's idle_wait arms its own LAPIC timer
 * and halts meanwhile. Each AP's state is its own (DEFINE_PER_CPU).
 */
struct ap_sleep {
	struct poll_ctx ctx;
	uint64_t seq, start_ns, due_ns, ticks0, halts0;
};

static DEFINE_PER_CPU(struct ap_sleep, sleeps);

static unsigned int sleep_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct percpu *self = this_cpu();
	struct ap_sleep *s = this_cpu_ptr(&sleeps);
	struct spsc_msg r = { .fn = on_reply };
	uint64_t now = now_ns();

	if (!s->due_ns)
		return 0;
	if (now < s->due_ns) {
		poll_schedule_at(ctx, s->due_ns);
		return 0;
	}
	r.arg[0] = s->seq;
	r.arg[1] = now - s->start_ns;
	r.arg[2] = self->timer_ticks - s->ticks0;
	r.arg[3] = self->idle.halts - s->halts0;
	s->due_ns = 0;
	xcpu_reply(self->index, &r);
	return 1;
}

/* On the AP: start the sleep; a reply with arg[4] set if it cannot. */
static void ap_sleep(const struct spsc_msg *m, unsigned int ap)
{
	struct percpu *self = this_cpu();
	struct ap_sleep *s = this_cpu_ptr(&sleeps);
	struct spsc_msg r = { .fn = on_reply, .arg = { m->arg[0], 0, 0, 0, 1 } };

	if (!s->ctx.poll) {
		s->ctx.name = "cpus-sleep";
		s->ctx.poll = sleep_poll;
		if (poll_ctx_add(&s->ctx)) {
			s->ctx.poll = NULL;
			xcpu_reply(ap, &r);
			return;
		}
	}
	s->seq = m->arg[0];
	s->start_ns = now_ns();
	s->ticks0 = self->timer_ticks;
	s->halts0 = self->idle.halts;
	s->due_ns = s->start_ns + m->arg[1] * 1000000ULL;
	poll_schedule_at(&s->ctx, s->due_ns);
}

/*
 * `cpus busy CPU MS`: the AP spins inside the request for MS ms, its loop
 * doing nothing else, then replies; the BSP's services run meanwhile.
 */
static void ap_busy(const struct spsc_msg *m, unsigned int ap)
{
	uint64_t t0 = now_ns(), end = t0 + m->arg[1] * 1000000ULL;
	struct spsc_msg r = { .fn = on_reply, .arg = { m->arg[0] } };

	while (now_ns() < end)
		cpu_relax();
	r.arg[1] = now_ns() - t0;
	xcpu_reply(ap, &r);
}

/* "CPU MS" of `cpus sleep|busy`: an online AP and 1..max_ms, else an error line. */
static int parse_cpu_ms(int argc, char **argv, uint64_t max_ms, uint64_t *cpu, uint64_t *ms)
{
	if (argc != 3)
		return shell_error("cpus %s: usage: cpus %s CPU MS", argv[0], argv[0]);
	if (config_parse_uint(argv[1], cpu) || !*cpu || *cpu >= smp_cpus())
		return shell_error("cpus %s: CPU must be an AP, 1..%u, not '%s'", argv[0],
				   smp_cpus() - 1, argv[1]);
	if (config_parse_uint(argv[2], ms) || !*ms || *ms > max_ms)
		return shell_error("cpus %s: MS must be 1..%llu, not '%s'", argv[0],
				   (unsigned long long)max_ms, argv[2]);
	if (smp_state((unsigned int)*cpu) != SMP_ONLINE)
		return shell_error("cpus %s: cpu %llu is %s", argv[0], (unsigned long long)*cpu,
				   smp_state_name(smp_state((unsigned int)*cpu)));
	return 0;
}

int cpus_sleep(int argc, char **argv)
{
	uint64_t cpu, ms, ns;
	int ret;

	if (parse_cpu_ms(argc, argv, SLEEP_MAX_MS, &cpu, &ms))
		return -1;
	ret = ask_arg((unsigned int)cpu, ap_sleep, ms, ms, &ns);
	if (ret)
		return shell_error("cpus sleep: cpu %llu: %s", (unsigned long long)cpu,
				   ask_error(ret));
	if (want.arg[4])
		return shell_error("cpus sleep: cpu %llu has no poll context slot left",
				   (unsigned long long)cpu);
	printf("cpu %llu apic %u: slept %llu us of %llu ms, timer_ticks +%llu halts +%llu\n",
	       (unsigned long long)cpu, smp_apic_id((unsigned int)cpu),
	       (unsigned long long)(want.arg[1] / 1000), (unsigned long long)ms,
	       (unsigned long long)want.arg[2], (unsigned long long)want.arg[3]);
	return 0;
}

int cpus_busy(int argc, char **argv)
{
	uint64_t cpu, ms, ns;
	int ret;

	if (parse_cpu_ms(argc, argv, BUSY_MAX_MS, &cpu, &ms))
		return -1;
	ret = ask_arg((unsigned int)cpu, ap_busy, ms, ms, &ns);
	if (ret)
		return shell_error("cpus busy: cpu %llu: %s", (unsigned long long)cpu,
				   ask_error(ret));
	printf("cpu %llu apic %u: busy %llu ms\n", (unsigned long long)cpu,
	       smp_apic_id((unsigned int)cpu), (unsigned long long)(want.arg[1] / 1000000));
	return 0;
}

/* On the AP: how many times vector arg[1] was taken there. */
static void ap_irq(const struct spsc_msg *m, unsigned int ap)
{
	struct spsc_msg r = { .fn = on_reply, .arg = { m->arg[0] } };

	r.arg[1] = this_cpu()->irqs[m->arg[1] & 0xff];
	xcpu_reply(ap, &r);
}

/*
 * `cpus irq V`: vector V's interrupts taken on each CPU (those through
 * irq_dispatch: a callback's queue vector, the timer), each CPU's own
 * count, an AP's fetched through its ring; shows which CPU an MSI-X
 * message was steered to.
 */
int cpus_irq(int argc, char **argv)
{
	uint64_t vector, ns;
	unsigned int failed = 0;

	if (argc != 2 || config_parse_uint(argv[1], &vector) || vector < 32 || vector > 255)
		return shell_error("cpus irq: V must be a vector, 32..255, not '%s'",
				   argc > 1 ? argv[1] : "");
	printf("cpu 0 apic %u: vector %llu irqs %llu\n", smp_apic_id(0), (unsigned long long)vector,
	       (unsigned long long)this_cpu()->irqs[vector]);
	for (unsigned int cpu = 1; cpu < smp_cpus(); cpu++) {
		int ret;

		if (!ap_usable(cpu))
			continue;
		ret = ask_arg(cpu, ap_irq, vector, 0, &ns);
		if (ret) {
			skip(cpu, ret);
			failed++;
			continue;
		}
		printf("cpu %u apic %u: vector %llu irqs %llu\n", cpu, smp_apic_id(cpu),
		       (unsigned long long)vector, (unsigned long long)want.arg[1]);
	}
	if (failed)
		return shell_error("cpus irq: %u APs did not answer", failed);
	return 0;
}

/* On the AP: a console write, which it may not make (refused, counted, reported). */
static void ap_print(const struct spsc_msg *m, unsigned int ap)
{
	struct spsc_msg r = { .fn = on_reply, .arg = { m->arg[0] } };

	printf("cpu %u printing\n", ap);
	xcpu_reply(ap, &r);
}

/*
 * `cpus print CPU`: AP CPU tries to print. The console is CPU 0's: the
 * write is dropped and CPU 0 reports the broken rule (a BUG line).
 */
int cpus_print(int argc, char **argv)
{
	uint64_t cpu, ns;
	int ret;

	if (argc != 2 || config_parse_uint(argv[1], &cpu) || !cpu || cpu >= smp_cpus())
		return shell_error("cpus print: CPU must be an AP, 1..%u", smp_cpus() - 1);
	if (!ap_usable((unsigned int)cpu))
		return -1;
	ret = ask((unsigned int)cpu, ap_print, &ns);
	if (ret)
		return shell_error("cpus print: cpu %llu: %s", (unsigned long long)cpu,
				   ask_error(ret));
	printf("cpu %llu apic %u: tried to print; see the bug line\n", (unsigned long long)cpu,
	       smp_apic_id((unsigned int)cpu));
	return 0;
}
