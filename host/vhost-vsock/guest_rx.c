// SPDX-License-Identifier: MIT
/*
 * The guest's RX queue (virtio 1.2, 5.10.6.2): hand RX buffers to the
 * connections that have something to say, in turn (pending RSTs first,
 * then the work list, a budget per pass). Every packet carries our
 * buf_alloc and fwd_cnt (5.10.6.3).
 */
#include <errno.h>

#include "conn.h"
#include "inject.h"
#include "stats.h"

size_t rx_fill_hdr(struct vsock_dev *d, const struct vq_elem *e, uint32_t host_port,
		   uint32_t guest_port, uint16_t type, uint16_t op, uint32_t flags, uint32_t len,
		   struct conn *c)
{
	struct virtio_vsock_hdr h = {
		.src_cid = VSOCK_CID_HOST,
		.dst_cid = d->guest_cid,
		.src_port = host_port,
		.dst_port = guest_port,
		.len = len,
		.type = type,
		.op = op,
		.flags = flags,
	};

	if (c) {
		h.buf_alloc = d->buf_alloc;
		h.fwd_cnt = c->fwd_cnt;
		c->fwd_cnt_sent = c->fwd_cnt;
		c->pending &= ~P_CREDIT_UPDATE; /* this packet carries it */
	}
	if (op == VSOCK_OP_RST)
		stats.rst_tx++;
	stats.rx_pkts++;
	inject_rx_extra(host_port, guest_port, type, op, c ? c->fwd_cnt : 0);
	return buf_to_iov(e->in, e->n_in, 0, &h, sizeof(h));
}

static size_t rx_ctrl(struct vsock_dev *d, struct conn *c, const struct vq_elem *e, uint16_t op,
		      uint32_t flags)
{
	return rx_fill_hdr(d, e, c->host_port, c->guest_port, c->type, op, flags, 0, c);
}

/* Read host data straight into the guest's buffer, sized by the buffer. */
static size_t stream_to_guest(struct vsock_dev *d, struct conn *c, const struct vq_elem *e)
{
	struct iovec iov[VQ_MAX_SEGS];
	uint64_t room = e->in_len - VSOCK_HDR_LEN;
	uint32_t credit = peer_credit(c);
	unsigned n;
	ssize_t r;

	if (room > VSOCK_MAX_PKT_PAYLOAD)
		room = VSOCK_MAX_PKT_PAYLOAD;
	if (room > credit)
		room = credit;
	room = inject_rx_room(room);
	n = iov_slice(iov, e->in, e->n_in, VSOCK_HDR_LEN, room);
	r = readv(c->fd, iov, n);
	if (r < 0) {
		if (errno == EAGAIN || errno == EINTR) {
			c->readable = false;
			return 0;
		}
		if (errno != ECONNRESET)
			stats.host_io_errors++;
		if (c->tcp && errno == ECONNRESET) {
			/* the TCP client reset: so do we, no SHUTDOWN first */
			tcp_note_reset(c, errno);
			conn_reset(d, c);
			return 0;
		}
		r = 0;
		c->host_gone = true;
	}
	if (r == 0) {
		/* end of stream: tell the guest nothing more comes */
		c->host_eof = true;
		c->shut_flags = VSOCK_SHUTDOWN_SEND;
		if (c->host_gone)
			c->shut_flags |= VSOCK_SHUTDOWN_RCV;
		c->pending |= P_SHUTDOWN;
		return 0;
	}
	c->tx_cnt += r;
	stats.rx_bytes += r;
	if (peer_credit(c) == 0 && !c->stall_since)
		c->stall_since = now_ms();
	return rx_fill_hdr(d, e, c->host_port, c->guest_port, c->type, VSOCK_OP_RW, 0, r, c) + r;
}

/*
 * One packet for connection c into chain e. Returns the bytes written to
 * e (0: e is still unused). Sets *freed when c no longer exists.
 */
static size_t conn_rx_one(struct vsock_dev *d, struct conn *c, const struct vq_elem *e, bool *freed)
{
	size_t len;

	if (c->pending & P_RST) {
		len = rx_ctrl(d, c, e, VSOCK_OP_RST, 0);
		conn_free(d, c);
		*freed = true;
		return len;
	}
	if (c->pending & P_REQUEST) {
		c->pending &= ~P_REQUEST;
		return rx_ctrl(d, c, e, VSOCK_OP_REQUEST, 0);
	}
	if (c->pending & P_RESPONSE) {
		c->pending &= ~P_RESPONSE;
		return rx_ctrl(d, c, e, VSOCK_OP_RESPONSE, 0);
	}
	if (conn_rx_data_ready(c)) {
		len = c->type == VSOCK_TYPE_SEQPACKET ? seq_to_guest(d, c, e) :
							stream_to_guest(d, c, e);
		if (len)
			return len;
	}
	if (c->pending & P_SHUTDOWN) {
		c->pending &= ~P_SHUTDOWN;
		if (c->shut_flags & VSOCK_SHUTDOWN_RCV) {
			c->state = ST_CLOSING;
			c->deadline = now_ms() + CLOSE_TIMEOUT_MS;
		}
		return rx_ctrl(d, c, e, VSOCK_OP_SHUTDOWN, c->shut_flags);
	}
	if (c->pending & P_CREDIT_UPDATE) {
		stats.credit_updates_tx++;
		return rx_ctrl(d, c, e, VSOCK_OP_CREDIT_UPDATE, 0);
	}
	if (c->pending & P_CREDIT_REQUEST) {
		c->pending &= ~P_CREDIT_REQUEST;
		stats.credit_requests_tx++;
		return rx_ctrl(d, c, e, VSOCK_OP_CREDIT_REQUEST, 0);
	}
	return 0;
}

/* A chain for the guest: the held one or a new one. */
static bool rx_get(struct vsock_dev *d)
{
	int r;

	if (d->rx_held_valid)
		return true;
	for (;;) {
		r = vring_pop(&d->vq[VQ_RX], &d->rx_held);
		if (r <= 0)
			return false;
		/* 5.10.6.2: rx buffers are device-writable and hold a header */
		if (d->rx_held.n_out == 0 && d->rx_held.in_len >= VSOCK_HDR_LEN)
			break;
		if (d->rx_held.dropped) { /* counted in ring_errors already */
			vring_push(&d->vq[VQ_RX], &d->rx_held, 0);
			continue;
		}
		vv_violation(&stats.ring_errors,
			     "rx chain: %u readable, %llu "
			     "writable bytes",
			     d->rx_held.n_out, (unsigned long long)d->rx_held.in_len);
		vring_push(&d->vq[VQ_RX], &d->rx_held, 0);
	}
	d->rx_held_valid = true;
	return true;
}

static void rx_put(struct vsock_dev *d, size_t len)
{
	len = inject_rx_packet(d, &d->rx_held, len);
	vring_push(&d->vq[VQ_RX], &d->rx_held, len);
	d->rx_held_valid = false;
}

static void guest_rx_process(struct vsock_dev *d)
{
	struct device_ring *vr = &d->vq[VQ_RX];
	int budget = 256;
	uint32_t extra_len;

	/* injected packets (inject.h) go first */
	while (inject_rx_waiting() && rx_get(d) && inject_rx_pending(d, &d->rx_held, &extra_len)) {
		vring_push(vr, &d->rx_held, extra_len);
		d->rx_held_valid = false;
	}
	while (d->rst_count && rx_get(d)) {
		d->rst_count--;
		rx_put(d, rx_fill_hdr(d, &d->rx_held, d->rst_queue[d->rst_count].host_port,
				      d->rst_queue[d->rst_count].guest_port,
				      d->rst_queue[d->rst_count].type, VSOCK_OP_RST, 0, 0, NULL));
	}
	while (d->work_head && budget-- > 0) {
		struct conn *c;
		bool freed = false;
		size_t len;

		if (!rx_get(d)) {
			stats.rx_no_buffer++;
			break;
		}
		c = work_pop(d);
		if (c->dead) {
			conn_free(d, c);
			continue;
		}
		len = conn_rx_one(d, c, &d->rx_held, &freed);
		if (len)
			rx_put(d, len);
		if (!freed && conn_has_rx_work(c))
			work_add(d, c);
	}
	if (vring_need_notify(vr))
		vu_notify(d, VQ_RX);
}

void vsock_process(struct vsock_dev *d)
{
	if (!d->vq_ready[VQ_RX] || !d->vq_ready[VQ_TX])
		return;
	guest_tx_process(d);
	guest_rx_process(d);
}

bool vsock_rx_waiting(struct vsock_dev *d)
{
	return d->work_head || d->rst_count || inject_rx_waiting();
}

void vsock_stop_ring(struct vsock_dev *d, unsigned idx)
{
	if (idx == VQ_RX && d->rx_held_valid) {
		vring_unpop(&d->vq[VQ_RX], &d->rx_held);
		d->rx_held_valid = false;
	}
	inject_ring_stopped(idx);
	vsock_reset(d);
}
