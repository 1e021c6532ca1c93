// SPDX-License-Identifier: MIT
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fake_transport.h"
#include "kernel/poll.h"
#include "net/vsock/wire.h"

struct vsock_pkt *sent[MAX_SENT];
unsigned int n_sent, sent_dropped;
bool transport_full;
bool transport_direct;
bool transport_discard;
unsigned int tx_full_asked, local_cid_asked;
uint32_t fake_raised;
static const struct poller *fake_pollers[POLL_MAX];

static uint64_t fake_cid(void)
{
	local_cid_asked++;
	return GUEST_CID;
}

/*
 * The socket layer never builds a packet the device could not take: a
 * payload past the limit, or past its buffer (one kept elsewhere,
 * vsock_send_static, has no buffer of its own).
 */
static bool fake_send(struct vsock_pkt *pkt)
{
	if (pkt->hdr.len > VSOCK_MAX_PKT_PAYLOAD || (!pkt->ext && pkt->hdr.len > pkt->cap))
		abort();
	if (transport_discard || n_sent == MAX_SENT) {
		sent_dropped += !transport_discard;
		vsock_pkt_free(pkt);
		return transport_direct;
	}
	sent[n_sent++] = pkt;
	return transport_direct;
}

static bool fake_full(void)
{
	tx_full_asked++;
	return transport_full;
}

const struct vsock_transport fake = {
	.name = "fake",
	.local_cid = fake_cid,
	.send_pkt = fake_send,
	.tx_full = fake_full,
};

void clear_sent(void)
{
	for (unsigned int i = 0; i < n_sent; i++)
		vsock_pkt_free(sent[i]);
	n_sent = 0;
	sent_dropped = 0;
}

uint32_t fake_bit(const struct poller *p)
{
	unsigned int i = 0;

	while (i < POLL_MAX && fake_pollers[i] && fake_pollers[i] != p)
		i++;
	if (i == POLL_MAX)
		abort(); /* more pollers than the loop has bits */
	fake_pollers[i] = p;
	return 1u << i;
}

static void fake_raise(uint32_t bits)
{
	fake_raised |= bits;
}

static const struct poller fake_pass = { .name = "fake-pass" };

const struct vsock_hooks fake_hooks = {
	.raise = fake_raise,
	.bit = fake_bit,
	.pass = &fake_pass,
};
