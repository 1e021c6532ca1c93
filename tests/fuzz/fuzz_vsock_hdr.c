// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vsock header validation (host/vhost-vsock/vsock_hdr.c)
 * on a chain split into fuzzer-chosen segments. An accepted header must
 * describe a payload the chain really holds.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "host/vring/vring.h"
#include "host/vhost-vsock/vsock_hdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct iovec iov[8];
	struct virtio_vsock_hdr h;
	uint64_t total = 0;
	unsigned n = 0;
	size_t off = 2;
	enum guest_hdr_err err;

	if (size < 2)
		return 0;
	/* data[0]: segment length seed, data[1]: guest cid and seqpacket */
	while (off < size && n < 8) {
		size_t len = 1 + (data[0] * (n + 7)) % 61;

		if (len > size - off || n == 7)
			len = size - off;
		iov[n].iov_base = (void *)(data + off);
		iov[n++].iov_len = len;
		total += len;
		off += len;
	}
	err = vsock_hdr_parse(iov, n, total, 3 + (data[1] & 1), data[1] & 2, &h);
	if (err == GUEST_HDR_OK) {
		assert(total >= VSOCK_HDR_LEN);
		assert(h.len <= total - VSOCK_HDR_LEN);
		assert(h.len <= VSOCK_MAX_PKT_PAYLOAD);
		assert(h.dst_cid == VSOCK_CID_HOST);
		assert(h.op >= VSOCK_OP_REQUEST && h.op <= VSOCK_OP_CREDIT_REQUEST);
	}
	assert(vsock_hdr_strerror(err) != NULL);
	return 0;
}
