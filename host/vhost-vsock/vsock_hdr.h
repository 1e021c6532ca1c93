/* SPDX-License-Identifier: MIT */
/*
 * Validation of the virtio-vsock packet headers a guest sends (the format
 * itself is net/vsock/wire.h, shared with the guest).
 */
#ifndef VV_VSOCK_HDR_H
#define VV_VSOCK_HDR_H

#include <stdint.h>
#include <sys/uio.h>

#include "net/vsock/wire.h"

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
				   int seqpacket, struct virtio_vsock_hdr *h);
const char *vsock_hdr_strerror(enum vsock_hdr_err e);

#endif
