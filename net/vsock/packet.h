/* SPDX-License-Identifier: MIT */
/*
 * virtio-vsock packets (virtio 1.2, 5.10.6): the 44-byte header and the
 * buffer that carries one packet between the driver and the socket layer.
 *
 * A packet is one allocation: bookkeeping, then the header, then the
 * payload, so an RX buffer is posted to the device as one descriptor
 * (header and payload together, as Linux does) and a TX packet goes out as
 * two (header, payload) without copying either.
 */
#ifndef NET_VSOCK_PACKET_H
#define NET_VSOCK_PACKET_H

#include <stdint.h>

#define VSOCK_HDR_LEN 44
#define VSOCK_MAX_PKT_PAYLOAD 65536 /* VIRTIO_VSOCK_MAX_PKT_BUF_SIZE, seed 004 */
#define VSOCK_CID_HOST 2
#define VSOCK_CID_ANY 0xffffffffULL

/* 5.10.6 Device Operation: type */
enum vsock_type {
	VSOCK_TYPE_STREAM = 1,
	VSOCK_TYPE_SEQPACKET = 2,
};

/* 5.10.6 Device Operation: op */
enum vsock_op {
	VSOCK_OP_INVALID = 0,
	VSOCK_OP_REQUEST = 1,
	VSOCK_OP_RESPONSE = 2,
	VSOCK_OP_RST = 3,
	VSOCK_OP_SHUTDOWN = 4,
	VSOCK_OP_RW = 5,
	VSOCK_OP_CREDIT_UPDATE = 6,
	VSOCK_OP_CREDIT_REQUEST = 7,
};

/* flags: SHUTDOWN (5.10.6.5) and SEQPACKET RW (5.10.6.6) */
#define VSOCK_SHUTDOWN_RCV 1u
#define VSOCK_SHUTDOWN_SEND 2u
#define VSOCK_SEQ_EOM 1u
#define VSOCK_SEQ_EOR 2u

struct virtio_vsock_hdr {
	uint64_t src_cid;
	uint64_t dst_cid;
	uint32_t src_port;
	uint32_t dst_port;
	uint32_t len;
	uint16_t type;
	uint16_t op;
	uint32_t flags;
	uint32_t buf_alloc;
	uint32_t fwd_cnt;
} __attribute__((packed));

_Static_assert(sizeof(struct virtio_vsock_hdr) == VSOCK_HDR_LEN, "virtio_vsock_hdr is 44 bytes");

struct vsock_pkt {
	struct vsock_pkt *next; /* socket RX queue or driver TX queue */
	uint32_t cap;		/* payload bytes the buffer can hold */
	uint32_t off;		/* payload bytes already read (RX) */
	struct virtio_vsock_hdr hdr;
	uint8_t data[];
};

/*
 * Header validation (seed 002, Linux's current rules): what a device wrote
 * into an RX buffer of @posted bytes, @used of them by its word.
 */
enum vsock_hdr_verdict {
	VSOCK_HDR_OK,
	VSOCK_HDR_SHORT,     /* used < 44 */
	VSOCK_HDR_OVERRUN,   /* used > posted */
	VSOCK_HDR_LEN_BAD,   /* hdr.len > used - 44 */
	VSOCK_HDR_CID_BAD,   /* dst_cid is not ours */
	VSOCK_HDR_TYPE_BAD,  /* neither stream nor seqpacket */
	VSOCK_HDR_OP_BAD,    /* op outside 1..7 */
	VSOCK_HDR_VERDICTS,
};

enum vsock_hdr_verdict vsock_hdr_check(const struct virtio_vsock_hdr *h, uint32_t used,
				       uint32_t posted, uint64_t local_cid);
extern const char *const vsock_hdr_verdict_names[VSOCK_HDR_VERDICTS];

/* A packet with room for @cap payload bytes; the header is zeroed. */
struct vsock_pkt *vsock_pkt_alloc(uint32_t cap);
void vsock_pkt_free(struct vsock_pkt *pkt);

/* Packet buffers alive now (TX in flight, RX posted or queued on sockets). */
uint64_t vsock_pkt_live(void);
uint64_t vsock_pkt_live_bytes(void);

#endif
