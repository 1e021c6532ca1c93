// SPDX-License-Identifier: MIT
/*
 * The socket layer's poll context: its timers (connect and close
 * timeouts, the device checks of a wait) and its waits for TX room. Kept
 * apart from socket.c so the socket code stays free of the kernel's
 * loop; the transport driver and services have their own contexts, and
 * owned sockets schedule their owner's directly (vsock_set_owner).
 */
#include <stdint.h>

#include "kernel/poll.h"
#include "kernel/time.h"
#include "net/vsock/vsock.h"

/*
 * Scheduled by the socket layer when the pass may have something new to
 * say (vsock_set_pass), and at its next timer. While a send waits for TX
 * room, nothing announces the room (the driver reclaims by polling):
 * the context stays scheduled and looks every pass.
 */
static unsigned int vsock_pass_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct vsock_pass p;

	if (!vsock_poll_pass(&p)) {
		poll_schedule_at(ctx, UINT64_MAX); /* no timer left */
		return 0;
	}
	poll_schedule_at(ctx, p.next_timer);
	if (p.tx_wait)
		poll_schedule(ctx);
	return p.changed;
}

static struct poll_ctx vsock_ctx = {
	.name = "vsock",
	.poll = vsock_pass_poll,
};

void vsock_poller_init(void)
{
	poll_ctx_add(&vsock_ctx);
	vsock_set_pass(&vsock_ctx);
}
