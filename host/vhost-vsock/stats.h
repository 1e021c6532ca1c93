/* SPDX-License-Identifier: MIT */
/*
 * Counters of the back end. Every drop, protocol violation and error has a
 * named counter; programs read them through the control socket (control.c),
 * and they are dumped at exit and on SIGUSR1 (stats_dump()).
 */
#ifndef VV_STATS_H
#define VV_STATS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#define STATS_LIST(X)                                                            \
	X(vu_msgs) /* vhost-user messages handled */                             \
	X(vu_bad_msgs) /* malformed or unknown vhost-user messages */            \
	X(vu_connects) /* front ends that connected */                           \
	X(vu_disconnects) /* front ends that went away */                        \
	X(vu_rejected) /* extra front ends turned away */                        \
	X(kicks) /* guest notifications read from kick eventfds */               \
	X(calls) /* notifications sent to the guest */                           \
	X(ring_errors) /* bad descriptors, indices or addresses */               \
	X(rings_broken) /* rings stopped by a violation until the next reset */  \
	X(tx_pkts) /* packets taken from the guest's TX queue */                 \
	X(tx_bytes) /* payload bytes from the guest */                           \
	X(rx_pkts) /* packets put in the guest's RX queue */                     \
	X(rx_bytes) /* payload bytes to the guest */                             \
	X(bad_hdrs) /* vsock headers that failed validation */                   \
	X(credit_violations) /* guest sent beyond our advertised buffer */       \
	X(credit_updates_tx) /* CREDIT_UPDATE packets we sent */                 \
	X(credit_requests_tx) /* CREDIT_REQUEST packets we sent */               \
	X(rst_tx) /* RST packets we sent */                                      \
	X(rst_rx) /* RST packets from the guest */                               \
	X(rst_dropped) /* RSTs lost because the pending table was full */        \
	X(conns_host) /* connections opened by host clients */                   \
	X(conns_guest) /* connections opened by the guest */                     \
	X(conns_refused) /* guest connects with no host listener */              \
	X(conns_closed) /* connections freed */                                  \
	X(bad_connect_lines) /* host clients that did not send CONNECT <port> */ \
	X(rx_no_buffer) /* times RX work waited for guest buffers */             \
	X(conns_tcp) /* of conns_host, through --forward-tcp */                  \
	X(tcp_resets_tx) /* guest resets passed on as TCP RST */                 \
	X(tcp_resets_rx) /* TCP RSTs passed on to the guest as vsock RST */      \
	X(host_io_errors) /* unexpected errors on host sockets */

#define STATS_FIELD(name) uint64_t name;
struct stats {
	STATS_LIST(STATS_FIELD)
};
#undef STATS_FIELD

extern struct stats stats;

void stats_dump(FILE *f);

/*
 * Rate-limited log of a guest or front-end violation: the counter is always
 * bumped, the message printed at most a few times a second.
 */
void vv_violation(uint64_t *counter, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void vv_vviolation(uint64_t *counter, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* The ring library's violation hook: counts them in ring_errors. */
void stats_ring_violation(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

void vv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int vv_verbose;

#endif
