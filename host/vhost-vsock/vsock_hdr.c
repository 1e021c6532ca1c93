// SPDX-License-Identifier: MIT
/* Validation of headers the guest puts in its TX queue (virtio 1.2, 5.10.6). */
#include "vsock_hdr.h"
#include "host/vring/iov.h"

static const char *const errs[GUEST_HDR_NERR] = {
	[GUEST_HDR_OK] = "ok",
	[GUEST_HDR_SHORT] = "chain shorter than a header",
	[GUEST_HDR_LEN_BIG] = "len over 64 KiB",
	[GUEST_HDR_LEN_BUF] = "len beyond the buffer",
	[GUEST_HDR_TYPE] = "unknown type",
	[GUEST_HDR_OP] = "unknown op",
	[GUEST_HDR_SRC_CID] = "src_cid is not the guest's",
	[GUEST_HDR_DST_CID] = "dst_cid is not the host",
	[GUEST_HDR_CTRL_LEN] = "control packet with payload",
};

const char *vsock_hdr_strerror(enum guest_hdr_err e)
{
	return e < GUEST_HDR_NERR ? errs[e] : "?";
}

enum guest_hdr_err vsock_hdr_parse(const struct iovec *out, unsigned n_out, uint64_t out_len,
				   uint64_t guest_cid, int seqpacket, struct virtio_vsock_hdr *h)
{
	if (out_len < VSOCK_HDR_LEN || iov_to_buf(out, n_out, 0, h, VSOCK_HDR_LEN) != VSOCK_HDR_LEN)
		return GUEST_HDR_SHORT;
	/* a len the buffer cannot hold is dropped, never trusted (as Linux 6.3) */
	if (h->len > VSOCK_MAX_PKT_PAYLOAD)
		return GUEST_HDR_LEN_BIG;
	if (h->len > out_len - VSOCK_HDR_LEN)
		return GUEST_HDR_LEN_BUF;
	if (h->type != VSOCK_TYPE_STREAM && !(seqpacket && h->type == VSOCK_TYPE_SEQPACKET))
		return GUEST_HDR_TYPE;
	if (h->op == VSOCK_OP_INVALID || h->op > VSOCK_OP_CREDIT_REQUEST)
		return GUEST_HDR_OP;
	/* 5.10.6.1: the device must not let a guest spoof its source */
	if (h->src_cid != guest_cid)
		return GUEST_HDR_SRC_CID;
	if (h->dst_cid != VSOCK_CID_HOST)
		return GUEST_HDR_DST_CID;
	if (h->op != VSOCK_OP_RW && h->len)
		return GUEST_HDR_CTRL_LEN;
	return GUEST_HDR_OK;
}
