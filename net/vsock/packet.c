// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "net/vsock/packet.h"

static uint64_t live, live_bytes;

struct vsock_pkt *vsock_pkt_alloc(uint32_t cap)
{
	struct vsock_pkt *pkt = malloc(sizeof(*pkt) + cap);

	if (!pkt)
		return NULL;
	pkt->next = NULL;
	pkt->cap = cap;
	pkt->off = 0;
	memset(&pkt->hdr, 0, sizeof(pkt->hdr));
	live++;
	live_bytes += cap;
	return pkt;
}

void vsock_pkt_free(struct vsock_pkt *pkt)
{
	if (!pkt)
		return;
	live--;
	live_bytes -= pkt->cap;
	free(pkt);
}

uint64_t vsock_pkt_live(void)
{
	return live;
}

uint64_t vsock_pkt_live_bytes(void)
{
	return live_bytes;
}

const char *const vsock_hdr_verdict_names[VSOCK_HDR_VERDICTS] = {
	[VSOCK_HDR_OK] = "ok",
	[VSOCK_HDR_SHORT] = "rx_short",
	[VSOCK_HDR_LEN_BAD] = "rx_len_bad",
	[VSOCK_HDR_CID_BAD] = "rx_bad_cid",
	[VSOCK_HDR_TYPE_BAD] = "rx_bad_type",
	[VSOCK_HDR_OP_BAD] = "rx_bad_op",
};

enum vsock_hdr_verdict vsock_hdr_check(const struct virtio_vsock_hdr *h, uint32_t used,
				       uint64_t local_cid)
{
	if (used < VSOCK_HDR_LEN)
		return VSOCK_HDR_SHORT;
	if (h->len > used - VSOCK_HDR_LEN)
		return VSOCK_HDR_LEN_BAD;
	if (h->dst_cid != local_cid)
		return VSOCK_HDR_CID_BAD;
	if (h->type != VSOCK_TYPE_STREAM && h->type != VSOCK_TYPE_SEQPACKET)
		return VSOCK_HDR_TYPE_BAD;
	if (h->op < VSOCK_OP_REQUEST || h->op > VSOCK_OP_CREDIT_REQUEST)
		return VSOCK_HDR_OP_BAD;
	return VSOCK_HDR_OK;
}
