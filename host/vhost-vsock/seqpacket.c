// SPDX-License-Identifier: MIT
/*
 * SOCK_SEQPACKET connections (virtio 1.2, 5.10.6.6) over SOCK_SEQPACKET
 * Unix sockets: one Unix message is one vsock message, its last packet
 * flagged EOM.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "conn.h"
#include "stats.h"

/*
 * Guest -> host: packets gather in buf until EOM closes a message; each
 * complete message goes to the host socket with one send. A message that
 * cannot complete within our buffer would stall forever: reset it.
 */
void seq_from_guest(struct vsock_dev *d, struct conn *c, const struct vq_elem *e, uint32_t len,
		    uint32_t flags)
{
	uint32_t tail = (c->buf_off + c->buf_len) % d->buf_alloc, first;

	if (len > d->buf_alloc - c->buf_len) {
		vv_violation(&stats.credit_violations, "guest port %u sent %u bytes, %u credit",
			     c->guest_port, len, d->buf_alloc - c->buf_len);
		return;
	}
	stats.tx_bytes += len;
	if (c->host_gone) {
		conn_reset(d, c);
		return;
	}
	first = d->buf_alloc - tail < len ? d->buf_alloc - tail : len;
	iov_to_buf(e->out, e->n_out, VSOCK_HDR_LEN, c->buf + tail, first);
	iov_to_buf(e->out, e->n_out, VSOCK_HDR_LEN + first, c->buf, len - first);
	c->buf_len += len;
	c->msg_cur += len;
	if (flags & VSOCK_SEQ_EOM) {
		if (c->msg_count == SEQ_MAX_PENDING) {
			vv_violation(&stats.credit_violations,
				     "guest port %u: over %u messages queued", c->guest_port,
				     SEQ_MAX_PENDING);
			conn_reset(d, c);
			return;
		}
		c->msg_len[(c->msg_head + c->msg_count++) % SEQ_MAX_PENDING] = c->msg_cur;
		c->msg_cur = 0;
	} else if (c->msg_cur == d->buf_alloc) {
		vv_violation(&stats.credit_violations, "guest port %u: message over %u bytes",
			     c->guest_port, d->buf_alloc);
		conn_reset(d, c);
		return;
	}
	if (!conn_flush(d, c)) {
		conn_reset(d, c);
		return;
	}
	conn_after_flush(d, c);
}

bool seq_flush(struct vsock_dev *d, struct conn *c)
{
	while (c->msg_count) {
		uint32_t len = c->msg_len[c->msg_head];
		uint32_t first = d->buf_alloc - c->buf_off;
		struct iovec iov[2] = {
			{ c->buf + c->buf_off, first < len ? first : len },
			{ c->buf, first < len ? len - first : 0 },
		};
		ssize_t n = sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov, .msg_iovlen = 2 },
				    MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n < 0) {
			if (errno != EPIPE && errno != ECONNRESET)
				stats.host_io_errors++;
			return false;
		}
		c->buf_off = (c->buf_off + len) % d->buf_alloc;
		c->buf_len -= len;
		c->fwd_cnt += len;
		c->msg_head = (c->msg_head + 1) % SEQ_MAX_PENDING;
		c->msg_count--;
	}
	return true;
}

/* Host -> guest: take one whole host message, then hand it out in pieces. */
static bool seq_fetch_host_msg(struct conn *c)
{
	ssize_t size = recv(c->fd, NULL, 0, MSG_PEEK | MSG_TRUNC);

	if (size < 0 && (errno == EAGAIN || errno == EINTR)) {
		c->readable = false;
		return false;
	}
	if (size <= 0 || size > SEQ_MAX_MSG) {
		/* end of stream, an error, or a message we will not carry */
		if (size > SEQ_MAX_MSG)
			stats.host_io_errors++;
		if (size != 0)
			c->host_gone = true;
		c->host_eof = true;
		c->shut_flags = VSOCK_SHUTDOWN_SEND;
		if (c->host_gone)
			c->shut_flags |= VSOCK_SHUTDOWN_RCV;
		c->pending |= P_SHUTDOWN;
		return false;
	}
	c->seq_rx = malloc(size);
	if (!c->seq_rx || recv(c->fd, c->seq_rx, size, 0) != size) {
		free(c->seq_rx);
		c->seq_rx = NULL;
		stats.host_io_errors++;
		return false;
	}
	c->seq_rx_len = size;
	c->seq_rx_off = 0;
	return true;
}

size_t seq_to_guest(struct vsock_dev *d, struct conn *c, const struct vq_elem *e)
{
	uint64_t room = e->in_len - VSOCK_HDR_LEN;
	uint32_t credit = peer_credit(c), flags = 0;

	if (!c->seq_rx && !seq_fetch_host_msg(c))
		return 0;
	if (room > VSOCK_MAX_PKT_PAYLOAD)
		room = VSOCK_MAX_PKT_PAYLOAD;
	if (room > credit)
		room = credit;
	if (room >= c->seq_rx_len - c->seq_rx_off) {
		room = c->seq_rx_len - c->seq_rx_off;
		flags = VSOCK_SEQ_EOM;
	}
	buf_to_iov(e->in, e->n_in, VSOCK_HDR_LEN, c->seq_rx + c->seq_rx_off, room);
	c->seq_rx_off += room;
	if (flags) {
		free(c->seq_rx);
		c->seq_rx = NULL;
	}
	c->tx_cnt += room;
	stats.rx_bytes += room;
	if (peer_credit(c) == 0 && !c->stall_since)
		c->stall_since = now_ms();
	return rx_fill_hdr(d, e, c->host_port, c->guest_port, c->type, VSOCK_OP_RW, flags, room,
			   c) +
	       room;
}
