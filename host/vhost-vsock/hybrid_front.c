// SPDX-License-Identifier: MIT
/*
 * The host side of the device: hybrid vsock on Unix sockets, the
 * convention of Firecracker, Cloud Hypervisor and vhost-device-vsock.
 *   host client -> guest: connect to --uds PATH, write "CONNECT <port>\n",
 *	read "OK <hostport>\n", then bytes flow;
 *   guest -> host port P: we connect to the Unix listener "PATH_P";
 *	nothing listening means RST.
 * SEQPACKET clients use --uds-seqpacket the same way (seqpacket.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"
#include "stats.h"

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
	if (events & (EPOLLHUP | EPOLLERR)) {
		if (tcp_reset_seen(c)) { /* a TCP RST: a vsock RST, no SHUTDOWN first */
			conn_reset(d, c);
			return;
		}
		c->host_gone = true;
	}
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
		int fd = accept4(seqpacket ? d->uds_seq_fd : d->uds_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		/* no guest, no connection: the client sees EOF at once */
		if (!d->vq_ready[VQ_RX] || !d->vq_ready[VQ_TX] || (seqpacket && !d->seqpacket) ||
		    !conn_new(d, fd, ST_LINE, seqpacket ? VSOCK_TYPE_SEQPACKET : VSOCK_TYPE_STREAM))
			close(fd);
	}
}

/* A guest REQUEST to host port P: connect to the Unix listener PATH_P. */
void guest_connect(struct vsock_dev *d, const struct virtio_vsock_hdr *h)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct conn *c;
	int fd;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s_%u", d->uds_path, h->dst_port) >=
	    sizeof(sa.sun_path))
		goto refuse;
	fd = socket(AF_UNIX,
		    (h->type == VSOCK_TYPE_SEQPACKET ? SOCK_SEQPACKET : SOCK_STREAM) |
			    SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		goto refuse;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
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

void hybrid_connected(struct vsock_dev *d, struct conn *c)
{
	char line[32];
	int n;

	if (c->state != ST_REQUEST || !conn_alloc_buf(d, c)) {
		conn_reset(d, c);
		return;
	}
	c->state = ST_OPEN;
	if (c->tcp) /* TCP clients get no OK line */
		goto open;
	n = snprintf(line, sizeof(line), "OK %u\n", c->host_port);
	/* a fresh socket always has room for one short line */
	if (send(c->fd, line, n, MSG_NOSIGNAL) != n) {
		conn_reset(d, c);
		return;
	}
open:
	if (conn_has_rx_work(c))
		work_add(d, c);
}
