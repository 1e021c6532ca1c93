/* SPDX-License-Identifier: MIT */
/*
 * A vsock transport for unit tests and fuzzers of the socket layer and
 * what runs on it: every packet the guest sends is kept in sent[] (in
 * order) until the test calls clear_sent(); transport_full makes
 * tx_full() say so. fake_hooks stand for the poll loop (vsock_set_hooks).
 * No test framework: a broken rule aborts, which cmocka reports as a
 * failed test and a fuzzer as a crash.
 */
#ifndef TESTS_UNIT_FAKE_TRANSPORT_H
#define TESTS_UNIT_FAKE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "net/vsock/vsock.h"

#define GUEST_CID 3
#define MAX_SENT 4096

extern struct vsock_pkt *sent[MAX_SENT];
extern unsigned int n_sent;
/*
 * Packets sent while sent[] was full: freed at once, counted here. A
 * fuzzer's input may send more than a test ever keeps.
 */
extern unsigned int sent_dropped;
extern bool transport_full;
/* What fake_send answers: true says "sent directly, nothing queued". */
extern bool transport_direct;
/* Free every packet as it is sent, keeping none: a peer that reads nothing. */
extern bool transport_discard;
/* How often the socket layer called tx_full() and local_cid(). */
extern unsigned int tx_full_asked, local_cid_asked;
extern const struct vsock_transport fake;

/* Free every kept packet and start counting again. */
void clear_sent(void);

/*
 * The loop as the socket layer sees it: bit() gives each poller it is
 * asked about the next free bit (as registering it would), raise() ORs
 * the bits into fake_raised for the test to look at.
 */
extern const struct vsock_hooks fake_hooks;
extern uint32_t fake_raised;
uint32_t fake_bit(const struct poller *p);

#endif
