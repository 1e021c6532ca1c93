// SPDX-License-Identifier: MIT
/*
 * Cross-CPU messages (xcpu.h): one poll loop per CPU, each queue and
 * connection owned by one CPU, no lock on the data path; what crosses
 * goes through a ring with one producer and one consumer. Each AP's in
 * ring is drained by its requests context, CPU 0's out rings by its
 * replies context, and a push is followed by poll_schedule() of the
 * context that drains it: the bit in the other CPU's word, then the
 * wake-up IPI (kernel/poll.h). The push is released before the bit is
 * set and the ring popped after the bit is taken, so the consumer sees
 * the message; idle_wait looks at the word with interrupts off before
 * it halts, so none sleeps unseen.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kernel/cpu.h"
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"

struct xcpu_cpu {
	uint64_t msgs;
	uint64_t dropped;
	unsigned int index;
	struct percpu *pcpu; /* its loop's state; %gs on the AP */
	struct poll_ctx requests; /* owned by the AP: drains in */
	uint64_t syncs; /* CPU 0's: the xcpu_sync marks sent, numbered from 1 */
	volatile uint64_t synced; /* the AP's: the number of the last mark it ran */
	struct spsc_ring in; /* the BSP pushes, this AP pops */
	struct spsc_ring out; /* this AP pushes, the BSP pops */
};

void isr_wake(void);

static struct xcpu_cpu *mail[SMP_MAX_CPUS];
static struct xcpu_bsp_stats bsp;

static unsigned int replies_poll(struct poll_ctx *ctx, unsigned int budget)
{
	unsigned int done = 0;
	struct spsc_msg m;

	for (unsigned int i = 1; i < SMP_MAX_CPUS && done < budget; i++) {
		while (mail[i] && done < budget && spsc_ring_pop(&mail[i]->out, &m)) {
			m.fn(&m, i);
			bsp.replies++;
			done++;
		}
	}
	return done;
}

/* CPU 0's: scheduled by an AP after each push into its out ring. */
static struct poll_ctx replies = {
	.name = "xcpu-replies",
	.poll = replies_poll,
};

void xcpu_drain(void)
{
	replies_poll(&replies, UINT32_MAX);
}

void xcpu_init(void)
{
	if (poll_ctx_add(&replies))
		printf("smp: no poll context slot for replies; the APs will halt\n");
	else
		poll_ipi_vector = irq_alloc_entry(isr_wake);
	if (poll_ipi_vector < 0)
		printf("smp: no vector for the wake-up IPI; the APs will halt\n");
}

struct xcpu_cpu *xcpu_cpu_new(unsigned int index, uint32_t apic_id)
{
	struct xcpu_cpu *c;
	void *area;

	if (!index || index >= SMP_MAX_CPUS)
		return NULL;
	c = memalign(SPSC_CACHE_LINE, sizeof(*c));
	area = memalign(SPSC_CACHE_LINE, percpu_area_size() ? percpu_area_size() : 1);
	if (!c || !area)
		goto fail;
	memset(c, 0, sizeof(*c));
	memset(area, 0, percpu_area_size());
	c->pcpu = memalign(SPSC_CACHE_LINE, sizeof(*c->pcpu));
	if (!c->pcpu)
		goto fail;
	percpu_init(c->pcpu, index, apic_id, area);
	c->index = index;
	c->requests.name = "xcpu-requests";
	spsc_ring_init(&c->in);
	spsc_ring_init(&c->out);
	mail[index] = c;
	return c;
fail:
	free(area);
	free(c);
	return NULL;
}

/* On an AP: the requests in its ring, at most @budget a pass. */
static unsigned int requests_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct xcpu_cpu *self = mail[percpu_read(index)];
	struct spsc_msg m;
	unsigned int done = 0;

	while (done < budget && spsc_ring_pop(&self->in, &m)) {
		m.fn(&m, self->index);
		self->msgs++;
		done++;
	}
	return done;
}

/*
 * The AP's loop is the BSP's without the console: its requests context
 * first, added here (it looks once at a ring CPU 0 may have pushed into
 * already), then poll_loop().
 */
void xcpu_ap_run(struct xcpu_cpu *self)
{
	self->requests.poll = requests_poll;
	if (poll_ipi_vector < 0 || poll_ctx_add(&self->requests))
		halt_forever(); /* nobody could wake it */
	irq_enable();
	poll_loop();
}

int xcpu_send(unsigned int cpu, const struct spsc_msg *m)
{
	if (cpu >= SMP_MAX_CPUS || !mail[cpu] || poll_ipi_vector < 0)
		return -ENODEV;
	if (!spsc_ring_push(&mail[cpu]->in, m))
		return -ENOSPC;
	bsp.sent++;
	poll_schedule(&mail[cpu]->requests);
	return 0;
}

unsigned int xcpu_untaken(unsigned int cpu)
{
	return cpu < SMP_MAX_CPUS && mail[cpu] ? spsc_ring_used(&mail[cpu]->in) : 0;
}

bool xcpu_reply(unsigned int cpu, const struct spsc_msg *m)
{
	struct xcpu_cpu *self = mail[cpu];

	if (!spsc_ring_push(&self->out, m)) {
		self->dropped++;
		return false;
	}
	poll_schedule(&replies);
	return true;
}

/* On the AP: it passed through its loop up to this mark; CPU 0 waits for its number. */
static void ap_synced(const struct spsc_msg *m, unsigned int ap)
{
	__atomic_store_n(&mail[ap]->synced, m->arg[0], __ATOMIC_RELEASE);
}

/*
 * The mark is numbered, so a mark of an earlier sync that timed out (and
 * runs late, ahead of this one in the ring) does not end this wait: the
 * ring runs in order, so the AP reaching this mark ran @fn before it.
 */
bool xcpu_sync(unsigned int cpu, void (*fn)(const struct spsc_msg *, unsigned int), uint64_t arg,
	       uint64_t timeout_ns)
{
	struct spsc_msg m = { .fn = fn, .arg = { arg } };
	struct spsc_msg mark = { .fn = ap_synced };
	uint64_t end = now_ns() + timeout_ns;
	struct xcpu_cpu *c;

	if (cpu >= SMP_MAX_CPUS || !mail[cpu])
		return false;
	c = mail[cpu];
	if (fn && xcpu_send(cpu, &m))
		return false;
	mark.arg[0] = ++c->syncs;
	if (xcpu_send(cpu, &mark))
		return false; /* @fn may still run: the caller keeps what it handed over */
	while (__atomic_load_n(&c->synced, __ATOMIC_ACQUIRE) < mark.arg[0]) {
		if (now_ns() > end)
			return false;
		cpu_relax();
	}
	return true;
}

void xcpu_own_stats(unsigned int cpu, struct xcpu_stats *s)
{
	const struct xcpu_cpu *self = mail[cpu];

	s->ipis = self->pcpu->ipis;
	s->msgs = self->msgs;
	s->halts = self->pcpu->idle.halts;
	s->dropped = self->dropped;
	s->timer_ticks = self->pcpu->timer_ticks;
}

void xcpu_bsp_stats(struct xcpu_bsp_stats *s)
{
	*s = bsp;
	s->ipis = percpu_boot.ipis;
}
