/* SPDX-License-Identifier: MIT */
/*
 * A vsock transport for unit tests and fuzzers of the socket layer and
 * what runs on it: every packet the guest sends is kept in sent[] (in
 * order) until the test calls clear_sent(); transport_full makes
 * tx_full() say so. fake_pass is the socket layer's poll context
 * (vsock_set_pass) in the real loop (kernel/poll.c).
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
 * The socket layer's pass context: fake_loop_init() adds it to the
 * running CPU's loop (once) and hands it to the socket layer. Its poll
 * does nothing: a test runs vsock_poll_pass() itself, and looks at
 * whether the socket layer scheduled it (stub_scheduled).
 */
extern struct poll_ctx fake_pass;
void fake_loop_init(void);

#endif
