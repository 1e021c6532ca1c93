/* SPDX-License-Identifier: MIT */
/* Scatter-gather helpers over the iovecs of a popped descriptor chain. */
#ifndef HOST_VRING_IOV_H
#define HOST_VRING_IOV_H

#include <stddef.h>
#include <sys/uio.h>

/* Copy between a flat buffer and an iovec list, starting at byte off. */
size_t iov_to_buf(const struct iovec *iov, unsigned n, size_t off, void *buf, size_t len);
size_t buf_to_iov(const struct iovec *iov, unsigned n, size_t off, const void *buf, size_t len);
/* Fill dst with the part of iov that starts at off and is at most len long. */
unsigned iov_slice(struct iovec *dst, const struct iovec *iov, unsigned n, size_t off, size_t len);

#endif
