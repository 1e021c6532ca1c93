/* SPDX-License-Identifier: MIT */
/*
 * The kernel services a host test cannot link (they halt the CPU, send
 * IPIs, or own the IDT), for tests and fuzzers that run the real poll
 * loop (kernel/poll.c, built with -DUNIT_TEST): each records what it was
 * asked. A request to another CPU (xcpu_send, xcpu_sync) runs at once on
 * that CPU (this_cpu() says so meanwhile), as if it had taken it from its
 * ring; a reply to the BSP (xcpu_reply) waits until the test runs
 * xcpu_drain(), as the BSP's loop would. The CPUs online are those
 * kernel/poll.c's percpu_cpus[] names: the BSP's, and any a test starts
 * with stub_cpu_start(). No test framework: a broken rule aborts.
 */
#ifndef TESTS_UNIT_STUB_KERNEL_H
#define TESTS_UNIT_STUB_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/percpu.h"

struct poll_ctx;

/* idle_wait(): its calls, the last wake-up asked for, and what it runs (NULL: nothing). */
extern unsigned int stub_idle_waits;
extern uint64_t stub_idle_wake_by;
extern void (*stub_idle_hook)(uint64_t wake_by);
/* What idle_halts() says: false (idle=poll) unless a test sets it. */
extern bool stub_idle_halt;

/* now_ns() for a test that defines none: this value. */
extern uint64_t stub_now;

/* Requests run (xcpu_send, xcpu_sync) and replies sent (xcpu_reply) so far. */
extern unsigned int stub_xcpu_requests, stub_xcpu_replies;
/* xcpu_sync() finds the CPU not answering: nothing runs, false. */
extern bool stub_xcpu_silent;

/*
 * Run on @cpu from now on: this_cpu(), and the rings' owner check
 * (virtqueue.h's virtq_test_cpu, when the rings are linked).
 */
void stub_cpu_enter(struct percpu *cpu);

/*
 * CPU @index online, @cpu its state, with a zeroed copy of every
 * DEFINE_PER_CPU variable of its own (the host has no per-CPU section,
 * so the copy is one of the whole .bss, which holds them). stub_cpu_stop
 * takes it offline again.
 */
void stub_cpu_start(struct percpu *cpu, unsigned int index);
void stub_cpu_stop(unsigned int index);

/* Whether @ctx is scheduled: its bit in its owner's word (false when not added). */
bool stub_scheduled(const struct poll_ctx *ctx);
/* The running CPU's scheduled word emptied, as a pass that ran nothing would. */
void stub_unschedule_all(void);

#endif
