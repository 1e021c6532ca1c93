/* SPDX-License-Identifier: MIT */
/*
 * The buffer that carries one virtio-vsock packet between the driver and
 * the socket layer (the header itself is in wire.h).
 *
 * A packet is one allocation: bookkeeping, then the header, then the
 * payload, so an RX buffer is posted to the device as one descriptor
 * (header and payload together, as Linux does) and a TX packet goes out
 * the same way, without copying either. Buffers are recycled
 * through per-size free lists (packet.c), not malloc'd per packet.
 */
#ifndef NET_VSOCK_PACKET_H
#define NET_VSOCK_PACKET_H

#include <stdint.h>

#include "net/vsock/wire.h"

struct vsock_pkt {
	struct vsock_pkt *next; /* socket RX queue or driver TX queue */
	uint32_t cap; /* payload bytes the buffer can hold */
	uint32_t off; /* payload bytes already read (RX) */
	uint8_t cls; /* the pool's size class (packet.c) */
	const uint8_t *ext; /* TX payload kept elsewhere (vsock_send_static), or NULL */
	struct virtio_vsock_hdr hdr;
	uint8_t data[];
};

/* The payload follows the header: both fit one descriptor (virtio_vsock.c). */
_Static_assert(__builtin_offsetof(struct vsock_pkt, data) ==
		       __builtin_offsetof(struct vsock_pkt, hdr) + VSOCK_HDR_LEN,
	       "vsock_pkt data follows hdr");

/*
 * Header validation (Linux's rules since its vsock sk_buff rework, 6.3): what a device wrote
 * into an RX buffer, @used bytes by its word. The ring already bounds
 * @used by the buffer's size (virtq_used_len), so there is no overrun
 * verdict: it could never be reached.
 */
enum vsock_hdr_verdict {
	VSOCK_HDR_OK,
	VSOCK_HDR_SHORT, /* used < 44 */
	VSOCK_HDR_LEN_BAD, /* hdr.len > used - 44 */
	VSOCK_HDR_CID_BAD, /* dst_cid is not ours */
	VSOCK_HDR_TYPE_BAD, /* neither stream nor seqpacket */
	VSOCK_HDR_OP_BAD, /* op outside 1..7 */
	VSOCK_HDR_VERDICTS,
};

extern const char *const vsock_hdr_verdict_names[VSOCK_HDR_VERDICTS];

/* Inline: it runs on every received packet, in the driver's RX loop. */
static inline enum vsock_hdr_verdict vsock_hdr_check(const struct virtio_vsock_hdr *h,
						     uint32_t used, uint64_t local_cid)
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

/* Where the payload is: in the buffer, or where vsock_send_static left it. */
static inline const uint8_t *vsock_pkt_payload(const struct vsock_pkt *pkt)
{
	return pkt->ext ? pkt->ext : pkt->data;
}

/* A packet with room for @cap payload bytes; the header is zeroed. */
struct vsock_pkt *vsock_pkt_alloc(uint32_t cap);
/*
 * The same for an RX buffer, header not zeroed: the device writes it, and
 * a completion shorter than a header is dropped before anyone reads it
 * (vsock_hdr_check), so zeroing 44 bytes per buffer bought nothing.
 */
struct vsock_pkt *vsock_pkt_alloc_rx(uint32_t cap);
void vsock_pkt_free(struct vsock_pkt *pkt);

/* Packet buffers alive now (TX in flight, RX posted or queued on sockets). */
uint64_t vsock_pkt_live(void);
uint64_t vsock_pkt_live_bytes(void);

/* Free buffers kept on the pool's lists; vsock_pkt_trim() frees them all. */
uint64_t vsock_pkt_pooled(void);
uint64_t vsock_pkt_trim(void);

#endif
