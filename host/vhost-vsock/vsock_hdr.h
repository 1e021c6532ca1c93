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

enum guest_hdr_err {
	GUEST_HDR_OK,
	GUEST_HDR_SHORT, /* fewer than 44 readable bytes */
	GUEST_HDR_LEN_BIG, /* len over 64 KiB */
	GUEST_HDR_LEN_BUF, /* len beyond the bytes the chain holds */
	GUEST_HDR_TYPE,
	GUEST_HDR_OP,
	GUEST_HDR_SRC_CID, /* not the guest's CID */
	GUEST_HDR_DST_CID, /* not the host */
	GUEST_HDR_CTRL_LEN, /* control packet with a payload */
	GUEST_HDR_NERR
};

/*
 * Gather the header from the chain's readable segments and check it
 * against the chain (payload_avail = readable bytes after the header)
 * and the device's state (our guest CID, whether SEQPACKET is on).
 * Returns GUEST_HDR_OK or the first problem found.
 */
enum guest_hdr_err vsock_hdr_parse(const struct iovec *out, unsigned n_out, uint64_t out_len,
				   uint64_t guest_cid, int seqpacket, struct virtio_vsock_hdr *h);
const char *vsock_hdr_strerror(enum guest_hdr_err e);

#endif
