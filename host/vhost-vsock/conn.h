/* SPDX-License-Identifier: MIT */
/*
 * One vsock connection between a host socket and a guest port, and the
 * interface between the parts of the device that handle it: conn.c (table,
 * work list, credit, teardown), hybrid_front.c (the host's Unix sockets),
 * tcp_front.c (--forward-tcp),
 * seqpacket.c (SOCK_SEQPACKET), guest_tx.c and guest_rx.c (the two queues).
 */
#ifndef VV_CONN_H
#define VV_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "dev.h"

#define HASH_SIZE 1024
#define MAX_CONNS 4096
#define CONNECT_TIMEOUT_MS 10000
#define CLOSE_TIMEOUT_MS 10000
#define CREDIT_STALL_MS 1000
#define LINE_MAX_LEN 40
#define SEQ_MAX_PENDING 256 /* complete messages waiting for the host */
#define SEQ_MAX_MSG (1024 * 1024) /* largest host message we forward */

enum conn_state {
	ST_LINE, /* host client: waiting for "CONNECT <port>\n" */
	ST_REQUEST, /* host client: REQUEST sent, waiting for RESPONSE */
	ST_OPEN,
	ST_CLOSING, /* host side gone, waiting for the guest's RST */
};

/* control packets a connection still owes the guest */
#define P_REQUEST 1
#define P_RESPONSE 2
#define P_CREDIT_UPDATE 4
#define P_CREDIT_REQUEST 8
#define P_SHUTDOWN 16
#define P_RST 32

struct conn {
	struct ep_src ep; /* first: epoll data points here */
	struct conn *hash_next, *all_next, *all_prev, *work_next;
	bool on_work;
	bool dead; /* the guest reset it; freed off the work list */
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
	uint32_t msg_cur; /* bytes of the message still arriving */

	/* host -> guest */
	uint32_t peer_buf_alloc, peer_fwd_cnt, tx_cnt;
	uint64_t stall_since;
	uint8_t *seq_rx; /* SEQPACKET: one host message being sent */
	uint32_t seq_rx_len, seq_rx_off;

	bool readable, host_eof, host_gone, shut_wr_done;
	bool tcp; /* from --forward-tcp: no CONNECT/OK lines, RST maps to TCP RST */
	bool tcp_reset; /* the TCP client reset: counted once, whichever path saw it */
	uint32_t guest_shut; /* SHUTDOWN flags the guest sent */
	uint32_t shut_flags; /* SHUTDOWN flags we owe the guest */
	unsigned pending;
	uint64_t deadline;
};

/* conn.c: the table and the work list */
struct conn *conn_find(struct vsock_dev *d, uint32_t host_port, uint32_t guest_port);
void conn_hash_add(struct vsock_dev *d, struct conn *c);
void conn_hash_del(struct vsock_dev *d, struct conn *c);
struct conn *conn_new(struct vsock_dev *d, int fd, enum conn_state st, uint16_t type);
void conn_close_fd(struct vsock_dev *d, struct conn *c);
/* Free a connection; it must not be on the work list. */
void conn_free(struct vsock_dev *d, struct conn *c);
void work_add(struct vsock_dev *d, struct conn *c);
struct conn *work_pop(struct vsock_dev *d);
/* Tell the guest to forget the connection, then forget it ourselves. */
void conn_reset(struct vsock_dev *d, struct conn *c);
/* RST for a packet that has no connection (never for an RST). */
void queue_rst(struct vsock_dev *d, const struct virtio_vsock_hdr *h);

/* conn.c: credit and the host side of the data path */
uint32_t peer_credit(const struct conn *c);
bool conn_rx_data_ready(const struct conn *c);
bool conn_has_rx_work(const struct conn *c);
/* Write what the guest sent to the host socket; false if the host is gone. */
bool conn_flush(struct vsock_dev *d, struct conn *c);
/* After data left the buffer: credit, half-close, full close. */
void conn_after_flush(struct vsock_dev *d, struct conn *c);
void conn_finish_if_done(struct vsock_dev *d, struct conn *c);
bool conn_alloc_buf(struct vsock_dev *d, struct conn *c);

/* hybrid_front.c */
/* A guest REQUEST to host port P: connect to the Unix listener PATH_P. */
void guest_connect(struct vsock_dev *d, const struct virtio_vsock_hdr *h);
/* The guest accepted a host client's REQUEST: tell the client "OK". */
void hybrid_connected(struct vsock_dev *d, struct conn *c);

/* tcp_front.c */
/*
 * --forward-tcp [ADDR:]HOSTPORT=GUESTPORT. check: NULL if the spec is well
 * formed, else what is wrong (in @err). add: listen now; -1 on a bad spec
 * or address, the reason in @err.
 */
const char *tcp_forward_check(const char *spec, char *err, size_t err_len);
int tcp_forward_add(struct vsock_dev *d, const char *spec, char *err, size_t err_len);
void tcp_accept(struct vsock_dev *d, struct ep_src *src);
/* Before closing c's socket for a guest RST or an unanswered REQUEST: make the close a TCP RST. */
void tcp_guest_reset(struct conn *c);
void tcp_close_listeners(void);

/* seqpacket.c */
void seq_from_guest(struct vsock_dev *d, struct conn *c, const struct vq_elem *e, uint32_t len,
		    uint32_t flags);
bool seq_flush(struct vsock_dev *d, struct conn *c);
size_t seq_to_guest(struct vsock_dev *d, struct conn *c, const struct vq_elem *e);

/* guest_tx.c: one pass over the guest's TX queue */
void guest_tx_process(struct vsock_dev *d);

/* guest_rx.c */
/* Write a packet header into chain e; returns its length. */
size_t rx_fill_hdr(struct vsock_dev *d, const struct vq_elem *e, uint32_t host_port,
		   uint32_t guest_port, uint16_t type, uint16_t op, uint32_t flags, uint32_t len,
		   struct conn *c);

/* A TCP client's reset seen as @err on @c: count it once (tcp_front.c). */
void tcp_note_reset(struct conn *c, int err);
/* After EPOLLERR/HUP on a TCP connection: did the client reset it? */
bool tcp_reset_seen(struct conn *c);

#endif
