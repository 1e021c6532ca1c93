/* SPDX-License-Identifier: MIT */
/*
 * Fault injection (--inject): a deliberately buggy or hostile device, to
 * test that a guest counts and survives what a device may write to it.
 * Every --inject-every N packets the back end puts in the guest's RX queue
 * (or completions it writes on TX), one fault of the enabled modes is
 * injected, chosen by a generator seeded with --inject-seed so a run
 * repeats exactly. The control socket's "inject stop" (or SIGUSR1) stops
 * injecting.
 */
#ifndef VV_INJECT_H
#define VV_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dev.h"

/*
 * Not here: completing a chain under the id of ANOTHER outstanding chain.
 * No driver can tell that from a real completion (2.7.8, 2.8.6 give it
 * nothing to check an id in flight against): on TX the guest frees a
 * buffer we have yet to read, and on a packed ring with chains of
 * different lengths it waits on a slot we never write. Only a timeout
 * could notice; the modes below are what a guest can detect.
 */
#define INJECT_LIST(X)                                                         \
	X(short_len, "short-len") /* used length cuts the payload short */     \
	X(len_overflow, "len-overflow") /* header len beyond 64 KiB */         \
	X(len_beyond, "len-beyond") /* used length beyond the buffer */        \
	X(rw_unknown, "rw-unknown") /* RW from a port with no connection */    \
	X(bad_op, "bad-op") /* a packet with an unknown op */                  \
	X(bad_type, "bad-type") /* a packet with an unknown socket type */     \
	X(zero_rw, "zero-rw") /* an RW with no payload */                      \
	X(rst_storm, "rst-storm") /* 32 RSTs for ports nobody uses */          \
	X(dup_response, "dup-response") /* a second RESPONSE */                \
	X(credit_lie, "credit-lie") /* buf_alloc below the truth */            \
	X(split, "split") /* a one-byte RW packet (data split) */              \
	X(wrong_dst, "wrong-dst") /* dst_cid that is not the guest */          \
	X(bogus_rx_id, "bogus-rx-id") /* RX used entry with an id never made \
					 available */ \
	X(bogus_tx_id, "bogus-tx-id") /* the same on TX completions */         \
	X(stale_rx_id, "stale-rx-id") /* RX used id in range, of no buffer  \
					 outstanding: see stale_id() */  \
	X(stale_tx_id, "stale-tx-id") /* the same on TX completions */

#define INJECT_ENUM(name, str) INJ_##name,
enum inject_mode { INJECT_LIST(INJECT_ENUM) INJ_NMODES };
#undef INJECT_ENUM

/* Parse "MODE[,MODE]" ("all": every mode); false on an unknown name. */
bool inject_parse_modes(const char *arg);
void inject_list(FILE *f); /* --inject list: the mode names, one a line */
void inject_configure(unsigned every, uint64_t seed);
void inject_stop(void); /* SIGUSR1, or the control socket's "inject stop" */
void inject_dump(void); /* counters to stderr */
/* {"enabled":..,"stopped":..,"done":{MODE:N,...}} into @buf; its length (>= @cap: cut). */
size_t inject_json(char *buf, size_t cap);

/*
 * The hooks. inject_rx_packet: a real packet is about to be completed in
 * chain e (len bytes written); may rewrite its header, used length or id.
 * Returns the used length to write. inject_rx_extra: after a real packet
 * for (host_port, guest_port, type): may queue extra packets, sent by
 * guest_rx from inject_rx_pending(). inject_tx_id: the id to write for a
 * TX completion. inject_rx_room: caps the payload of the next RW.
 */
uint32_t inject_rx_packet(struct vsock_dev *d, struct vq_elem *e, uint32_t len);
void inject_rx_extra(uint32_t host_port, uint32_t guest_port, uint16_t type, uint16_t op,
		     uint32_t fwd_cnt);
bool inject_rx_waiting(void);
bool inject_rx_pending(struct vsock_dev *d, const struct vq_elem *e, uint32_t *len);
void inject_tx_id(struct vsock_dev *d, struct vq_elem *e);
/* Ring q was stopped (the guest resets or re-sets it up): forget its ids. */
void inject_ring_stopped(unsigned q);
uint64_t inject_rx_room(uint64_t room);

#endif
