// SPDX-License-Identifier: MIT
/*
 * Cross-CPU messages (xcpu.h). The target design is one poll loop per
 * CPU, each queue and connection owned by one CPU, no lock on the data
 * path; what crosses goes through a ring with one producer and one
 * consumer, and an IPI. Each AP runs the same poll loop as the BSP
 * (kernel/poll.h) over its own registry; draining its in ring is one of
 * its pollers, registered on the AP itself.
 *
 * The mail IPI's gate is an isr.S stub of its own: it counts the IPI in
 * the taking CPU's struct percpu, which IA32_GS_BASE points at (SDM 3A
 * 3.4.4.1), raises the request poller's bit there and EOIs through the
 * LAPIC register, never KVM's PV EOI flag, which belongs to the BSP's
 * vCPU (lapic.c). The push comes before the IPI, and idle_wait checks the
 * raised bits with interrupts off before `sti; hlt`, whose interrupt
 * shadow keeps an IPI sent after the check pending until HLT has begun
 * (SDM 2B, STI): no request sleeps unseen. The reply IPI to the BSP is a
 * raise vector (cpu.c): it raises the reply poller, whose pass runs the
 * replies, and EOIs the BSP's way.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kernel/cpu.h"
#include "kernel/idle.h"
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/smp.h"
#include "kernel/xcpu.h"

struct xcpu_cpu {
	uint64_t msgs;
	uint64_t dropped;
	uint32_t apic_id;
	unsigned int index;
	struct percpu *pcpu; /* its loop's state; %gs on the AP */
	struct spsc_ring in; /* the BSP pushes, this AP pops */
	struct spsc_ring out; /* this AP pushes, the BSP pops */
};

void isr_mail(void);

static struct xcpu_cpu *mail[SMP_MAX_CPUS];
static int mail_vector = -1; /* on the APs */
static int reply_vector = -1; /* on the BSP */
static uint32_t bsp_apic;
static uint32_t reply_bit;
static struct xcpu_bsp_stats bsp;

static void run_replies(unsigned int cpu, unsigned int *done, unsigned int budget)
{
	struct spsc_msg m;

	while (*done < budget && spsc_ring_pop(&mail[cpu]->out, &m)) {
		m.fn(&m, cpu);
		bsp.replies++;
		(*done)++;
	}
}

static unsigned int replies_poll(unsigned int budget)
{
	unsigned int done = 0;

	for (unsigned int i = 1; i < SMP_MAX_CPUS && done < budget; i++)
		if (mail[i])
			run_replies(i, &done, budget);
	if (done == budget)
		poll_raise(reply_bit); /* more may wait: the next pass */
	return done;
}

static const struct poller replies_poller = {
	.name = "xcpu",
	.poll = replies_poll,
	.on_raise = true, /* the reply IPI raises it */
};

void xcpu_drain(void)
{
	replies_poll(UINT32_MAX);
}

void xcpu_init(uint32_t bsp_apic_id)
{
	bsp_apic = bsp_apic_id;
	if (!poll_register(&replies_poller)) {
		reply_bit = poll_bit(&replies_poller);
		reply_vector = irq_alloc_raise(&bsp.ipis, reply_bit);
	}
	if (reply_vector >= 0)
		mail_vector = irq_alloc_entry(isr_mail);
	if (mail_vector < 0)
		printf("smp: no poller slot or vectors for cross-CPU messages; the APs will halt\n");
}

struct xcpu_cpu *xcpu_cpu_new(unsigned int index, uint32_t apic_id)
{
	struct xcpu_cpu *c;

	if (!index || index >= SMP_MAX_CPUS)
		return NULL;
	c = memalign(SPSC_CACHE_LINE, sizeof(*c));
	if (!c)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->pcpu = memalign(SPSC_CACHE_LINE, sizeof(*c->pcpu));
	if (!c->pcpu) {
		free(c);
		return NULL;
	}
	percpu_init(c->pcpu, index);
	c->apic_id = apic_id;
	c->index = index;
	spsc_ring_init(&c->in);
	spsc_ring_init(&c->out);
	mail[index] = c;
	return c;
}

/* On an AP: the requests in its ring, at most @budget a pass. */
static unsigned int requests_poll(unsigned int budget)
{
	struct xcpu_cpu *self = mail[this_cpu()->index];
	struct spsc_msg m;
	unsigned int done = 0;

	while (done < budget && spsc_ring_pop(&self->in, &m)) {
		m.fn(&m, self->index);
		self->msgs++;
		done++;
	}
	if (done == budget)
		poll_raise(self->pcpu->mail_raise); /* more may wait: the next pass */
	return done;
}

static const struct poller requests_poller = {
	.name = "xcpu-requests",
	.poll = requests_poll,
	.on_raise = true, /* the mail IPI raises it */
};

/*
 * The AP's loop is the BSP's without the console: a pass, then idle_wait
 * (idle=halt: `sti; hlt` after the check, its own LAPIC timer for what
 * it asked to be woken for).
 */
void xcpu_ap_run(struct xcpu_cpu *self)
{
	percpu_enter(self->pcpu);
	if (mail_vector < 0 || poll_register(&requests_poller))
		halt_forever(); /* nobody could wake it */
	self->pcpu->mail_raise = poll_bit(&requests_poller);
	/* a request pushed before the bit was set raised nothing */
	poll_raise(self->pcpu->mail_raise);
	irq_enable();
	for (;;) {
		poll_once();
		idle_wait();
	}
}

int xcpu_send(unsigned int cpu, const struct spsc_msg *m)
{
	if (cpu >= SMP_MAX_CPUS || !mail[cpu] || mail_vector < 0)
		return -ENODEV;
	if (!spsc_ring_push(&mail[cpu]->in, m))
		return -ENOSPC;
	bsp.sent++;
	return lapic_send_ipi(mail[cpu]->apic_id, (uint8_t)mail_vector) ? 0 : -EIO;
}

unsigned int xcpu_untaken(unsigned int cpu)
{
	return cpu < SMP_MAX_CPUS && mail[cpu] ? spsc_ring_used(&mail[cpu]->in) : 0;
}

void xcpu_rekick(unsigned int cpu)
{
	if (!xcpu_untaken(cpu) || mail_vector < 0)
		return;
	bsp.rekicks++;
	lapic_send_ipi(mail[cpu]->apic_id, (uint8_t)mail_vector);
}

bool xcpu_reply(unsigned int cpu, const struct spsc_msg *m)
{
	struct xcpu_cpu *self = mail[cpu];

	if (!spsc_ring_push(&self->out, m)) {
		self->dropped++;
		return false;
	}
	lapic_send_ipi(bsp_apic, (uint8_t)reply_vector);
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
}
