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

static uint32_t watch_busy, watch_idle;
static uint32_t my_bit; /* the poller's own */

void vsock_poller_watch(uint32_t bits, bool busy)
{
	watch_busy = busy ? watch_busy | bits : watch_busy & ~bits;
	watch_idle = busy ? watch_idle & ~bits : watch_idle | bits;
	vsock_notify_every_event(watch_busy != 0);
}

/*
 * After the driver's poller in the table, so a packet it handed up raises
 * the application in the same pass. It runs when the socket layer
 * raised it (the hooks' pass poller), and every pass while a timer runs or a
 * send waits for TX room; one call into the socket layer then.
 * Applications that hand their sockets to their poller
 * (vsock_set_owner) are raised by the socket layer itself as a socket
 * becomes ready (the hooks' raise), and here while they still have ready
 * sockets; the others (vsock_poller_watch) on any change while busy, else
 * only when a connection waits to be accepted.
 */
static unsigned int vsock_timers_poll(unsigned int budget)
{
	static bool kept;
	struct vsock_pass p;
	uint32_t wake;

	if (!vsock_poll_pass(&p)) {
		if (kept) {
			kept = false;
			poll_keep(my_bit, false);
		}
		return 0;
	}
	/* timers and TX waits need every pass; otherwise only when notified */
	if (p.again != kept) {
		kept = p.again;
		poll_keep(my_bit, kept);
	}
	/* timers fire on time alone: the loop must be awake when one is due */
	if (p.next_timer != UINT64_MAX)
		poll_wake_at(p.next_timer);
	wake = p.ready;
	if (p.changed) {
		wake |= watch_busy;
		if (p.accept_queued)
			wake |= watch_idle;
	}
	if (wake)
		poll_raise(wake);
	return 0;
}

static const struct poller vsock_poller = {
	.name = "vsock",
	.poll = vsock_timers_poll,
	.on_raise = true,
};

/* The socket layer raises this poller and the sockets' owners itself. */
static const struct vsock_hooks loop_hooks = {
	.raise = poll_raise,
	.bit = poll_bit,
	.pass = &vsock_poller,
};

void vsock_poller_init(void)
{
	poll_register(&vsock_poller);
	my_bit = poll_bit(&vsock_poller);
	vsock_set_hooks(&loop_hooks);
	poll_raise(my_bit);
}
