// SPDX-License-Identifier: MIT
/*
 * Device side of virtio-vsock (virtio 1.2, 5.10) bridged to hybrid vsock
 * on Unix sockets, the convention of Firecracker, Cloud Hypervisor and
 * vhost-device-vsock:
 *   host client -> guest: connect to --uds PATH, write "CONNECT <port>\n",
 *	read "OK <hostport>\n", then bytes flow;
 *   guest -> host port P: we connect to the Unix listener "PATH_P";
 *	nothing listening means RST.
 * SEQPACKET (5.10.6.6): the same over SOCK_SEQPACKET Unix sockets (host
 * clients on --uds-seqpacket); one Unix message is one vsock message, its
 * last packet flagged EOM.
 * Credit (5.10.6.3): every packet carries our buf_alloc and fwd_cnt; we
 * never send more than the guest's buf_alloc - (tx_cnt - fwd_cnt) and
 * drop (and count) what the guest sends beyond ours.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dev.h"
#include "stats.h"

#define HASH_SIZE 1024
#define MAX_CONNS 4096
#define CONNECT_TIMEOUT_MS 10000
#define CLOSE_TIMEOUT_MS 10000
#define CREDIT_STALL_MS 1000
#define LINE_MAX_LEN 40
#define SEQ_MAX_PENDING 256		/* complete messages waiting for the host */
#define SEQ_MAX_MSG (1024 * 1024)	/* largest host message we forward */

enum conn_state {
	ST_LINE,	/* host client: waiting for "CONNECT <port>\n" */
	ST_REQUEST,	/* host client: REQUEST sent, waiting for RESPONSE */
	ST_OPEN,
	ST_CLOSING,	/* host side gone, waiting for the guest's RST */
};

/* control packets a connection still owes the guest */
#define P_REQUEST 1
#define P_RESPONSE 2
#define P_CREDIT_UPDATE 4
#define P_CREDIT_REQUEST 8
#define P_SHUTDOWN 16
#define P_RST 32

struct conn {
	struct ep_src ep;	/* first: epoll data points here */
	struct conn *hash_next, *all_next, *all_prev, *work_next;
	bool on_work;
	bool dead;		/* the guest reset it; freed off the work list */
	int fd;
	enum conn_state state;
	uint32_t host_port, guest_port;
	uint16_t type;
	char line[LINE_MAX_LEN];
	unsigned line_len;

	/* guest -> host: bytes accepted from the guest, not yet written */
	uint8_t *buf;
	uint32_t buf_off, buf_len;
	uint32_t fwd_cnt, fwd_cnt_sent;
	/* SEQPACKET: lengths of the complete messages in buf, oldest first */
	uint32_t *msg_len;
	unsigned msg_head, msg_count;
	uint32_t msg_cur;	/* bytes of the message still arriving */

	/* host -> guest */
	uint32_t peer_buf_alloc, peer_fwd_cnt, tx_cnt;
	uint64_t stall_since;
	uint8_t *seq_rx;	/* SEQPACKET: one host message being sent */
	uint32_t seq_rx_len, seq_rx_off;

	bool readable, host_eof, host_gone, shut_wr_done;
	uint32_t guest_shut;	/* SHUTDOWN flags the guest sent */
	uint32_t shut_flags;	/* SHUTDOWN flags we owe the guest */
	unsigned pending;
	uint64_t deadline;
};

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void vsock_init(struct vsock_dev *d)
{
	d->hash = calloc(HASH_SIZE, sizeof(*d->hash));
	if (!d->hash) {
		perror("calloc");
		exit(1);
	}
	d->next_host_port = 1u << 30;
}

/* ------------------------------------------------------------ table */

static unsigned conn_hash(uint32_t host_port, uint32_t guest_port)
{
	return (host_port * 2654435761u ^ guest_port) % HASH_SIZE;
}

static struct conn *conn_find(struct vsock_dev *d, uint32_t host_port,
			      uint32_t guest_port)
{
	struct conn *c = d->hash[conn_hash(host_port, guest_port)];

	while (c && !(c->host_port == host_port && c->guest_port == guest_port))
		c = c->hash_next;
	return c;
}

static void conn_hash_add(struct vsock_dev *d, struct conn *c)
{
	unsigned h = conn_hash(c->host_port, c->guest_port);

	c->hash_next = d->hash[h];
	d->hash[h] = c;
}

static void conn_hash_del(struct vsock_dev *d, struct conn *c)
{
	struct conn **p = &d->hash[conn_hash(c->host_port, c->guest_port)];

	while (*p && *p != c)
		p = &(*p)->hash_next;
	if (*p)
		*p = c->hash_next;
}

static struct conn *conn_new(struct vsock_dev *d, int fd, enum conn_state st,
			     uint16_t type)
{
	struct conn *c;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP |
					    EPOLLET };

	if (d->nconns >= MAX_CONNS)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ep.kind = EP_CONN;
	c->fd = fd;
	c->state = st;
	c->type = type;
	ev.data.ptr = &c->ep;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		free(c);
		return NULL;
	}
	c->all_next = d->all;
	if (d->all)
		d->all->all_prev = c;
	d->all = c;
	d->nconns++;
	return c;
}

static void conn_close_fd(struct vsock_dev *d, struct conn *c)
{
	if (c->fd < 0)
		return;
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
}

/* Free a connection; it must not be on the work list. */
static void conn_free(struct vsock_dev *d, struct conn *c)
{
	conn_close_fd(d, c);
	conn_hash_del(d, c);
	if (c->all_prev)
		c->all_prev->all_next = c->all_next;
	else
		d->all = c->all_next;
	if (c->all_next)
		c->all_next->all_prev = c->all_prev;
	free(c->buf);
	free(c->msg_len);
	free(c->seq_rx);
	c->buf = NULL;
	c->msg_len = NULL;
	c->seq_rx = NULL;
	/*
	 * Events for c may still sit in this epoll batch: free it after the
	 * batch (vsock_reap); its fd is -1 so they are ignored.
	 */
	c->hash_next = d->zombies;
	d->zombies = c;
	d->nconns--;
	stats.conns_closed++;
}

void vsock_reap(struct vsock_dev *d)
{
	while (d->zombies) {
		struct conn *c = d->zombies;

		d->zombies = c->hash_next;
		free(c);
	}
}

static void work_add(struct vsock_dev *d, struct conn *c)
{
	if (c->on_work)
		return;
	c->on_work = true;
	c->work_next = NULL;
	if (d->work_tail)
		d->work_tail->work_next = c;
	else
		d->work_head = c;
	d->work_tail = c;
}

static struct conn *work_pop(struct vsock_dev *d)
{
	struct conn *c = d->work_head;

	if (!c)
		return NULL;
	d->work_head = c->work_next;
	if (!d->work_head)
		d->work_tail = NULL;
	c->on_work = false;
	return c;
}

/* Tell the guest to forget the connection, then forget it ourselves. */
static void conn_reset(struct vsock_dev *d, struct conn *c)
{
	conn_close_fd(d, c);
	c->pending = P_RST;
	work_add(d, c);
}

static void queue_rst(struct vsock_dev *d, const struct virtio_vsock_hdr *h)
{
	if (h->op == VSOCK_OP_RST)	/* never answer RST with RST */
		return;
	if (d->rst_count >= RST_QUEUE_LEN) {
		stats.rst_dropped++;
		return;
	}
	d->rst_queue[d->rst_count].host_port = h->dst_port;
	d->rst_queue[d->rst_count].guest_port = h->src_port;
	d->rst_queue[d->rst_count].type = h->type;
	d->rst_count++;
}

/* ------------------------------------------------------------ credit */

static uint32_t peer_credit(const struct conn *c)
{
	uint32_t in_flight = c->tx_cnt - c->peer_fwd_cnt;

	if (in_flight >= c->peer_buf_alloc)
		return 0;
	return c->peer_buf_alloc - in_flight;
}

static bool conn_rx_data_ready(const struct conn *c)
{
	return c->state == ST_OPEN && (c->readable || c->seq_rx) &&
	       !c->host_eof &&
	       !(c->guest_shut & VSOCK_SHUTDOWN_RCV) && peer_credit(c) > 0;
}

static bool conn_has_rx_work(const struct conn *c)
{
	return c->pending || conn_rx_data_ready(c);
}

/* ------------------------------------------------------------ host side */

static void conn_finish_if_done(struct vsock_dev *d, struct conn *c);

static bool conn_flush_seq(struct vsock_dev *d, struct conn *c);

/* Write what the guest sent to the host socket; false if the host is gone. */
static bool conn_flush(struct vsock_dev *d, struct conn *c)
{
	if (c->type == VSOCK_TYPE_SEQPACKET)
		return conn_flush_seq(d, c);
	while (c->buf_len) {
		uint32_t chunk = d->buf_alloc - c->buf_off;
		ssize_t n;

		if (chunk > c->buf_len)
			chunk = c->buf_len;
		n = send(c->fd, c->buf + c->buf_off, chunk, MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n <= 0) {
			if (errno != EPIPE && errno != ECONNRESET)
				stats.host_io_errors++;
			return false;
		}
		c->buf_off = (c->buf_off + n) % d->buf_alloc;
		c->buf_len -= n;
		c->fwd_cnt += n;
	}
	return true;
}

/* After data left the buffer: credit, half-close, full close. */
static void conn_after_flush(struct vsock_dev *d, struct conn *c)
{
	/*
	 * Lazy credit update: the guest's view of our free space only
	 * stalls it once it is below half the buffer, so say so then.
	 */
	if (c->fwd_cnt - c->fwd_cnt_sent >= d->buf_alloc / 2) {
		c->pending |= P_CREDIT_UPDATE;
		work_add(d, c);
	}
	conn_finish_if_done(d, c);
}

static void conn_finish_if_done(struct vsock_dev *d, struct conn *c)
{
	if (c->buf_len || c->fd < 0)
		return;
	if ((c->guest_shut & VSOCK_SHUTDOWN_SEND) && !c->shut_wr_done) {
		shutdown(c->fd, SHUT_WR);
		c->shut_wr_done = true;
	}
	/* Linux answers a full shutdown with RST once the data is out. */
	if (c->guest_shut == (VSOCK_SHUTDOWN_SEND | VSOCK_SHUTDOWN_RCV))
		conn_reset(d, c);
}

static bool conn_alloc_buf(struct vsock_dev *d, struct conn *c)
{
	if (!c->buf)
		c->buf = malloc(d->buf_alloc);
	if (c->type == VSOCK_TYPE_SEQPACKET && !c->msg_len)
		c->msg_len = malloc(SEQ_MAX_PENDING * sizeof(*c->msg_len));
	return c->buf && (c->type != VSOCK_TYPE_SEQPACKET || c->msg_len);
}

/* "CONNECT <port>\n" from a host client (byte by byte: no data is eaten). */
static void conn_read_line(struct vsock_dev *d, struct conn *c)
{
	unsigned long port;
	char *end;
	ssize_t n;
	char ch;

	if (c->type == VSOCK_TYPE_SEQPACKET) {
		/* one message: "CONNECT <port>\n" */
		n = recv(c->fd, c->line, LINE_MAX_LEN - 1, 0);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0 || c->line[n - 1] != '\n')
			goto bad;
		c->line_len = n - 1;
		goto parse;
	}
	for (;;) {
		n = recv(c->fd, &ch, 1, 0);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			goto bad;
		if (ch == '\n')
			break;
		if (c->line_len >= LINE_MAX_LEN - 1)
			goto bad;
		c->line[c->line_len++] = ch;
	}
parse:
	c->line[c->line_len] = 0;
	if (c->line_len && c->line[c->line_len - 1] == '\r')
		c->line[--c->line_len] = 0;
	if (strncmp(c->line, "CONNECT ", 8))
		goto bad;
	errno = 0;
	port = strtoul(c->line + 8, &end, 10);
	if (*end || end == c->line + 8 || errno || port > UINT32_MAX)
		goto bad;
	c->guest_port = port;
	do {
		c->host_port = d->next_host_port++;
		if (d->next_host_port == 0)
			d->next_host_port = 1u << 30;
	} while (conn_find(d, c->host_port, c->guest_port));
	conn_hash_add(d, c);
	c->state = ST_REQUEST;
	/* bytes sent right after the line gave no new edge: look later */
	c->readable = true;
	c->pending |= P_REQUEST;
	c->deadline = now_ms() + CONNECT_TIMEOUT_MS;
	stats.conns_host++;
	work_add(d, c);
	return;
bad:
	if (n != 0 || c->line_len)
		stats.bad_connect_lines++;
	conn_free(d, c);
}

void vsock_conn_event(struct vsock_dev *d, struct ep_src *src, uint32_t events)
{
	struct conn *c = (struct conn *)src;

	if (c->fd < 0)
		return;
	if (c->state == ST_LINE) {
		if (events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))
			conn_read_line(d, c);
		return;
	}
	if (events & (EPOLLHUP | EPOLLERR))
		c->host_gone = true;
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
		c->readable = true;
		if (conn_has_rx_work(c))
			work_add(d, c);
	}
	if ((events & EPOLLOUT) && c->buf_len && c->fd >= 0) {
		if (!conn_flush(d, c))
			conn_reset(d, c);
		else
			conn_after_flush(d, c);
	}
}

void vsock_accept(struct vsock_dev *d, bool seqpacket)
{
	for (;;) {
		int fd = accept4(seqpacket ? d->uds_seq_fd : d->uds_fd, NULL,
				 NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		/* no guest, no connection: the client sees EOF at once */
		if (!d->vq_ready[VQ_RX] || !d->vq_ready[VQ_TX] ||
		    (seqpacket && !d->seqpacket) ||
		    !conn_new(d, fd, ST_LINE, seqpacket ? VSOCK_TYPE_SEQPACKET :
							  VSOCK_TYPE_STREAM))
			close(fd);
	}
}

/* A guest REQUEST to host port P: connect to the Unix listener PATH_P. */
static void guest_connect(struct vsock_dev *d, const struct virtio_vsock_hdr *h)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct conn *c;
	int fd;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s_%u",
			     d->uds_path, h->dst_port) >= sizeof(sa.sun_path))
		goto refuse;
	fd = socket(AF_UNIX, (h->type == VSOCK_TYPE_SEQPACKET ? SOCK_SEQPACKET :
			      SOCK_STREAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto refuse;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		goto refuse;
	}
	c = conn_new(d, fd, ST_OPEN, h->type);
	if (!c || !conn_alloc_buf(d, c)) {
		if (c)
			conn_free(d, c);
		else
			close(fd);
		goto refuse;
	}
	c->host_port = h->dst_port;
	c->guest_port = h->src_port;
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	conn_hash_add(d, c);
	c->pending |= P_RESPONSE;
	stats.conns_guest++;
	work_add(d, c);
	return;
refuse:
	stats.conns_refused++;
	queue_rst(d, h);
}

/* ------------------------------------------------------------ guest TX */

static void rx_from_guest_seq(struct vsock_dev *d, struct conn *c,
			      const struct vq_elem *e, uint32_t len,
			      uint32_t flags);

/* RW: into the host socket, the part it cannot take now into our buffer. */
static void rx_from_guest(struct vsock_dev *d, struct conn *c,
			  const struct vq_elem *e, uint32_t len)
{
	struct iovec iov[VQ_MAX_SEGS];
	unsigned n;
	size_t off = 0;

	if (len > d->buf_alloc - c->buf_len) {
		vv_violation(&stats.credit_violations,
			     "guest port %u sent %u bytes, %u credit",
			     c->guest_port, len, d->buf_alloc - c->buf_len);
		return;
	}
	stats.tx_bytes += len;
	if (c->host_gone) {	/* nobody reads the host side any more */
		conn_reset(d, c);
		return;
	}
	if (c->buf_len == 0 && c->fd >= 0 && !c->host_gone) {
		ssize_t w;

		n = iov_slice(iov, e->out, e->n_out, VSOCK_HDR_LEN, len);
		w = sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov,
						     .msg_iovlen = n },
			    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
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
		iov_to_buf(e->out, e->n_out, VSOCK_HDR_LEN + off,
			   c->buf + tail, first);
		iov_to_buf(e->out, e->n_out, VSOCK_HDR_LEN + off + first,
			   c->buf, rest - first);
		c->buf_len += rest;
	}
	conn_after_flush(d, c);
}

static void tx_shutdown(struct vsock_dev *d, struct conn *c, uint32_t flags)
{
	c->guest_shut |= flags & (VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	if (c->state == ST_CLOSING &&
	    c->guest_shut == (VSOCK_SHUTDOWN_SEND | VSOCK_SHUTDOWN_RCV)) {
		conn_reset(d, c);
		return;
	}
	conn_finish_if_done(d, c);
}

static void tx_response(struct vsock_dev *d, struct conn *c)
{
	char line[32];
	int n;

	if (c->state != ST_REQUEST || !conn_alloc_buf(d, c)) {
		conn_reset(d, c);
		return;
	}
	c->state = ST_OPEN;
	n = snprintf(line, sizeof(line), "OK %u\n", c->host_port);
	/* a fresh socket always has room for one short line */
	if (send(c->fd, line, n, MSG_NOSIGNAL) != n) {
		conn_reset(d, c);
		return;
	}
	if (conn_has_rx_work(c))
		work_add(d, c);
}

static void tx_packet(struct vsock_dev *d, const struct vq_elem *e)
{
	struct virtio_vsock_hdr h;
	enum guest_hdr_err err;
	struct conn *c;
	bool had_credit;

	err = vsock_hdr_parse(e->out, e->n_out, e->out_len, d->guest_cid,
			      d->seqpacket, &h);
	if (err != GUEST_HDR_OK) {
		vv_violation(&stats.bad_hdrs, "tx header: %s",
			     vsock_hdr_strerror(err));
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
		tx_response(d, c);
		break;
	case VSOCK_OP_RST:
		stats.rst_rx++;
		if (c->on_work) {	/* freed when the work list gets to it */
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
			rx_from_guest_seq(d, c, e, h.len, h.flags);
		else
			rx_from_guest(d, c, e, h.len);
		break;
	case VSOCK_OP_CREDIT_REQUEST:
		c->pending |= P_CREDIT_UPDATE;
		work_add(d, c);
		break;
	default:		/* CREDIT_UPDATE: credit was taken above */
		break;
	}
}

static void process_tx(struct vsock_dev *d)
{
	struct device_ring *vr = &d->vq[VQ_TX];
	struct vq_elem e;
	int budget = 256;	/* let RX and the host sockets run too */

	while (budget-- > 0 && vring_pop(vr, &e) == 1) {
		tx_packet(d, &e);
		vring_push(vr, &e, 0);
	}
	if (vring_need_notify(vr))
		vu_notify(d, VQ_TX);
}

/* ------------------------------------------------------------ guest RX */

static size_t fill_hdr(struct vsock_dev *d, const struct vq_elem *e,
		       uint32_t host_port, uint32_t guest_port, uint16_t type,
		       uint16_t op, uint32_t flags, uint32_t len,
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
		c->pending &= ~P_CREDIT_UPDATE;	/* this packet carries it */
	}
	if (op == VSOCK_OP_RST)
		stats.rst_tx++;
	stats.rx_pkts++;
	return buf_to_iov(e->in, e->n_in, 0, &h, sizeof(h));
}

static size_t conn_ctrl(struct vsock_dev *d, struct conn *c,
			const struct vq_elem *e, uint16_t op, uint32_t flags)
{
	return fill_hdr(d, e, c->host_port, c->guest_port, c->type, op, flags,
			0, c);
}

/* Read host data straight into the guest's buffer, sized by the buffer. */
static size_t conn_rx_data(struct vsock_dev *d, struct conn *c,
			   const struct vq_elem *e)
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
	n = iov_slice(iov, e->in, e->n_in, VSOCK_HDR_LEN, room);
	r = readv(c->fd, iov, n);
	if (r < 0) {
		if (errno == EAGAIN || errno == EINTR) {
			c->readable = false;
			return 0;
		}
		if (errno != ECONNRESET)
			stats.host_io_errors++;
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
	return fill_hdr(d, e, c->host_port, c->guest_port, c->type,
			VSOCK_OP_RW, 0, r, c) + r;
}

/* ------------------------------------------------------------ SEQPACKET */

/*
 * Guest -> host: packets gather in buf until EOM closes a message; each
 * complete message goes to the host socket with one send. A message that
 * cannot complete within our buffer would stall forever: reset it.
 */
static void rx_from_guest_seq(struct vsock_dev *d, struct conn *c,
			      const struct vq_elem *e, uint32_t len,
			      uint32_t flags)
{
	uint32_t tail = (c->buf_off + c->buf_len) % d->buf_alloc, first;

	if (len > d->buf_alloc - c->buf_len) {
		vv_violation(&stats.credit_violations,
			     "guest port %u sent %u bytes, %u credit",
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
	iov_to_buf(e->out, e->n_out, VSOCK_HDR_LEN + first, c->buf,
		   len - first);
	c->buf_len += len;
	c->msg_cur += len;
	if (flags & VSOCK_SEQ_EOM) {
		if (c->msg_count == SEQ_MAX_PENDING) {
			vv_violation(&stats.credit_violations,
				     "guest port %u: over %u messages queued",
				     c->guest_port, SEQ_MAX_PENDING);
			conn_reset(d, c);
			return;
		}
		c->msg_len[(c->msg_head + c->msg_count++) % SEQ_MAX_PENDING] =
			c->msg_cur;
		c->msg_cur = 0;
	} else if (c->msg_cur == d->buf_alloc) {
		vv_violation(&stats.credit_violations,
			     "guest port %u: message over %u bytes",
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

static bool conn_flush_seq(struct vsock_dev *d, struct conn *c)
{
	while (c->msg_count) {
		uint32_t len = c->msg_len[c->msg_head];
		uint32_t first = d->buf_alloc - c->buf_off;
		struct iovec iov[2] = {
			{ c->buf + c->buf_off, first < len ? first : len },
			{ c->buf, first < len ? len - first : 0 },
		};
		ssize_t n = sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov,
							     .msg_iovlen = 2 },
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
static bool seq_rx_fetch(struct conn *c)
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

static size_t conn_rx_data_seq(struct vsock_dev *d, struct conn *c,
			       const struct vq_elem *e)
{
	uint64_t room = e->in_len - VSOCK_HDR_LEN;
	uint32_t credit = peer_credit(c), flags = 0;

	if (!c->seq_rx && !seq_rx_fetch(c))
		return 0;
	if (room > VSOCK_MAX_PKT_PAYLOAD)
		room = VSOCK_MAX_PKT_PAYLOAD;
	if (room > credit)
		room = credit;
	if (room >= c->seq_rx_len - c->seq_rx_off) {
		room = c->seq_rx_len - c->seq_rx_off;
		flags = VSOCK_SEQ_EOM;
	}
	buf_to_iov(e->in, e->n_in, VSOCK_HDR_LEN, c->seq_rx + c->seq_rx_off,
		   room);
	c->seq_rx_off += room;
	if (flags) {
		free(c->seq_rx);
		c->seq_rx = NULL;
	}
	c->tx_cnt += room;
	stats.rx_bytes += room;
	if (peer_credit(c) == 0 && !c->stall_since)
		c->stall_since = now_ms();
	return fill_hdr(d, e, c->host_port, c->guest_port, c->type,
			VSOCK_OP_RW, flags, room, c) + room;
}

/*
 * One packet for connection c into chain e. Returns the bytes written to
 * e (0: e is still unused). Sets *freed when c no longer exists.
 */
static size_t conn_rx_one(struct vsock_dev *d, struct conn *c,
			  const struct vq_elem *e, bool *freed)
{
	size_t len;

	if (c->pending & P_RST) {
		len = conn_ctrl(d, c, e, VSOCK_OP_RST, 0);
		conn_free(d, c);
		*freed = true;
		return len;
	}
	if (c->pending & P_REQUEST) {
		c->pending &= ~P_REQUEST;
		return conn_ctrl(d, c, e, VSOCK_OP_REQUEST, 0);
	}
	if (c->pending & P_RESPONSE) {
		c->pending &= ~P_RESPONSE;
		return conn_ctrl(d, c, e, VSOCK_OP_RESPONSE, 0);
	}
	if (conn_rx_data_ready(c)) {
		len = c->type == VSOCK_TYPE_SEQPACKET ? conn_rx_data_seq(d, c, e) :
							conn_rx_data(d, c, e);
		if (len)
			return len;
	}
	if (c->pending & P_SHUTDOWN) {
		c->pending &= ~P_SHUTDOWN;
		if (c->shut_flags & VSOCK_SHUTDOWN_RCV) {
			c->state = ST_CLOSING;
			c->deadline = now_ms() + CLOSE_TIMEOUT_MS;
		}
		return conn_ctrl(d, c, e, VSOCK_OP_SHUTDOWN, c->shut_flags);
	}
	if (c->pending & P_CREDIT_UPDATE) {
		stats.credit_updates_tx++;
		return conn_ctrl(d, c, e, VSOCK_OP_CREDIT_UPDATE, 0);
	}
	if (c->pending & P_CREDIT_REQUEST) {
		c->pending &= ~P_CREDIT_REQUEST;
		stats.credit_requests_tx++;
		return conn_ctrl(d, c, e, VSOCK_OP_CREDIT_REQUEST, 0);
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
		vv_violation(&stats.ring_errors, "rx chain: %u readable, %llu "
			     "writable bytes", d->rx_held.n_out,
			     (unsigned long long)d->rx_held.in_len);
		vring_push(&d->vq[VQ_RX], &d->rx_held, 0);
	}
	d->rx_held_valid = true;
	return true;
}

static void rx_put(struct vsock_dev *d, size_t len)
{
	vring_push(&d->vq[VQ_RX], &d->rx_held, len);
	d->rx_held_valid = false;
}

static void process_rx(struct vsock_dev *d)
{
	struct device_ring *vr = &d->vq[VQ_RX];
	int budget = 256;

	while (d->rst_count && rx_get(d)) {
		d->rst_count--;
		rx_put(d, fill_hdr(d, &d->rx_held,
				   d->rst_queue[d->rst_count].host_port,
				   d->rst_queue[d->rst_count].guest_port,
				   d->rst_queue[d->rst_count].type,
				   VSOCK_OP_RST, 0, 0, NULL));
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
	process_tx(d);
	process_rx(d);
}

bool vsock_rx_waiting(struct vsock_dev *d)
{
	return d->work_head || d->rst_count;
}

/* Timeouts: unanswered REQUESTs, SHUTDOWNs never followed by RST. */
void vsock_tick(struct vsock_dev *d)
{
	uint64_t now = now_ms();
	struct conn *c, *next;

	for (c = d->all; c; c = next) {
		next = c->all_next;
		if ((c->pending & P_RST) || c->dead)
			continue;
		if ((c->state == ST_REQUEST || c->state == ST_CLOSING) &&
		    c->deadline && now > c->deadline) {
			conn_reset(d, c);
			continue;
		}
		/* zero credit for a while: ask the guest (5.10.6.3) */
		if (c->stall_since && now - c->stall_since > CREDIT_STALL_MS &&
		    peer_credit(c) == 0) {
			c->stall_since = now;
			c->pending |= P_CREDIT_REQUEST;
			work_add(d, c);
		}
	}
}

/* The guest's driver or the front end went away: drop every connection. */
void vsock_reset(struct vsock_dev *d)
{
	while (work_pop(d))
		;
	while (d->all)
		conn_free(d, d->all);
	d->rst_count = 0;
}

void vsock_stop_ring(struct vsock_dev *d, unsigned idx)
{
	if (idx == VQ_RX && d->rx_held_valid) {
		vring_unpop(&d->vq[VQ_RX], &d->rx_held);
		d->rx_held_valid = false;
	}
	vsock_reset(d);
}
