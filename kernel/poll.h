/* SPDX-License-Identifier: MIT */
/*
 * The poll registry: drivers, protocols and services register a poller,
 * and the one loop runs them all. Like NAPI, poll(budget) does at most
 * @budget units of work and returns the work it did; pending() says, with
 * interrupts off, whether a poll would find work no interrupt announces
 * (idle=halt asks the hooks turned on before it sleeps; an interrupt that
 * only wakes the loop raises its poller instead).
 *
 * A poller that has nothing to do most passes (a service waiting for its
 * sockets, the recovery of a broken queue) sets on_raise: a pass then
 * skips it unless something raised it (poll_raise), it asked to run every
 * pass for a while (poll_keep), or its pending() said so before a halt.
 * A pass costs a bit test for it instead of a call.
 *
 * Each CPU runs its own loop over its own table (kernel/percpu.h): the
 * registry, the raised bits, the wake-up and the periods below are the
 * calling CPU's, and nothing here takes a lock. A poller is registered
 * on the CPU that will run it (for another CPU: inside an xcpu request
 * run there, kernel/xcpu.h); its bit means something on that CPU only.
 * What crosses CPUs: a request or reply through an SPSC ring plus an IPI
 * (xcpu.h), or poll_raise_on() plus an IPI to the owner. An interrupt
 * raises the pollers of the CPU that takes it (isr.S ORs into
 * %gs:PERCPU_RAISED). CPU 0 (the BSP) also runs the console and the shell.
 *
 * When to use which way of getting the loop's attention:
 *
 *   the work comes with                    use                      who
 *   an interrupt (a queue's MSI-X vector)  the vector's raise entry isr.S -> raised, its CPU's
 *   an event in another part of the guest  poll_raise(bit)          sockets for their owner
 *   a state to look at every pass a while  poll_keep(bit, on)       a wait with a timeout
 *   work no interrupt announces            pending() +              TX waiting for ring room
 *     (looked at with interrupts off)        poll_ask_pending()
 *   a time (a timeout, a retransmission)   poll_wake_at(deadline)   each pass while waiting
 *   a source that never interrupts         poll_every(owner, ns)    polled queues, console
 *   a shell command that blocks            poll_wait(step, ...)     vsock pingpong, ping
 *
 * Every pass runs the pollers without on_raise; on_raise pollers run when
 * raised, kept or pending, so an idle service costs a bit test a pass.
 */
#ifndef KERNEL_POLL_H
#define KERNEL_POLL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/percpu.h"

#define POLL_BUDGET 64
#define POLL_MAX PERCPU_POLL_MAX

struct poller {
	const char *name;
	unsigned int (*poll)(unsigned int budget); /* optional: NULL polls nothing */
	bool (*pending)(void); /* optional: NULL never keeps the CPU awake */
	bool on_raise; /* run only when raised, kept, or pending (see above) */
};

/* Add @p (static storage) to the loop; registering it again does nothing. */
int poll_register(const struct poller *p);

/* @p's bit for poll_raise() and poll_keep(); 0 when @p is not registered. */
uint32_t poll_bit(const struct poller *p);

/*
 * Run the pollers in @bits: later in this pass when they come after the
 * one running now, else in the next pass, and the loop does not sleep
 * before. Safe from an interrupt handler (one locked OR).
 */
void poll_raise(uint32_t bits);

/*
 * The same on another CPU's loop (one locked OR into its raised word);
 * the caller then sends it an IPI if it may be halted. The raised bits
 * themselves are struct percpu's: interrupt entries that only wake the
 * loop OR into the taking CPU's directly (kernel/isr.S).
 */
void poll_raise_on(struct percpu *cpu, uint32_t bits);

/*
 * Whether idle_wait asks the pending() hooks of the pollers in @bits (on
 * at registration). A driver turns its hook off while it cannot have
 * work no interrupt announces (no device, no request out), so the check
 * before every halt does not pay a call for it.
 */
void poll_ask_pending(uint32_t bits, bool on);

/*
 * While @on, the on_raise pollers in @bits run every pass like the others
 * (e.g. a state with a timeout checked against the clock); the loop may
 * still sleep. Off again: they run only when raised.
 */
void poll_keep(uint32_t bits, bool on);

/* One pass over every poller: the work done (0: nothing to do). */
unsigned int poll_once(void);

/*
 * Would a pass find work? Called with interrupts off by idle_wait(): a
 * poller raised, or a pending() that says yes (an on_raise poller's is
 * then raised, so the next pass runs it).
 */
bool poll_pending(void);

/*
 * What a blocking wait's step function says after each pass: the wait is
 * over, or not yet (and whether the step itself made progress, so the
 * loop must not sleep before calling it again).
 */
enum poll_step {
	POLL_AGAIN, /* nothing yet: the loop may idle until work is pending */
	POLL_PROGRESS, /* did work: call again at once */
	POLL_DONE,
};

/*
 * Block the caller (a shell command) until @step says POLL_DONE or
 * now_ns() reaches @deadline_ns, running every poller between calls so no
 * service freezes. The shell is not a poller: commands run inside it and
 * must not re-enter it. Returns true when @step finished the wait, false
 * on the deadline.
 */
bool poll_wait(enum poll_step (*step)(void *arg), void *arg, uint64_t deadline_ns);

/*
 * Timers: a poller whose work falls due at a time, not on an interrupt,
 * asks for the loop to be awake by @deadline_ns (ns since boot), on every
 * pass while it waits. idle_wait() sleeps no later than the earliest time
 * asked for since it last slept (tick=deadline; the periodic tick wakes
 * it every 1 ms anyway).
 */
void poll_wake_at(uint64_t deadline_ns);
/* The earliest wake-up this CPU asked for since the last call (UINT64_MAX: none). */
static inline uint64_t poll_take_wake(void)
{
	uint64_t t = percpu_read(poll.next_wake);

	percpu_write(poll.next_wake, UINT64_MAX);
	return t;
}

/* The same, when the caller sleeps on no timer (or not at all). */
static inline void poll_drop_wake(void)
{
	percpu_write(poll.next_wake, UINT64_MAX);
}

/*
 * Sources that raise no interrupt (a virtqueue without an MSI-X vector):
 * @owner asks for the loop to look at it at least every @period_ns while
 * idle; 0 withdraws the request. Set when the source starts or stops, not
 * per pass, so a pass pays nothing for it. With tick=deadline the loop
 * then sleeps no longer than the shortest period asked for, and as long
 * as it likes when nobody asks. Returns -ENOSPC when the table is full.
 */
int poll_every(const void *owner, uint64_t period_ns);
/* The shortest period asked for (UINT64_MAX: none). */
static inline uint64_t poll_period(void)
{
	return percpu_read(poll.shortest_period);
}

/* Wait until @deadline_ns (ns since boot), serving everything meanwhile. */
void poll_sleep_until(uint64_t deadline_ns);

#endif
