/* SPDX-License-Identifier: MIT */
/*
 * The vsock socket layer: connections, listeners, credit flow control,
 * stream and seqpacket. Transport independent: a transport (the
 * virtio-vsock driver, or a fake in unit tests) registers send/cid ops and
 * hands received packets up with vsock_rx(). Nothing here blocks; callers
 * poll for readiness from the one poll loop.
 */
#ifndef NET_VSOCK_VSOCK_H
#define NET_VSOCK_VSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/config.h"
#include "net/vsock/packet.h"

struct poll_ctx; /* kernel/poll.h: the socket layer schedules its owners' */

enum vsock_state {
	VSOCK_FREE,
	VSOCK_LISTEN,
	VSOCK_CONNECTING,
	VSOCK_CONNECTED,
	VSOCK_CLOSING, /* we sent SHUTDOWN on close, waiting for the peer */
	VSOCK_CLOSED, /* reset, refused or timed out; the owner still holds it */
};

struct vsock_transport {
	const char *name;
	uint64_t (*local_cid)(void);
	/*
	 * Send one packet; the transport owns it from here and frees it
	 * with vsock_pkt_free() once the device is done. Always takes it:
	 * control packets must not be lost, and data is only generated
	 * while tx_full() is false, which bounds what can queue up.
	 * Returns true when the packet went straight to the device and
	 * nothing waits in the transport's own queue: tx_full() is false
	 * then until the next send, so the socket layer does not ask it.
	 * False (queued, or dropped without a device) is always safe.
	 */
	bool (*send_pkt)(struct vsock_pkt *pkt);
	bool (*tx_full)(void);
	/*
	 * Optional. Called about once a second while a connect or a send
	 * waits on the device (@first: a new wait begins, only note where
	 * the device is): the transport says on the console, once, when the
	 * device holds buffers and completed none since the previous call,
	 * so a device that does not answer is named as such and not only
	 * seen as connect timeouts.
	 */
	void (*check_device)(bool first);
	/*
	 * Optional. Have the transport look at its device soon, off the
	 * data path (vsock_settle): the work no interrupt announces done,
	 * sent buffers taken back and the receive ring topped up, so a
	 * quiet guest shows every buffer posted.
	 */
	void (*settle)(void);
	/*
	 * The transport drops every packet whose dst_cid is not local_cid()
	 * before vsock_rx() (virtio-vsock: vsock_hdr_check), so the socket
	 * layer does not check it again. False: the socket layer checks.
	 */
	bool dst_cid_checked;
};

struct vsock_sock;

/* Counters every drop and protocol event ends up in (`stats`). */
struct vsock_counters {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	uint64_t rx_no_socket; /* answered with RST */
	uint64_t rx_rst_ignored; /* RST for no socket: never answered */
	uint64_t rx_bad_type; /* type does not match the socket's */
	uint64_t rx_bad_dst_cid; /* not addressed to our CID: dropped */
	uint64_t rx_bad_src_cid; /* not from the host, our only peer: dropped */
	uint64_t rx_over_credit; /* peer sent beyond the credit we gave */
	uint64_t rx_bad_op; /* op not valid in the socket's state */
	uint64_t rx_smallcopy; /* small payloads merged into the previous buffer */
	uint64_t rx_compacted; /* payloads moved out of a buffer far larger (socket.c) */
	uint64_t backlog_full; /* REQUEST refused: listener backlog full */
	uint64_t request_no_socket; /* REQUEST refused: socket table full */
	uint64_t credit_updates_sent, credit_requests_sent;
	uint64_t credit_updates_rcvd, credit_requests_rcvd;
	uint64_t rst_sent, close_timeouts, connect_timeouts;
	uint64_t tx_full; /* send refused: transport queue full */
	uint64_t transport_resets;
};

/* buf_alloc: the receive space each socket advertises (socket.c). */
extern struct config_key cfg_vsock_buf;

void vsock_init(const struct vsock_transport *t);
/*
 * Hand one received packet up. NULL: the socket layer keeps it. Else the
 * packet comes back, nothing in it kept (a control packet, a payload
 * copied or dropped): the transport posts it again as a receive buffer
 * or frees it. A peer's control packets then cost no refill: the Linux
 * host sends a credit update each time its reader empties its queue, in
 * a ping-pong one per round trip.
 */
struct vsock_pkt *vsock_rx(struct vsock_pkt *pkt);
/* The transport was reset (5.10.6.7): connections go, listeners stay. */
void vsock_transport_reset(void);
/*
 * Timers: connect and close timeouts. Returns the next deadline
 * (UINT64_MAX: none).
 */
uint64_t vsock_poll(void);

/* What one pass of the loop needs from the socket layer, in one call. */
struct vsock_pass {
	uint64_t next_timer; /* vsock_poll() */
	/*
	 * Something an application may act on changed since the last pass:
	 * a packet received, a timer fired, a transport reset, or TX room
	 * back after a send found the transport full.
	 */
	bool changed;
	unsigned int accept_queued; /* vsock_accept_queued() */
	bool again; /* a timer or a wait for TX room */
	bool tx_wait; /* a send waits for TX room: nothing announces it, look every pass */
};

/*
 * vsock_poll(), the changes and the rest of struct vsock_pass at once;
 * false (and @p untouched) when no timer runs, no send waits for TX room
 * and nothing changed or is ready: the loop's usual pass.
 */
bool vsock_poll_pass(struct vsock_pass *p);

/*
 * The poll context that runs vsock_poll_pass() (net/vsock/poller.c;
 * unit tests: theirs, or none, and they run the pass themselves). It is
 * scheduled whenever the pass may have something new to say: a reset,
 * the first timer, a send that found no TX room, vsock_set_ready.
 */
void vsock_set_pass(struct poll_ctx *ctx);

/* Puts vsock_poll_pass() into the poll loop (poller.c). */
void vsock_poller_init(void);
/* Ask the transport for a look at its device (its settle op), for a quiet snapshot. */
void vsock_settle(void);
const struct vsock_counters *vsock_counters(void);
uint64_t vsock_local_cid(void);

struct vsock_sock *vsock_listen(uint32_t port, enum vsock_type type, unsigned int backlog);
struct vsock_sock *vsock_accept(struct vsock_sock *listener);
/* Connections waiting in all listeners' accept queues together. */
unsigned int vsock_accept_queued(void);
/* Starts the handshake; check vsock_state() until CONNECTED or CLOSED. */
struct vsock_sock *vsock_connect(uint64_t cid, uint32_t port, enum vsock_type type);
/* The same from local port @local (bind, then connect); NULL while @local is in use. */
struct vsock_sock *vsock_connect_from(uint64_t cid, uint32_t port, enum vsock_type type,
				      uint32_t local);

/*
 * Send up to @len bytes as far as the peer's credit and the transport
 * allow. Returns bytes taken (possibly fewer), -EAGAIN, or -EPIPE/-ENOTCONN.
 * SEQPACKET: @eor ends the message with the last packet sent, and a message
 * is only sent whole: -EAGAIN until credit for all of it is there, -EMSGSIZE
 * if it can never fit.
 */
ssize_t vsock_send(struct vsock_sock *s, const void *buf, size_t len, bool eor);
/*
 * vsock_send without the copy (STREAM only): the packets point at @buf,
 * which must stay as it is for as long as the device may read it (data
 * that never changes, like the source service's pattern). -EINVAL for
 * SEQPACKET.
 */
ssize_t vsock_send_static(struct vsock_sock *s, const void *buf, size_t len);
/*
 * STREAM: send the next received packet back to the peer in its own
 * buffer (an echo without copy or allocation), when it is unread and the
 * peer has credit for all of it. Returns the bytes sent and read,
 * -ENODATA when nothing is queued, 0 when the packet cannot go this way
 * (partly read, SEQPACKET, short of credit: use vsock_peek and
 * vsock_send), or -EAGAIN/-EPIPE/-ENOTCONN as vsock_send.
 */
ssize_t vsock_send_rx_head(struct vsock_sock *s);
/* Bytes vsock_send could take now. */
size_t vsock_send_space(struct vsock_sock *s);

/*
 * Zero-copy receive: the next run of received bytes (one packet's worth),
 * then vsock_consume() what was used. *eor: the run ends a message.
 * Returns 0 when nothing is queued.
 */
size_t vsock_peek(struct vsock_sock *s, const uint8_t **data, bool *eor);
void vsock_consume(struct vsock_sock *s, size_t n);
/*
 * Copying receive; 0 when nothing is queued (check vsock_eof()).
 * SEQPACKET: one message per call, only once it is whole; *eor is set. A
 * message longer than @len is truncated to @len and its rest discarded.
 */
ssize_t vsock_recv(struct vsock_sock *s, void *buf, size_t len, bool *eor);
size_t vsock_rx_queued(const struct vsock_sock *s);

/* What a receive says about the message (SEQPACKET) it read or peeked. */
struct vsock_msg {
	size_t len; /* its whole length, more than returned when it did not fit (MSG_TRUNC) */
	bool eor; /* it ends a record: the sender's MSG_EOR */
};

/*
 * MSG_PEEK: copy up to @len received bytes without reading them. STREAM:
 * what is queued, across packets. SEQPACKET: the start of the first whole
 * message. Returns the bytes copied, -EAGAIN when nothing is queued yet,
 * 0 at EOF (vsock_eof). @m (may be NULL): the message's length and EOR.
 */
ssize_t vsock_peek_copy(const struct vsock_sock *s, void *buf, size_t len, struct vsock_msg *m);
/* vsock_recv with vsock_peek_copy's returns and @m. */
ssize_t vsock_recv_msg(struct vsock_sock *s, void *buf, size_t len, struct vsock_msg *m);

/*
 * SO_VM_SOCKETS_BUFFER_SIZE: the receive space @s advertises (buf_alloc),
 * within the vsock_buf key's bounds (else -EINVAL); the peer hears of it
 * at once. A listener's passes to the connections it accepts.
 */
int vsock_set_buf_size(struct vsock_sock *s, uint32_t bytes);
/*
 * SO_RCVLOWAT: the reader waits for @bytes at once. A read that leaves
 * fewer queued, and setting it while fewer are, send the peer a credit
 * update when it has not heard of every byte read, whatever the credit
 * key says (Linux's rule: a sender waiting for credit sends the rest).
 * 0: unset.
 */
void vsock_set_rcvlowat(struct vsock_sock *s, uint32_t bytes);
/* The peer will send no more and everything it sent was read. */
bool vsock_eof(const struct vsock_sock *s);
/* Nothing more will happen on @s: CLOSED, or vsock_eof(); one call for both. */
bool vsock_done(const struct vsock_sock *s);

int vsock_shutdown(struct vsock_sock *s, uint32_t how); /* VSOCK_SHUTDOWN_* */
/* Give the socket up: SHUTDOWN now, RST if the peer does not finish in time. */
void vsock_close(struct vsock_sock *s);

enum vsock_state vsock_state(const struct vsock_sock *s);
int vsock_error(const struct vsock_sock *s); /* why CLOSED: -ECONNRESET, ... */
const char *vsock_state_name(enum vsock_state st);

/*
 * Readiness, so an application serves only the sockets that changed: it
 * hands its sockets to its owner, a struct vsock_owner naming its poll
 * context, with a pointer of its own (its connection). An owned socket
 * goes on its owner's ready list, once until taken, and the owner's
 * context is scheduled, when a packet arrives for it (data, credit, a
 * state change, EOF), a timer or reset closes it, TX room or packet
 * memory returns after a send found none, or, for a listener, a
 * connection waits to be accepted. Closing it takes it off for good; a
 * NULL @owner leaves it untracked. The socket layer, its owners and
 * their contexts are CPU 0's.
 */
struct vsock_owner {
	struct poll_ctx *ctx;
	/* the socket layer's: the ready list */
	struct vsock_sock *ready_head, *ready_tail;
};

void vsock_set_owner(struct vsock_sock *s, struct vsock_owner *owner, void *ctx);
void *vsock_owner(const struct vsock_sock *s);
/* Queue @s as if it changed (an owner that must come back to it). */
void vsock_set_ready(struct vsock_sock *s);
/*
 * The next ready socket of @owner, off the list (NULL: none); *@ctx (if
 * not NULL) gets its vsock_owner(), so the owner needs no second call.
 */
struct vsock_sock *vsock_take_ready(struct vsock_owner *owner, void **ctx);
/* How many of @owner's sockets are ready now. */
unsigned int vsock_ready_count(const struct vsock_owner *owner);

/* Per-socket numbers for `vsock` and the services. */
struct vsock_info {
	enum vsock_state state;
	enum vsock_type type;
	uint32_t local_port, peer_port;
	uint64_t peer_cid;
	uint32_t buf_alloc, fwd_cnt, rx_queued;
	uint32_t peer_buf_alloc, peer_fwd_cnt, tx_cnt, peer_free;
	uint64_t rx_bytes, tx_bytes;
	uint32_t accept_queue;
	uint32_t peer_shutdown; /* VSOCK_SHUTDOWN_* the peer sent */
	uint32_t rcvlowat;
	const struct vsock_owner *owner; /* the owner it is handed to; NULL: nobody's */
	bool on_ready, on_tx_wait; /* queued for its owner, for TX room */
};

void vsock_get_info(const struct vsock_sock *s, struct vsock_info *info);
/* Iterate all live sockets: pass NULL first. */
struct vsock_sock *vsock_next(struct vsock_sock *prev);

#endif
