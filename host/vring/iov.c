// SPDX-License-Identifier: MIT
/* Copies between flat buffers and the iovec lists a popped chain gives. */
#include <string.h>

#include "iov.h"

size_t iov_to_buf(const struct iovec *iov, unsigned n, size_t off, void *buf, size_t len)
{
	size_t done = 0;

	for (unsigned i = 0; i < n && done < len; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		l -= off;
		if (l > len - done)
			l = len - done;
		memcpy((char *)buf + done, (char *)iov[i].iov_base + off, l);
		done += l;
		off = 0;
	}
	return done;
}

size_t buf_to_iov(const struct iovec *iov, unsigned n, size_t off, const void *buf, size_t len)
{
	size_t done = 0;

	for (unsigned i = 0; i < n && done < len; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		l -= off;
		if (l > len - done)
			l = len - done;
		memcpy((char *)iov[i].iov_base + off, (const char *)buf + done, l);
		done += l;
		off = 0;
	}
	return done;
}

unsigned iov_slice(struct iovec *dst, const struct iovec *iov, unsigned n, size_t off, size_t len)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n && len; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		l -= off;
		if (l > len)
			l = len;
		dst[k].iov_base = (char *)iov[i].iov_base + off;
		dst[k++].iov_len = l;
		len -= l;
		off = 0;
	}
	return k;
}
