// SPDX-License-Identifier: MIT
/*
 * The socket layer's share of the poll loop: its timers (connect and close
 * timeouts), and waking the applications when their sockets changed. Kept
 * apart from socket.c so the socket code stays free of the kernel's loop;
 * the transport driver and services register their own.
 */
#include <stdint.h>

#include "kernel/poll.h"
#include "net/vsock/poller.h"
#include "net/vsock/vsock.h"

static uint64_t seen_events;
static uint32_t watch_busy, watch_idle;

void vsock_poller_watch(uint32_t bits, bool busy)
{
	watch_busy = busy ? watch_busy | bits : watch_busy & ~bits;
	watch_idle = busy ? watch_idle & ~bits : watch_idle | bits;
}

/*
 * After the driver's poller in the table, so a packet it handed up raises
 * the application in the same pass. An application without connections
 * has nothing to do until a child waits in a listener.
 */
static unsigned int vsock_timers_poll(unsigned int budget)
{
	uint64_t next = vsock_poll();
	uint64_t ev = vsock_events();
	uint32_t wake;

	/* timers fire on time alone: the loop must be awake when one is due */
	if (next != UINT64_MAX)
		poll_wake_at(next);
	if (ev == seen_events)
		return 0;
	seen_events = ev;
	wake = watch_busy;
	if (watch_idle && vsock_accept_queued())
		wake |= watch_idle;
	poll_raise(wake);
	return 0;
}

static const struct poller vsock_poller = {
	.name = "vsock",
	.poll = vsock_timers_poll,
};

void vsock_poller_init(void)
{
	poll_register(&vsock_poller);
}
