// SPDX-License-Identifier: MIT
/*
 * The connections of the device: the (host port, guest port) table, the
 * list of connections waiting for guest RX buffers, credit (virtio 1.2,
 * 5.10.6.3), writing what the guest sent to the host socket, timeouts
 * and teardown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "stats.h"

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

static unsigned conn_hash(uint32_t host_port, uint32_t guest_port)
{
	return (host_port * 2654435761u ^ guest_port) % HASH_SIZE;
}

struct conn *conn_find(struct vsock_dev *d, uint32_t host_port, uint32_t guest_port)
{
	struct conn *c = d->hash[conn_hash(host_port, guest_port)];

	while (c && !(c->host_port == host_port && c->guest_port == guest_port))
		c = c->hash_next;
	return c;
}

void conn_hash_add(struct vsock_dev *d, struct conn *c)
{
	unsigned h = conn_hash(c->host_port, c->guest_port);

	c->hash_next = d->hash[h];
	d->hash[h] = c;
}

void conn_hash_del(struct vsock_dev *d, struct conn *c)
{
	struct conn **p = &d->hash[conn_hash(c->host_port, c->guest_port)];

	while (*p && *p != c)
		p = &(*p)->hash_next;
	if (*p)
		*p = c->hash_next;
}

struct conn *conn_new(struct vsock_dev *d, int fd, enum conn_state st, uint16_t type)
{
	struct conn *c;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET };

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

void conn_close_fd(struct vsock_dev *d, struct conn *c)
{
	if (c->fd < 0)
		return;
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
}

/* Free a connection; it must not be on the work list. */
void conn_free(struct vsock_dev *d, struct conn *c)
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

void work_add(struct vsock_dev *d, struct conn *c)
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

struct conn *work_pop(struct vsock_dev *d)
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
void conn_reset(struct vsock_dev *d, struct conn *c)
{
	conn_close_fd(d, c);
	c->pending = P_RST;
	work_add(d, c);
}

void queue_rst(struct vsock_dev *d, const struct virtio_vsock_hdr *h)
{
	if (h->op == VSOCK_OP_RST) /* never answer RST with RST */
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

uint32_t peer_credit(const struct conn *c)
{
	uint32_t in_flight = c->tx_cnt - c->peer_fwd_cnt;

	if (in_flight >= c->peer_buf_alloc)
		return 0;
	return c->peer_buf_alloc - in_flight;
}

bool conn_rx_data_ready(const struct conn *c)
{
	return c->state == ST_OPEN && (c->readable || c->seq_rx) && !c->host_eof &&
	       !(c->guest_shut & VSOCK_SHUTDOWN_RCV) && peer_credit(c) > 0;
}

bool conn_has_rx_work(const struct conn *c)
{
	return c->pending || conn_rx_data_ready(c);
}

/* Write what the guest sent to the host socket; false if the host is gone. */
bool conn_flush(struct vsock_dev *d, struct conn *c)
{
	if (c->type == VSOCK_TYPE_SEQPACKET)
		return seq_flush(d, c);
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
			tcp_note_reset(c, errno);
			return false;
		}
		c->buf_off = (c->buf_off + n) % d->buf_alloc;
		c->buf_len -= n;
		c->fwd_cnt += n;
	}
	return true;
}

/* After data left the buffer: credit, half-close, full close. */
void conn_after_flush(struct vsock_dev *d, struct conn *c)
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

void conn_finish_if_done(struct vsock_dev *d, struct conn *c)
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

bool conn_alloc_buf(struct vsock_dev *d, struct conn *c)
{
	if (!c->buf)
		c->buf = malloc(d->buf_alloc);
	if (c->type == VSOCK_TYPE_SEQPACKET && !c->msg_len)
		c->msg_len = malloc(SEQ_MAX_PENDING * sizeof(*c->msg_len));
	return c->buf && (c->type != VSOCK_TYPE_SEQPACKET || c->msg_len);
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
		if ((c->state == ST_REQUEST || c->state == ST_CLOSING) && c->deadline &&
		    now > c->deadline) {
			/* unanswered REQUEST: refused, the TCP client sees a reset */
			if (c->state == ST_REQUEST)
				tcp_guest_reset(c);
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
