/* SPDX-License-Identifier: MIT */
/*
 * The virtio-vsock packet header (virtio 1.2, 5.10.6) and its validation.
 * All fields are little endian; this program runs on x86_64 only, so the
 * struct is used as is.
 */
#ifndef VV_VSOCK_HDR_H
#define VV_VSOCK_HDR_H

#include <stdint.h>
#include <sys/uio.h>

struct vsock_hdr {
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

#define VSOCK_HDR_LEN 44
#define VSOCK_CID_HOST 2
#define VSOCK_MAX_PAYLOAD (64 * 1024)	/* what Linux accepts per packet */

#define VSOCK_TYPE_STREAM 1
#define VSOCK_TYPE_SEQPACKET 2

enum vsock_op {
	VSOCK_OP_INVALID,
	VSOCK_OP_REQUEST,
	VSOCK_OP_RESPONSE,
	VSOCK_OP_RST,
	VSOCK_OP_SHUTDOWN,
	VSOCK_OP_RW,
	VSOCK_OP_CREDIT_UPDATE,
	VSOCK_OP_CREDIT_REQUEST,
};

#define VSOCK_SHUTDOWN_RCV 1	/* the sender will receive no more */
#define VSOCK_SHUTDOWN_SEND 2	/* the sender will send no more */

enum vsock_hdr_err {
	VSOCK_HDR_OK,
	VSOCK_HDR_SHORT,	/* fewer than 44 readable bytes */
	VSOCK_HDR_LEN_BIG,	/* len over 64 KiB */
	VSOCK_HDR_LEN_BUF,	/* len beyond the bytes the chain holds */
	VSOCK_HDR_TYPE,
	VSOCK_HDR_OP,
	VSOCK_HDR_SRC_CID,	/* not the guest's CID */
	VSOCK_HDR_DST_CID,	/* not the host */
	VSOCK_HDR_CTRL_LEN,	/* control packet with a payload */
	VSOCK_HDR_NERR
};

/*
 * Gather the header from the chain's readable segments and check it
 * against the chain (payload_avail = readable bytes after the header)
 * and the device's state (our guest CID, whether SEQPACKET is on).
 * Returns VSOCK_HDR_OK or the first problem found.
 */
enum vsock_hdr_err vsock_hdr_parse(const struct iovec *out, unsigned n_out,
				   uint64_t out_len, uint64_t guest_cid,
				   int seqpacket, struct vsock_hdr *h);
const char *vsock_hdr_strerror(enum vsock_hdr_err e);

#endif
