/* SPDX-License-Identifier: MIT */
/*
 * The virtio-vsock wire format (virtio 1.2, 5.10.6): the 44-byte packet
 * header and its field values. Shared by the guest's socket layer and the
 * host's vhost-user back end, so both speak from one definition. Fields are
 * little endian; both sides run on x86_64, so the struct is used as is.
 */
#ifndef NET_VSOCK_WIRE_H
#define NET_VSOCK_WIRE_H

#include <stdint.h>

#define VSOCK_HDR_LEN 44
#define VSOCK_MAX_PKT_PAYLOAD 65536 /* VIRTIO_VSOCK_MAX_PKT_BUF_SIZE since Linux 5.4 */
#define VSOCK_CID_HOST 2
#define VSOCK_CID_ANY 0xffffffffULL

/* 5.10.3 Feature bits (bit numbers, as Linux's VIRTIO_VSOCK_F_*) */
#define VIRTIO_VSOCK_F_STREAM 0
#define VIRTIO_VSOCK_F_SEQPACKET 1

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
#define VSOCK_SHUTDOWN_RCV 1u /* the sender will receive no more */
#define VSOCK_SHUTDOWN_SEND 2u /* the sender will send no more */
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

#endif
