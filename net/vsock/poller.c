// SPDX-License-Identifier: MIT
/*
 * The socket layer's share of the poll loop: its timers (connect and close
 * timeouts). Kept apart from socket.c so the socket code stays free of
 * the kernel's loop; the transport driver and services register their own.
 */
#include "kernel/poll.h"
#include "net/vsock/vsock.h"

static unsigned int vsock_timers_poll(unsigned int budget)
{
	vsock_poll();
	return 0; /* timers fire on time alone: nothing for idle_wait to wait for */
}

static const struct poller vsock_poller = {
	.name = "vsock",
	.poll = vsock_timers_poll,
};

void vsock_poller_init(void)
{
	poll_register(&vsock_poller);
}
