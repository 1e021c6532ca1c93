/* SPDX-License-Identifier: MIT */
/*
 * Applications on vsock sockets register on_raise pollers (kernel/poll.h)
 * and say here when to be raised: on every change the socket layer counts
 * (vsock_poll_pass) while @busy, i.e. while they hold connections, else only
 * when a connection waits to be accepted. A server with no connection
 * costs nothing per packet that is not its own.
 *
 * Or the application hands its sockets to its poller
 * (vsock_set_owner in vsock.h): it is then raised while one of them is
 * ready, and serves only those (vsock_take_ready).
 */
#ifndef NET_VSOCK_POLLER_H
#define NET_VSOCK_POLLER_H

#include <stdbool.h>
#include <stdint.h>

void vsock_poller_watch(uint32_t bits, bool busy);

#endif
