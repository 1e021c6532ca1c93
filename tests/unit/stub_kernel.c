// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cpu.h"
#include "kernel/idle.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"
#include "stub_kernel.h"

unsigned int stub_idle_waits;
uint64_t stub_idle_wake_by;
void (*stub_idle_hook)(uint64_t wake_by);
bool stub_idle_halt;
uint64_t stub_now;
unsigned int stub_xcpu_requests, stub_xcpu_replies;
bool stub_xcpu_silent;

/* drivers/virtio/virtqueue.c's, in the tests that link the rings */
extern const struct percpu *virtq_test_cpu __attribute__((weak));

void idle_wait(uint64_t wake_by)
{
	stub_idle_waits++;
	stub_idle_wake_by = wake_by;
	if (stub_idle_hook)
		stub_idle_hook(wake_by);
}

bool idle_halts(void)
{
	return stub_idle_halt;
}

/* A test with a clock of its own defines now_ns(); that one wins. */
__attribute__((weak)) uint64_t now_ns(void)
{
	return stub_now;
}

void stub_cpu_enter(struct percpu *cpu)
{
	percpu_unit_cpu = cpu;
	if (&virtq_test_cpu)
		virtq_test_cpu = cpu;
}

extern char __bss_start[], _end[]; /* the host linker's */

/* A copy of the page-aligned span of .bss: every variable keeps its alignment. */
#define AREA_ALIGN 4096

void stub_cpu_start(struct percpu *cpu, unsigned int index)
{
	static char *areas[PERCPU_MAX_CPUS];
	uintptr_t base = (uintptr_t)__bss_start & ~(uintptr_t)(AREA_ALIGN - 1);
	size_t size = ((uintptr_t)_end - base + AREA_ALIGN - 1) & ~(size_t)(AREA_ALIGN - 1);

	if (!index || index >= PERCPU_MAX_CPUS)
		abort(); /* the BSP is kernel/poll.c's percpu_boot */
	if (!areas[index])
		areas[index] = aligned_alloc(AREA_ALIGN, size);
	if (!areas[index])
		abort();
	memset(areas[index], 0, size); /* as the BSP allocates them for a CPU starting */
	percpu_init(cpu, index, index, NULL);
	cpu->area_offset = (uintptr_t)areas[index] - base;
}

void stub_cpu_stop(unsigned int index)
{
	if (index && index < PERCPU_MAX_CPUS)
		percpu_cpus[index] = NULL;
}

/* @fn(@m) on CPU @cpu, then back on the caller's. */
static void run_on(unsigned int cpu, const struct spsc_msg *m, unsigned int arg)
{
	struct percpu *was = this_cpu();

	stub_cpu_enter(percpu_of(cpu));
	m->fn(m, arg);
	stub_cpu_enter(was);
}

int xcpu_send(unsigned int cpu, const struct spsc_msg *m)
{
	if (!cpu || !percpu_of(cpu))
		return -ENODEV;
	stub_xcpu_requests++;
	run_on(cpu, m, cpu);
	return 0;
}

bool xcpu_sync(unsigned int cpu, void (*fn)(const struct spsc_msg *, unsigned int), uint64_t arg,
	       uint64_t timeout_ns)
{
	struct spsc_msg m = { .fn = fn, .arg = { arg } };

	if (!cpu || !percpu_of(cpu) || stub_xcpu_silent)
		return false;
	stub_xcpu_requests++;
	if (fn)
		run_on(cpu, &m, cpu);
	return true;
}

/* The replies waiting for the BSP, as its ring would hold them. */
#define REPLIES_MAX 16
static struct spsc_msg replies[REPLIES_MAX];
static unsigned int replies_from[REPLIES_MAX], n_replies;

bool xcpu_reply(unsigned int cpu, const struct spsc_msg *m)
{
	if (n_replies == REPLIES_MAX)
		return false; /* the ring is full: dropped */
	replies_from[n_replies] = cpu;
	replies[n_replies++] = *m;
	stub_xcpu_replies++;
	return true;
}

/* On the BSP: what its replies context runs, in order. */
void xcpu_drain(void)
{
	struct percpu *was = this_cpu();

	stub_cpu_enter(&percpu_boot);
	for (unsigned int i = 0; i < n_replies; i++)
		replies[i].fn(&replies[i], replies_from[i]);
	n_replies = 0;
	stub_cpu_enter(was);
}

unsigned int smp_next_online(unsigned int cpu)
{
	for (unsigned int i = 1; i <= PERCPU_MAX_CPUS; i++)
		if (percpu_of((cpu + i) % PERCPU_MAX_CPUS))
			return (cpu + i) % PERCPU_MAX_CPUS;
	return 0;
}

/* kernel/cpu.c's: the interrupts every CPU took on @vector. */
uint64_t irq_count(int vector)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < PERCPU_MAX_CPUS && (unsigned int)vector < 256; i++)
		if (percpu_of(i))
			n += percpu_of(i)->irqs[vector];
	return n;
}

bool stub_scheduled(const struct poll_ctx *ctx)
{
	const struct percpu *cpu = ctx->cpu;

	return cpu && (cpu->scheduled & ctx->bit);
}

void stub_unschedule_all(void)
{
	this_cpu()->scheduled = 0;
}
