// SPDX-License-Identifier: MIT
/*
 * The guest's TX queue (virtio 1.2, 5.10.6.1): validate each packet's
 * header and act on it (connect, data, shutdown, reset, credit).
 */
#include <errno.h>
#include <sys/socket.h>

#include "conn.h"
#include "inject.h"
#include "stats.h"

/* RW: into the host socket, the part it cannot take now into our buffer. */
static void stream_from_guest(struct vsock_dev *d, struct conn *c, const struct vq_elem *e,
			      uint32_t len)
{
	struct iovec iov[VQ_MAX_SEGS];
	unsigned n;
	size_t off = 0;

	if (len > d->buf_alloc - c->buf_len) {
		vv_violation(&stats.credit_violations, "guest port %u sent %u bytes, %u credit",
			     c->guest_port, len, d->buf_alloc - c->buf_len);
		return;
	}
	stats.tx_bytes += len;
	if (c->host_gone) { /* nobody reads the host side any more */
		conn_reset(d, c);
		return;
	}
	if (c->buf_len == 0 && c->fd >= 0 && !c->host_gone) {
		ssize_t w;

		n = iov_slice(iov, e->out, e->n_out, VSOCK_HDR_LEN, len);
		w = sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov, .msg_iovlen = n },
			    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			/* as conn_flush: this send may be what sees the client's RST */
			if (errno != EPIPE && errno != ECONNRESET)
				stats.host_io_errors++;
			tcp_note_reset(c, errno);
			conn_reset(d, c);
			return;
		}
		if (w > 0) {
			off = w;
			c->fwd_cnt += w;
		}
	}
	if (off < len) {
		uint32_t tail = (c->buf_off + c->buf_len) % d->buf_alloc;
		uint32_t rest = len - off, first = d->buf_alloc - tail;

		if (first > rest)
			first = rest;
		iov_to_buf(e->out, e->n_out, VSOCK_HDR_LEN + off, c->buf + tail, first);
		iov_to_buf(e->out, e->n_out, VSOCK_HDR_LEN + off + first, c->buf, rest - first);
		c->buf_len += rest;
	}
	conn_after_flush(d, c);
}

static void tx_shutdown(struct vsock_dev *d, struct conn *c, uint32_t flags)
{
	c->guest_shut |= flags & (VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	if (c->state == ST_CLOSING && c->guest_shut == (VSOCK_SHUTDOWN_SEND | VSOCK_SHUTDOWN_RCV)) {
		conn_reset(d, c);
		return;
	}
	conn_finish_if_done(d, c);
}

static void tx_packet(struct vsock_dev *d, const struct vq_elem *e)
{
	struct virtio_vsock_hdr h;
	enum guest_hdr_err err;
	struct conn *c;
	bool had_credit;

	err = vsock_hdr_parse(e->out, e->n_out, e->out_len, d->guest_cid, d->seqpacket, &h);
	if (err != GUEST_HDR_OK) {
		vv_violation(&stats.bad_hdrs, "tx header: %s", vsock_hdr_strerror(err));
		return;
	}
	stats.tx_pkts++;
	c = conn_find(d, h.dst_port, h.src_port);
	if (h.op == VSOCK_OP_REQUEST) {
		if (c) {
			conn_reset(d, c);
			return;
		}
		guest_connect(d, &h);
		return;
	}
	if (!c || c->pending & P_RST) {
		if (h.op == VSOCK_OP_RST)
			stats.rst_rx++;
		else if (!c)
			queue_rst(d, &h);
		return;
	}
	if (h.type != c->type) {
		conn_reset(d, c);
		return;
	}
	had_credit = peer_credit(c) > 0;
	c->peer_buf_alloc = h.buf_alloc;
	c->peer_fwd_cnt = h.fwd_cnt;
	if (!had_credit && peer_credit(c) > 0) {
		c->stall_since = 0;
		if (conn_has_rx_work(c))
			work_add(d, c);
	}
	switch (h.op) {
	case VSOCK_OP_RESPONSE:
		hybrid_connected(d, c);
		break;
	case VSOCK_OP_RST:
		stats.rst_rx++;
		tcp_guest_reset(c);
		if (c->on_work) { /* freed when the work list gets to it */
			conn_close_fd(d, c);
			conn_hash_del(d, c);
			c->dead = true;
			c->pending = 0;
		} else {
			conn_free(d, c);
		}
		break;
	case VSOCK_OP_SHUTDOWN:
		tx_shutdown(d, c, h.flags);
		break;
	case VSOCK_OP_RW:
		if (c->state != ST_OPEN || (c->guest_shut & VSOCK_SHUTDOWN_SEND)) {
			conn_reset(d, c);
			break;
		}
		if (c->type == VSOCK_TYPE_SEQPACKET)
			seq_from_guest(d, c, e, h.len, h.flags);
		else
			stream_from_guest(d, c, e, h.len);
		break;
	case VSOCK_OP_CREDIT_REQUEST:
		c->pending |= P_CREDIT_UPDATE;
		work_add(d, c);
		break;
	default: /* CREDIT_UPDATE: credit was taken above */
		break;
	}
}

void guest_tx_process(struct vsock_dev *d)
{
	struct device_ring *vr = &d->vq[VQ_TX];
	struct vq_elem e;
	int budget = 256; /* let RX and the host sockets run too */

	while (budget-- > 0 && vring_pop(vr, &e) == 1) {
		if (e.dropped) { /* counted in ring_errors: back unread */
			vring_push(vr, &e, 0);
			continue;
		}
		tx_packet(d, &e);
		inject_tx_id(d, &e);
		vring_push(vr, &e, 0);
	}
	if (vring_need_notify(vr))
		vu_notify(d, VQ_TX);
}
