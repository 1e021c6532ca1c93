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

static unsigned int fake_pass_poll(struct poll_ctx *ctx, unsigned int budget)
{
	return 0;
}

struct poll_ctx fake_pass = { .name = "fake-pass", .poll = fake_pass_poll };

void fake_loop_init(void)
{
	if (!fake_pass.cpu && poll_ctx_add(&fake_pass))
		abort(); /* the loop's table is full */
	vsock_set_pass(&fake_pass);
}
