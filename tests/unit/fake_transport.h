/* SPDX-License-Identifier: MIT */
/*
 * A vsock transport for unit tests of the socket layer and what runs on
 * it: every packet the guest sends is kept in sent[] (in order) until the
 * test calls clear_sent(); transport_full makes tx_full() say so.
 * fake_hooks stand for the poll loop (vsock_set_hooks).
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
extern bool transport_full;
/* What fake_send answers: true says "sent directly, nothing queued". */
extern bool transport_direct;
/* How often the socket layer called tx_full() and local_cid(). */
extern unsigned int tx_full_asked, local_cid_asked;
extern const struct vsock_transport fake;

/*
 * The loop as the socket layer sees it: bit() gives each poller it is
 * asked about the next free bit (as registering it would), raise() ORs
 * the bits into fake_raised for the test to look at.
 */
extern const struct vsock_hooks fake_hooks;
extern uint32_t fake_raised;
uint32_t fake_bit(const struct poller *p);

/* Free every kept packet and start counting again. */
void clear_sent(void);

#endif
