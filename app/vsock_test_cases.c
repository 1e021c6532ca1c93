// SPDX-License-Identifier: MIT
/*
 * vsock_test's cases (Linux 6.12's tools/testing/vsock/vsock_test.c, in
 * its order), ringside's half of each. A half is a list of steps: the
 * run (vsock_test.c) calls it with t->pc, the step in progress, until it
 * says VT_END or VT_FAIL; a step that cannot finish yet says VT_WAIT and
 * is called again when one of the case's sockets or the control
 * connection changed, or the clock moved. Each half does on ringside's
 * sockets what vsock_test's does on Linux's, and checks what the wire let
 * it see: the same lines, bytes, ends and errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "app/vsock_test.h"
#include "kernel/time.h"

#define STREAM VSOCK_TYPE_STREAM
#define SEQPACKET VSOCK_TYPE_SEQPACKET
#define MS 1000000ULL
#define SEC 1000000000ULL
#define PAGE 4096 /* vsock_test's getpagesize() and PAGE_SIZE on x86_64 */

/* ---- vsock_test's util.c, on ringside's sockets ---- */

/* vsock_test's hash_djb2. */
static unsigned long hash_djb2(const uint8_t *p, size_t n)
{
	unsigned long h = 5381;

	while (n--)
		h = (h << 5) + h + *p++;
	return h;
}

/* The data vsock_test takes from rand(): any bytes do (xorshift64). */
static uint32_t rand32(struct vt_run *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return t->rng >> 16;
}

static const char *err_name(long err)
{
	switch (err) {
	case -EAGAIN:
		return "EAGAIN";
	case -EPIPE:
		return "EPIPE";
	case -ENOTCONN:
		return "ENOTCONN";
	case -EMSGSIZE:
		return "EMSGSIZE";
	case -ECONNREFUSED:
		return "ECONNREFUSED (RST)";
	case -ECONNRESET:
		return "ECONNRESET";
	case -ETIMEDOUT:
		return "ETIMEDOUT (no answer)";
	case -EPROTO:
		return "EPROTO";
	case 0:
		return "no error";
	default:
		return "an error";
	}
}

/* The case's buffer, zeroed: freed with the case (case_cleanup). */
static enum vt_status alloc_buf(struct vt_run *t, size_t len)
{
	free(t->buf);
	t->buf = calloc(1, len ? len : 1);
	if (!t->buf)
		return vt_fail(t, "no memory for %zu bytes", len);
	t->len = len;
	return VT_NEXT;
}

/*
 * vsock_test's vsock_accept(): listen on the peer port, write LISTENING,
 * take the first connection, close the listener. Into t->sock.
 */
static enum vt_status accept_on(struct vt_run *t, enum vsock_type type)
{
	enum vt_status r;

	if (t->sub == 0) {
		t->listener = vsock_listen(t->peer_port, type, 1);
		if (!t->listener)
			return vt_fail(t, "cannot listen on port %u", t->peer_port);
		vt_own(t->listener);
		t->sub = 1;
	}
	if (t->sub == 1) {
		r = vt_write(t, "LISTENING");
		if (r != VT_NEXT)
			return r;
		t->sub = 2;
	}
	t->sock = vsock_accept(t->listener);
	if (!t->sock)
		return VT_WAIT;
	vt_own(t->sock);
	vsock_close(t->listener);
	t->listener = NULL;
	return VT_NEXT;
}

/* Until t->sock's handshake is over: VT_NEXT connected, else why not. */
static enum vt_status connected(struct vt_run *t)
{
	switch (vsock_state(t->sock)) {
	case VSOCK_CONNECTING:
		return VT_WAIT;
	case VSOCK_CONNECTED:
		return VT_NEXT;
	default:
		return vt_fail(t, "connect to port %u failed: %s", t->peer_port,
			       err_name(vsock_error(t->sock)));
	}
}

/* A connection to the host's peer port, into t->sock. */
static enum vt_status dial(struct vt_run *t, enum vsock_type type)
{
	t->sock = vsock_connect(VSOCK_CID_HOST, t->peer_port, type);
	if (!t->sock)
		return vt_fail(t, "no socket to connect with");
	vt_own(t->sock);
	return VT_NEXT;
}

/* vsock_test's vsock_connect(): LISTENING from the peer, then connect. */
static enum vt_status connect_to(struct vt_run *t, enum vsock_type type)
{
	enum vt_status r;

	if (t->sub == 0) {
		r = vt_expect(t, "LISTENING");
		if (r != VT_NEXT)
			return r;
		t->sub = 1;
	}
	if (t->sub == 1) {
		r = dial(t, type);
		if (r != VT_NEXT)
			return r;
		t->sub = 2;
	}
	return connected(t);
}

/* A connect nobody accepts: the peer must answer with RST. */
static enum vt_status refused(struct vt_run *t)
{
	switch (vsock_state(t->sock)) {
	case VSOCK_CONNECTING:
		return VT_WAIT;
	case VSOCK_CONNECTED:
		return vt_fail(t, "connect succeeded, expected a reset");
	default:
		if (vsock_error(t->sock) != -ECONNREFUSED)
			return vt_fail(t, "connect failed with %s, expected a reset",
				       err_name(vsock_error(t->sock)));
		return VT_NEXT;
	}
}

static enum vt_status close_sock(struct vsock_sock **s)
{
	vsock_close(*s);
	*s = NULL;
	return VT_NEXT;
}

/* All of @len, as credit allows (SEQPACKET: one message). t->off: progress. */
static enum vt_status send_all(struct vt_run *t, struct vsock_sock *s, const void *buf, size_t len,
			       bool eor)
{
	ssize_t n;

	while (t->off < len) {
		n = vsock_send(s, (const uint8_t *)buf + t->off, len - t->off, eor);
		if (n == -EAGAIN || n == -ENOMEM)
			return VT_WAIT;
		if (n < 0)
			return vt_fail(t, "send of %zu bytes: %s after %zu", len, err_name(n),
				       t->off);
		t->off += n;
		t->step_start = now_ns(); /* progress: the step's limit starts again */
	}
	t->off = 0;
	return VT_NEXT;
}

static enum vt_status send_byte(struct vt_run *t, struct vsock_sock *s)
{
	return send_all(t, s, "A", 1, false);
}

/* A send of @len bytes of @buf that must fail at once with @err. */
static enum vt_status send_fails(struct vt_run *t, struct vsock_sock *s, long err, const void *buf,
				 size_t len)
{
	ssize_t n = vsock_send(s, buf, len, false);

	if (n != err)
		return vt_fail(t, "send of %zu bytes returned %zd (%s), expected %s", len, n,
			       n < 0 ? err_name(n) : "bytes", err_name(err));
	return VT_NEXT;
}

/* Exactly @len bytes into @dst (SEQPACKET: messages until they add up). */
static enum vt_status recv_exact(struct vt_run *t, struct vsock_sock *s, uint8_t *dst, size_t len)
{
	ssize_t n;

	while (t->off < len) {
		n = vsock_recv_msg(s, dst + t->off, len - t->off, NULL);
		if (n == -EAGAIN)
			return VT_WAIT;
		if (n == 0)
			return vt_fail(t, "EOF after %zu of %zu bytes", t->off, len);
		if (n < 0)
			return vt_fail(t, "receive: %s", err_name(n));
		t->off += n;
		t->step_start = now_ns();
	}
	t->off = 0;
	return VT_NEXT;
}

static enum vt_status recv_byte(struct vt_run *t, struct vsock_sock *s)
{
	uint8_t b = 0;
	enum vt_status r = recv_exact(t, s, &b, 1);

	if (r == VT_NEXT && b != 'A')
		return vt_fail(t, "unexpected byte read 0x%02x", b);
	return r;
}

/* A receive that returns 0: the peer sent everything it will. */
static enum vt_status recv_eof(struct vt_run *t, struct vsock_sock *s)
{
	uint8_t b;
	ssize_t n = vsock_recv_msg(s, &b, 1, NULL);

	if (n == -EAGAIN)
		return VT_WAIT;
	if (n)
		return vt_fail(t, "expected EOF, the receive returned %zd", n);
	return VT_NEXT;
}

/* vsock_wait_remote_close(): the peer's SHUTDOWN with SEND (EPOLLRDHUP), or its RST. */
static enum vt_status remote_closed(struct vt_run *t, struct vsock_sock *s)
{
	struct vsock_info in;

	vsock_get_info(s, &in);
	if (in.state == VSOCK_CLOSED || (in.peer_shutdown & VSOCK_SHUTDOWN_SEND))
		return VT_NEXT;
	return VT_WAIT;
}

/* poll() for POLLIN with SO_RCVLOWAT @n: @n bytes queued. */
static enum vt_status queued(struct vt_run *t, struct vsock_sock *s, size_t n)
{
	if (vsock_rx_queued(s) >= n)
		return VT_NEXT;
	if (vsock_done(s))
		return vt_fail(t, "EOF with %zu of %zu bytes queued", vsock_rx_queued(s), n);
	return VT_WAIT;
}

static enum vt_status set_buf(struct vt_run *t, struct vsock_sock *s, uint32_t bytes)
{
	if (vsock_set_buf_size(s, bytes))
		return vt_fail(t, "cannot set the buffer size to %u", bytes);
	return VT_NEXT;
}

static enum vt_status same(struct vt_run *t, const void *a, const void *b, size_t n,
			   const char *what)
{
	return memcmp(a, b, n) ? vt_fail(t, "%s data mismatch", what) : VT_NEXT;
}

/* Steps @first.. again while the counter is below @count, then on. */
static enum vt_status loop(struct vt_run *t, unsigned int first, unsigned int count)
{
	if (++t->i < count) {
		t->pc = first;
		return VT_JUMP;
	}
	t->i = 0;
	return VT_NEXT;
}

/* ---- 0 SOCK_STREAM connection reset (client only) ---- */

static enum vt_status reset_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return dial(t, STREAM);
	case 1:
		return refused(t);
	case 2:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* ---- 1 SOCK_STREAM bind only ---- */

static enum vt_status bind_only_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return vt_expect(t, "BIND");
	case 1:
		return dial(t, STREAM);
	case 2:
		return refused(t);
	case 3:
		return vt_write(t, "DONE");
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* ringside has no bind without listen: its port simply has no listener. */
static enum vt_status bind_only_server(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return vt_write(t, "BIND");
	case 1:
		return vt_expect(t, "DONE");
	}
	return VT_END;
}

/* ---- 2 client close, 3 server close: one side sends a byte and closes ---- */

static enum vt_status send_and_close(struct vt_run *t, bool accept)
{
	switch (t->pc) {
	case 0:
		return accept ? accept_on(t, STREAM) : connect_to(t, STREAM);
	case 1:
		return send_byte(t, t->sock);
	case 2:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* After the peer's close: EPIPE on send, its byte, then EOF. */
static enum vt_status see_close(struct vt_run *t, bool accept)
{
	switch (t->pc) {
	case 0:
		return accept ? accept_on(t, STREAM) : connect_to(t, STREAM);
	case 1:
		return remote_closed(t, t->sock);
	case 2:
		return send_fails(t, t->sock, -EPIPE, "A", 1);
	case 3:
		return recv_byte(t, t->sock);
	case 4:
		return recv_eof(t, t->sock);
	case 5:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status client_close_client(struct vt_run *t)
{
	return send_and_close(t, false);
}

static enum vt_status client_close_server(struct vt_run *t)
{
	return see_close(t, true);
}

static enum vt_status server_close_client(struct vt_run *t)
{
	return see_close(t, false);
}

static enum vt_status server_close_server(struct vt_run *t)
{
	return send_and_close(t, true);
}

/* ---- 4 SOCK_STREAM multiple connections ---- */

/* 100 connections, then a byte each way by turns; @odd_sends: who sends on odd ones. */
static enum vt_status multiconn(struct vt_run *t, bool accept)
{
	bool sends = (t->i % 2) == accept;

	switch (t->pc) {
	case 0:
		return accept ? accept_on(t, STREAM) : connect_to(t, STREAM);
	case 1:
		t->socks[t->i] = t->sock;
		t->sock = NULL;
		return loop(t, 0, VT_MULTICONN);
	case 2:
		return sends ? send_byte(t, t->socks[t->i]) : recv_byte(t, t->socks[t->i]);
	case 3:
		return loop(t, 2, VT_MULTICONN);
	case 4:
		close_sock(&t->socks[t->i]);
		return loop(t, 4, VT_MULTICONN);
	}
	return VT_END;
}

static enum vt_status multiconn_client(struct vt_run *t)
{
	return multiconn(t, false);
}

static enum vt_status multiconn_server(struct vt_run *t)
{
	return multiconn(t, true);
}

/* ---- 5 SOCK_STREAM MSG_PEEK, 15 SOCK_SEQPACKET MSG_PEEK ---- */

#define PEEK_LEN 64

static enum vt_status peek_client(struct vt_run *t, enum vsock_type type)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, type);
	case 1:
		if (alloc_buf(t, PEEK_LEN) != VT_NEXT)
			return VT_FAIL;
		for (size_t i = 0; i < PEEK_LEN; i++)
			t->buf[i] = rand32(t);
		return VT_NEXT;
	case 2:
		return vt_expect(t, "SRVREADY");
	case 3:
		return send_all(t, t->sock, t->buf, PEEK_LEN, false);
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/*
 * A peek of @len that must return @want: waits for that much (STREAM) or a
 * whole message (SEQPACKET), as Linux's blocking recv(MSG_PEEK) does.
 */
static enum vt_status peek_n(struct vt_run *t, uint8_t *dst, size_t len, size_t want,
			     size_t msg_len)
{
	struct vsock_msg m;
	ssize_t n;

	if (vsock_rx_queued(t->sock) < want)
		return queued(t, t->sock, want);
	n = vsock_peek_copy(t->sock, dst, len, &m);
	if (n == -EAGAIN)
		return VT_WAIT;
	if (n != (ssize_t)want || (msg_len && m.len != msg_len))
		return vt_fail(t, "peek of %zu returned %zd (message %zu), expected %zu (%zu)", len,
			       n, m.len, want, msg_len);
	return VT_NEXT;
}

static enum vt_status peek_server(struct vt_run *t, enum vsock_type type)
{
	uint8_t *half = t->buf, *peek = t->buf + PEEK_LEN, *normal = t->buf + 2 * PEEK_LEN;
	size_t msg = type == SEQPACKET ? PEEK_LEN : 0;
	ssize_t n;

	switch (t->pc) {
	case 0:
		return accept_on(t, type);
	case 1:
		if (alloc_buf(t, 3 * PEEK_LEN) != VT_NEXT)
			return VT_FAIL;
		/* a peek of an empty socket: nothing yet (MSG_DONTWAIT: EAGAIN) */
		n = vsock_peek_copy(t->sock, t->buf, PEEK_LEN, NULL);
		if (n != -EAGAIN)
			return vt_fail(t, "peek of an empty socket returned %zd", n);
		return VT_NEXT;
	case 2:
		return vt_write(t, "SRVREADY");
	case 3:
		return peek_n(t, half, PEEK_LEN / 2, PEEK_LEN / 2, msg);
	case 4:
		return peek_n(t, peek, PEEK_LEN, PEEK_LEN, msg);
	case 5:
		return same(t, half, peek, PEEK_LEN / 2, "partial peek");
	case 6:
		/* SEQPACKET: MSG_PEEK | MSG_TRUNC says the whole length */
		return msg ? peek_n(t, half, PEEK_LEN / 2, PEEK_LEN / 2, PEEK_LEN) : VT_NEXT;
	case 7:
		return recv_exact(t, t->sock, normal, PEEK_LEN);
	case 8:
		return same(t, peek, normal, PEEK_LEN, "full peek");
	case 9:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status stream_peek_client(struct vt_run *t)
{
	return peek_client(t, STREAM);
}

static enum vt_status stream_peek_server(struct vt_run *t)
{
	return peek_server(t, STREAM);
}

static enum vt_status seqpacket_peek_client(struct vt_run *t)
{
	return peek_client(t, SEQPACKET);
}

static enum vt_status seqpacket_peek_server(struct vt_run *t)
{
	return peek_server(t, SEQPACKET);
}

/* ---- 6 SOCK_SEQPACKET msg bounds ---- */

#define SOCK_BUF_SIZE (2u << 20)
#define MAX_MSG_SIZE (4 * PAGE)
#define MSG_COUNT (SOCK_BUF_SIZE / MAX_MSG_SIZE)

/*
 * Message t->i: small and big by turns, random bytes, MSG_EOR on the middle
 * one and at random. Both ends sum one per EOR and the djb2 of each
 * message, so the sums match only if every bound and EOR survived.
 */
static enum vt_status make_message(struct vt_run *t)
{
	size_t n = t->i & 1 ? PAGE + rand32(t) % (MAX_MSG_SIZE - PAGE) : 1 + rand32(t) % PAGE;

	memset(t->buf, rand32(t) & 0xff, n);
	t->len = n;
	t->eor = t->i == MSG_COUNT / 2 || (rand32(t) & 1);
	t->hash += t->eor + hash_djb2(t->buf, n);
	return VT_NEXT;
}

static enum vt_status msg_bounds_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, SEQPACKET);
	case 1:
		return set_buf(t, t->sock, SOCK_BUF_SIZE);
	case 2:
		return vt_expect(t, "SRVREADY");
	case 3:
		return alloc_buf(t, MAX_MSG_SIZE);
	case 4:
		return make_message(t);
	case 5:
		return send_all(t, t->sock, t->buf, t->len, t->eor);
	case 6:
		return loop(t, 4, MSG_COUNT);
	case 7:
		return vt_write(t, "SENDDONE");
	case 8:
		return vt_write_ulong(t, t->hash);
	case 9:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* Messages until EOF, each summed as make_message sums it. */
static enum vt_status recv_hashed(struct vt_run *t)
{
	struct vsock_msg m;
	ssize_t n;

	for (;;) {
		n = vsock_recv_msg(t->sock, t->buf, MAX_MSG_SIZE, &m);
		if (n == -EAGAIN)
			return VT_WAIT;
		if (n == 0)
			return VT_NEXT;
		if (n < 0)
			return vt_fail(t, "receive: %s", err_name(n));
		t->hash += m.eor + hash_djb2(t->buf, n);
		t->step_start = now_ns();
	}
}

static enum vt_status msg_bounds_server(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return accept_on(t, SEQPACKET);
	case 1:
		return set_buf(t, t->sock, SOCK_BUF_SIZE);
	case 2:
		return vt_write(t, "SRVREADY");
	case 3:
		return vt_expect(t, "SENDDONE");
	case 4:
		return alloc_buf(t, MAX_MSG_SIZE);
	case 5:
		return recv_hashed(t);
	case 6:
		return close_sock(&t->sock);
	case 7:
		return vt_read_ulong(t, &t->peer_hash);
	case 8:
		if (t->hash != t->peer_hash)
			return vt_fail(t, "message bounds broken: sum %lu, the peer's %lu", t->hash,
				       t->peer_hash);
		return VT_NEXT;
	}
	return VT_END;
}

/* ---- 7 SOCK_SEQPACKET MSG_TRUNC flag ---- */

#define TRUNC_LEN 32

static enum vt_status trunc_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, SEQPACKET);
	case 1:
		return alloc_buf(t, TRUNC_LEN);
	case 2:
		return send_all(t, t->sock, t->buf, TRUNC_LEN, false);
	case 3:
		return vt_write(t, "SENDDONE");
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status trunc_read(struct vt_run *t)
{
	struct vsock_msg m;
	ssize_t n = vsock_recv_msg(t->sock, t->buf, TRUNC_LEN / 2, &m);

	if (n == -EAGAIN)
		return VT_WAIT;
	if (n != TRUNC_LEN / 2 || m.len != TRUNC_LEN)
		return vt_fail(t, "a %u-byte read of a %u-byte message: %zd bytes, length %zu",
			       TRUNC_LEN / 2, TRUNC_LEN, n, m.len);
	return VT_NEXT;
}

static enum vt_status trunc_server(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return accept_on(t, SEQPACKET);
	case 1:
		return vt_expect(t, "SENDDONE");
	case 2:
		return alloc_buf(t, TRUNC_LEN / 2);
	case 3:
		return trunc_read(t);
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* ---- 8 SOCK_SEQPACKET timeout ---- */

#define RCVTIMEO_NS (1 * SEC)
#define READ_OVERHEAD_NS (250 * MS)

/* A read with SO_RCVTIMEO 1 s on a quiet socket: nothing, after 1 s and no more. */
static enum vt_status read_times_out(struct vt_run *t)
{
	uint64_t took = vt_step_ns(t);

	if (vsock_rx_queued(t->sock) || vsock_done(t->sock))
		return vt_fail(t, "the read got a message or EOF, expected a timeout");
	if (took < RCVTIMEO_NS)
		return vt_sleep(t, RCVTIMEO_NS);
	if (took - RCVTIMEO_NS > READ_OVERHEAD_NS)
		return vt_fail(t, "the timeout took %llu ms more than 1 s (at most %llu)",
			       (unsigned long long)((took - RCVTIMEO_NS) / MS),
			       READ_OVERHEAD_NS / MS);
	return VT_NEXT;
}

static enum vt_status timeout_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, SEQPACKET);
	case 1:
		return read_times_out(t);
	case 2:
		return vt_write(t, "WAITDONE");
	case 3:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* The peer's half of a case whose work is all on the other side: hold a connection until @line. */
static enum vt_status hold_until(struct vt_run *t, enum vsock_type type, const char *line)
{
	switch (t->pc) {
	case 0:
		return accept_on(t, type);
	case 1:
		return vt_expect(t, line);
	case 2:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status timeout_server(struct vt_run *t)
{
	return hold_until(t, SEQPACKET, "WAITDONE");
}

/* ---- 9 SOCK_SEQPACKET invalid receive buffer ---- */

#define INV_REC_LEN (3 * PAGE)

static enum vt_status invalid_rec_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, SEQPACKET);
	case 1:
		if (alloc_buf(t, INV_REC_LEN) != VT_NEXT)
			return VT_FAIL;
		memset(t->buf, 'a', INV_REC_LEN);
		return VT_NEXT;
	case 2:
		return send_all(t, t->sock, t->buf, INV_REC_LEN, false);
	case 3:
		memset(t->buf, 'b', INV_REC_LEN);
		return send_all(t, t->sock, t->buf, INV_REC_LEN, false);
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* ---- 10 SOCK_STREAM poll() + SO_RCVLOWAT ---- */

#define RCVLOWAT_LEN 128

static enum vt_status rcvlowat_server(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return accept_on(t, STREAM);
	case 1:
		return send_byte(t, t->sock);
	case 2:
		return vt_write(t, "SRVSENT");
	case 3:
		return vt_expect(t, "CLNSENT");
	case 4:
		return send_byte(t, t->sock);
	case 5:
		return loop(t, 4, RCVLOWAT_LEN - 1);
	case 6:
		return vt_expect(t, "POLLDONE");
	case 7:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* poll() with SO_RCVLOWAT for 1 s: not readable, one byte being fewer than the mark. */
static enum vt_status not_readable(struct vt_run *t)
{
	if (vsock_rx_queued(t->sock) >= RCVLOWAT_LEN || vsock_done(t->sock))
		return vt_fail(t, "readable with SO_RCVLOWAT %u: %zu bytes queued", RCVLOWAT_LEN,
			       vsock_rx_queued(t->sock));
	if (vt_step_ns(t) < SEC)
		return vt_sleep(t, SEC);
	return VT_NEXT;
}

static enum vt_status rcvlowat_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, STREAM);
	case 1:
		vsock_set_rcvlowat(t->sock, RCVLOWAT_LEN);
		return alloc_buf(t, RCVLOWAT_LEN);
	case 2:
		return vt_expect(t, "SRVSENT");
	case 3:
		return not_readable(t);
	case 4:
		return vt_write(t, "CLNSENT");
	case 5:
		return queued(t, t->sock, RCVLOWAT_LEN);
	case 6:
		return recv_exact(t, t->sock, t->buf, RCVLOWAT_LEN);
	case 7:
		return vt_write(t, "POLLDONE");
	case 8:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* ---- 11 SOCK_SEQPACKET big message ---- */

/* One byte more than our own buffer, which Linux's test takes for the peer's. */
static enum vt_status bigmsg_client(struct vt_run *t)
{
	struct vsock_info in;

	switch (t->pc) {
	case 0:
		return connect_to(t, SEQPACKET);
	case 1:
		vsock_get_info(t->sock, &in);
		return alloc_buf(t, (size_t)in.buf_alloc + 1);
	case 2:
		return send_fails(t, t->sock, -EMSGSIZE, t->buf, t->len);
	case 3:
		return vt_write(t, "CLISENT");
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status bigmsg_server(struct vt_run *t)
{
	return hold_until(t, SEQPACKET, "CLISENT");
}

/* ---- 12 SOCK_STREAM, 13 SOCK_SEQPACKET test invalid buffer ---- */

#define INV_BUF_LEN 512

static enum vt_status inv_buf_server(struct vt_run *t, enum vsock_type type)
{
	switch (t->pc) {
	case 0:
		return accept_on(t, type);
	case 1:
		return alloc_buf(t, INV_BUF_LEN);
	case 2:
		return send_all(t, t->sock, t->buf, INV_BUF_LEN, false);
	case 3:
		return vt_write(t, "SENDDONE");
	case 4:
		return vt_expect(t, "DONE");
	case 5:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status stream_inv_buf_server(struct vt_run *t)
{
	return inv_buf_server(t, STREAM);
}

static enum vt_status seqpacket_inv_buf_server(struct vt_run *t)
{
	return inv_buf_server(t, SEQPACKET);
}

/* ---- 14 SOCK_STREAM virtio skb merge ---- */

static enum vt_status skb_merge_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, STREAM);
	case 1:
		return send_all(t, t->sock, "HELLO", 5, false);
	case 2:
		return vt_write(t, "SEND0");
	case 3:
		return vt_expect(t, "REPLY0");
	case 4:
		return send_all(t, t->sock, "WORLD", 5, false);
	case 5:
		return vt_write(t, "SEND1");
	case 6:
		return vt_expect(t, "REPLY1");
	case 7:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status skb_merge_server(struct vt_run *t)
{
	ssize_t n;

	switch (t->pc) {
	case 0:
		return accept_on(t, STREAM);
	case 1:
		return vt_expect(t, "SEND0");
	case 2:
		return alloc_buf(t, 64);
	case 3:
		return recv_exact(t, t->sock, t->buf, 2);
	case 4:
		return vt_write(t, "REPLY0");
	case 5:
		return vt_expect(t, "SEND1");
	case 6:
		return recv_exact(t, t->sock, t->buf + 2, 8);
	case 7:
		n = vsock_peek_copy(t->sock, t->buf + 10, 54, NULL);
		if (n != -EAGAIN)
			return vt_fail(t, "%zd bytes more than HELLOWORLD", n);
		return same(t, t->buf, "HELLOWORLD", 10, "merged");
	case 8:
		return vt_write(t, "REPLY1");
	case 9:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* ---- 16 SOCK_STREAM SHUT_WR, 17 SOCK_STREAM SHUT_RD ---- */

static enum vt_status shutwr_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, STREAM);
	case 1:
		if (vsock_shutdown(t->sock, VSOCK_SHUTDOWN_SEND))
			return vt_fail(t, "shutdown failed");
		return VT_NEXT;
	case 2:
		return send_fails(t, t->sock, -EPIPE, "A", 1);
	case 3:
		return vt_write(t, "CLIENTDONE");
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status shutwr_server(struct vt_run *t)
{
	return hold_until(t, STREAM, "CLIENTDONE");
}

static enum vt_status shutrd_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, STREAM);
	case 1:
		return vt_expect(t, "SHUTRDDONE");
	case 2:
		return send_fails(t, t->sock, -EPIPE, "A", 1);
	case 3:
		return vt_write(t, "CLIENTDONE");
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status shutrd_server(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return accept_on(t, STREAM);
	case 1:
		if (vsock_shutdown(t->sock, VSOCK_SHUTDOWN_RCV))
			return vt_fail(t, "shutdown failed");
		return VT_NEXT;
	case 2:
		return vt_write(t, "SHUTRDDONE");
	case 3:
		return vt_expect(t, "CLIENTDONE");
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/* ---- 18 SOCK_STREAM, 19 SOCK_SEQPACKET MSG_ZEROCOPY: the receiving half ---- */

/* vsock_test_zerocopy.c's test_data_array: what each connection carries. */
static const struct zerocopy_data {
	size_t len;
	bool send_fails; /* sendmsg fails (ENOMEM): the sender's hash is 0 */
	bool stream_only;
} zerocopy_data[] = {
	{ .len = 2 * PAGE + 200 },
	{ .len = 6 * PAGE },
	{ .len = 48 * PAGE },
	{ .len = 2 * PAGE + 100 },
	{ .len = 3 * PAGE, .send_fails = true }, /* its middle page is unmapped */
	{ .len = PAGE },
	{ .len = 100 * PAGE, .stream_only = true }, /* SEQPACKET: EMSGSIZE instead */
};

#define ZEROCOPY_N (sizeof(zerocopy_data) / sizeof(zerocopy_data[0]))

/* Until the data's length is in or EOF, as the Linux half's read() loop. */
static enum vt_status read_upto(struct vt_run *t)
{
	ssize_t n;

	while (t->off < t->len) {
		n = vsock_recv_msg(t->sock, t->buf + t->off, t->len - t->off, NULL);
		if (n == -EAGAIN)
			return VT_WAIT;
		if (n <= 0)
			break;
		t->off += n;
		t->step_start = now_ns();
	}
	t->off = 0;
	return VT_NEXT;
}

static enum vt_status zerocopy_server(struct vt_run *t, enum vsock_type type)
{
	const struct zerocopy_data *d = &zerocopy_data[t->i];
	unsigned int n = type == STREAM ? ZEROCOPY_N : ZEROCOPY_N - 1; /* stream_only: last */

	switch (t->pc) {
	case 0:
		return accept_on(t, type);
	case 1:
		return alloc_buf(t, d->len);
	case 2:
		return read_upto(t);
	case 3:
		t->hash = d->send_fails ? 0 : hash_djb2(t->buf, d->len);
		return VT_NEXT;
	case 4:
		return vt_read_ulong(t, &t->peer_hash);
	case 5:
		if (t->hash != t->peer_hash)
			return vt_fail(t, "connection %u: hash mismatch", t->i);
		return vt_expect(t, "DONE");
	case 6:
		return close_sock(&t->sock);
	case 7:
		return loop(t, 0, n);
	}
	return VT_END;
}

static enum vt_status stream_zerocopy_server(struct vt_run *t)
{
	return zerocopy_server(t, STREAM);
}

static enum vt_status seqpacket_zerocopy_server(struct vt_run *t)
{
	return zerocopy_server(t, SEQPACKET);
}

static enum vt_status empty_errq_server(struct vt_run *t)
{
	return hold_until(t, STREAM, "DONE");
}

/* ---- 21 SOCK_STREAM double bind connect ---- */

static enum vt_status double_bind_server(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		t->listener = vsock_listen(t->peer_port, STREAM, 1);
		if (!t->listener)
			return vt_fail(t, "cannot listen on port %u", t->peer_port);
		vt_own(t->listener);
		return VT_NEXT;
	case 1:
		return vt_write(t, "LISTENING");
	case 2:
		t->socks[t->i] = vsock_accept(t->listener);
		if (!t->socks[t->i])
			return VT_WAIT;
		vt_own(t->socks[t->i]);
		return VT_NEXT;
	case 3:
		return remote_closed(t, t->socks[t->i]);
	case 4:
		return loop(t, 1, 2);
	case 5:
		return close_sock(&t->listener);
	}
	return VT_END;
}

/* Our SHUTDOWN both ways, as close() sends it, and the peer's RST back: the port is free. */
static enum vt_status shut_and_reset(struct vt_run *t)
{
	if (!t->sub) {
		vsock_shutdown(t->sock, VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
		t->sub = 1;
	}
	if (vsock_state(t->sock) != VSOCK_CLOSED)
		return VT_WAIT;
	return close_sock(&t->sock);
}

/* Both connections from the same port, peer_port + 1, one after the other. */
static enum vt_status double_bind_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return vt_expect(t, "LISTENING");
	case 1:
		t->sock =
			vsock_connect_from(VSOCK_CID_HOST, t->peer_port, STREAM, t->peer_port + 1);
		if (!t->sock)
			return vt_fail(t, "port %u is in use", t->peer_port + 1);
		vt_own(t->sock);
		return VT_NEXT;
	case 2:
		return connected(t);
	case 3:
		return shut_and_reset(t);
	case 4:
		return loop(t, 0, 2);
	}
	return VT_END;
}

/* ---- 22, 23 SOCK_STREAM virtio credit update + SO_RCVLOWAT / low rx_bytes ---- */

#define CREDIT_BUF (128u << 10)
#define MAX_PKT_BUF (64u << 10) /* VIRTIO_VSOCK_MAX_PKT_BUF_SIZE */

static enum vt_status credit_client(struct vt_run *t)
{
	switch (t->pc) {
	case 0:
		return connect_to(t, STREAM);
	case 1:
		return alloc_buf(t, CREDIT_BUF + 1);
	case 2:
		return recv_byte(t, t->sock);
	case 3:
		return send_all(t, t->sock, t->buf, CREDIT_BUF + 1, false);
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

/*
 * 128 KiB of buffer, all of it queued, 64 KiB read: the peer's last byte
 * comes only with the credit update the reader owes it, sent on the read
 * (@lowat_first: SO_RCVLOWAT set before, so the queue falls below it) or
 * on setting SO_RCVLOWAT after.
 */
static enum vt_status credit_server(struct vt_run *t, bool lowat_first)
{
	switch (t->pc) {
	case 0:
		return accept_on(t, STREAM);
	case 1:
		return set_buf(t, t->sock, CREDIT_BUF);
	case 2:
		if (lowat_first)
			vsock_set_rcvlowat(t->sock, MAX_PKT_BUF + 1);
		return send_byte(t, t->sock);
	case 3:
		return queued(t, t->sock, CREDIT_BUF);
	case 4:
		return alloc_buf(t, CREDIT_BUF);
	case 5:
		return recv_exact(t, t->sock, t->buf, MAX_PKT_BUF);
	case 6:
		if (!lowat_first)
			vsock_set_rcvlowat(t->sock, MAX_PKT_BUF + 1);
		return queued(t, t->sock, MAX_PKT_BUF + 1);
	case 7:
		return recv_exact(t, t->sock, t->buf, MAX_PKT_BUF + 1);
	case 8:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status credit_set_rcvlowat_server(struct vt_run *t)
{
	return credit_server(t, false);
}

static enum vt_status credit_low_rx_bytes_server(struct vt_run *t)
{
	return credit_server(t, true);
}

/* ---- 24 SOCK_STREAM, 25 SOCK_SEQPACKET ioctl(SIOCOUTQ): the receiving half ---- */

#define IOCTL_LEN 64

static enum vt_status unsent_server(struct vt_run *t, enum vsock_type type)
{
	switch (t->pc) {
	case 0:
		return accept_on(t, type);
	case 1:
		return alloc_buf(t, IOCTL_LEN);
	case 2:
		return recv_exact(t, t->sock, t->buf, IOCTL_LEN);
	case 3:
		return vt_write(t, "RECEIVED");
	case 4:
		return close_sock(&t->sock);
	}
	return VT_END;
}

static enum vt_status stream_unsent_server(struct vt_run *t)
{
	return unsent_server(t, STREAM);
}

static enum vt_status seqpacket_unsent_server(struct vt_run *t)
{
	return unsent_server(t, SEQPACKET);
}

/* ---- the table, in vsock_test's order ---- */

#define NO_EFAULT "ringside has one address space: no buffer a read cannot write, so no EFAULT"
#define NO_ZEROCOPY                                                                        \
	"ringside has no MSG_ZEROCOPY completions: no error queue (MSG_ERRQUEUE) tells a " \
	"sender its pages are free"
#define NO_ERRQUEUE "ringside has no error queue (MSG_ERRQUEUE)"
#define NO_SIOCOUTQ "ringside does not count a socket's bytes the device has not taken (SIOCOUTQ)"

#define HALVES(c, s) .half = { [VT_CLIENT] = (c), [VT_SERVER] = (s) }

const struct vt_case vt_cases[] = {
	{ "SOCK_STREAM connection reset", HALVES(reset_client, NULL) },
	{ "SOCK_STREAM bind only", HALVES(bind_only_client, bind_only_server),
	  .note[VT_SERVER] = "no bind without listen: the port has no listener, as a bound one" },
	{ "SOCK_STREAM client close", HALVES(client_close_client, client_close_server) },
	{ "SOCK_STREAM server close", HALVES(server_close_client, server_close_server) },
	{ "SOCK_STREAM multiple connections", HALVES(multiconn_client, multiconn_server) },
	{ "SOCK_STREAM MSG_PEEK", HALVES(stream_peek_client, stream_peek_server) },
	{ "SOCK_SEQPACKET msg bounds", HALVES(msg_bounds_client, msg_bounds_server) },
	{ "SOCK_SEQPACKET MSG_TRUNC flag", HALVES(trunc_client, trunc_server) },
	{ "SOCK_SEQPACKET timeout", HALVES(timeout_client, timeout_server) },
	{ "SOCK_SEQPACKET invalid receive buffer", HALVES(invalid_rec_client, NULL),
	  .na[VT_SERVER] = NO_EFAULT },
	{ "SOCK_STREAM poll() + SO_RCVLOWAT", HALVES(rcvlowat_client, rcvlowat_server) },
	{ "SOCK_SEQPACKET big message", HALVES(bigmsg_client, bigmsg_server) },
	{ "SOCK_STREAM test invalid buffer", HALVES(NULL, stream_inv_buf_server),
	  .na[VT_CLIENT] = NO_EFAULT },
	{ "SOCK_SEQPACKET test invalid buffer", HALVES(NULL, seqpacket_inv_buf_server),
	  .na[VT_CLIENT] = NO_EFAULT },
	{ "SOCK_STREAM virtio skb merge", HALVES(skb_merge_client, skb_merge_server) },
	{ "SOCK_SEQPACKET MSG_PEEK", HALVES(seqpacket_peek_client, seqpacket_peek_server) },
	{ "SOCK_STREAM SHUT_WR", HALVES(shutwr_client, shutwr_server),
	  .note[VT_CLIENT] = "no signals: EPIPE checked, SIGPIPE and MSG_NOSIGNAL have no "
			     "counterpart" },
	{ "SOCK_STREAM SHUT_RD", HALVES(shutrd_client, shutrd_server),
	  .note[VT_CLIENT] = "no signals: EPIPE checked, SIGPIPE and MSG_NOSIGNAL have no "
			     "counterpart" },
	{ "SOCK_STREAM MSG_ZEROCOPY", HALVES(NULL, stream_zerocopy_server),
	  .na[VT_CLIENT] = NO_ZEROCOPY },
	{ "SOCK_SEQPACKET MSG_ZEROCOPY", HALVES(NULL, seqpacket_zerocopy_server),
	  .na[VT_CLIENT] = NO_ZEROCOPY },
	{ "SOCK_STREAM MSG_ZEROCOPY empty MSG_ERRQUEUE", HALVES(NULL, empty_errq_server),
	  .na[VT_CLIENT] = NO_ERRQUEUE },
	{ "SOCK_STREAM double bind connect", HALVES(double_bind_client, double_bind_server) },
	{ "SOCK_STREAM virtio credit update + SO_RCVLOWAT",
	  HALVES(credit_client, credit_set_rcvlowat_server) },
	{ "SOCK_STREAM virtio credit update + low rx_bytes",
	  HALVES(credit_client, credit_low_rx_bytes_server) },
	{ "SOCK_STREAM ioctl(SIOCOUTQ) 0 unsent bytes", HALVES(NULL, stream_unsent_server),
	  .na[VT_CLIENT] = NO_SIOCOUTQ },
	{ "SOCK_SEQPACKET ioctl(SIOCOUTQ) 0 unsent bytes", HALVES(NULL, seqpacket_unsent_server),
	  .na[VT_CLIENT] = NO_SIOCOUTQ },
};

const unsigned int vt_n_cases = sizeof(vt_cases) / sizeof(vt_cases[0]);
