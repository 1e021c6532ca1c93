// SPDX-License-Identifier: MIT
/*
 * The socket layer's share of the poll loop: its timers (connect and close
 * timeouts). Kept apart from socket.c so the socket code stays free of
 * the kernel's loop; the transport driver and services register their own.
 */
#include <stdint.h>

#include "kernel/poll.h"
#include "net/vsock/vsock.h"

static unsigned int vsock_timers_poll(unsigned int budget)
{
	uint64_t next = vsock_poll();

	/* timers fire on time alone: the loop must be awake when one is due */
	if (next != UINT64_MAX)
		poll_wake_at(next);
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
