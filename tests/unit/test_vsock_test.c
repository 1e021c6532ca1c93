// SPDX-License-Identifier: MIT
/*
 * ringside's half of the kernel's vsock_test (app/vsock_test.c,
 * app/vsock_test_cases.c) over the real socket layer, a fake transport
 * playing the host. The host here is a small model of Linux's sockets at
 * the wire (hsock below: connections, credit, SHUTDOWN and RST, SEQPACKET
 * message ends) running vsock_test's other half of every case, step for
 * step as tools/testing/vsock/vsock_test.c does it, with the control
 * connection on one more of its sockets. The guest runs when the host
 * pumps, through the real poll loop (kernel/poll.c): the service's
 * context runs only when the socket layer or its own time scheduled it.
 * The clock jumps to the guest's next time when nothing else can happen,
 * as an idle loop sleeps until its deadline.
 *
 * Each case runs alone in each role (the host says SKIP to the others),
 * then every case in one run per role; and a control line that is wrong,
 * out of order, too long, missing or cut off ends the run with one clear
 * error and the guest back to waiting for the next run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_transport.h"
#include "host_peer.h"
#include "kernel/config.h"
#include "stub_kernel.h"

#include "app/vsock_test.c"

/* What the service prints (its console): stdout, kept in memory during a test. */
static FILE *real_stdout;
static char *printed;
static size_t printed_len;

static const char *output(void)
{
	fflush(stdout);
	return printed ? printed : "";
}

#define out_text output()

/* ---- the loop and the shell, as the service sees them ---- */

static uint64_t fake_now = 1000;
static uint64_t vsock_next_timer = UINT64_MAX; /* the socket layer's, vsock_poll() */

uint64_t now_ns(void)
{
	return fake_now;
}

void shell_register(const struct shell_cmd *cmd)
{
}

int shell_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("error: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	return -1;
}

/* ---- the host: Linux's sockets as the wire shows them ---- */

#define HOST_CID HOST_PEER_CID
#define CTL_PORT 1238
#define PEER 1240 /* vsock_test_peer_port's default */
#define HOST_CTL_PORT 7777 /* the host's control port in the client role */
#define MAX_HSOCKS 256
#define MAX_CHUNK 4096 /* a payload per packet, as a 4 KiB RX buffer holds */
#define MAX_MSGS 512
#define KIB 1024u

struct hchunk {
	uint8_t *data;
	uint32_t len, flags;
	struct hchunk *next;
};

struct hsock {
	bool used, listening, connected, reset;
	uint16_t type;
	uint32_t hport, gport;
	uint32_t guest_shut; /* SHUTDOWN flags the guest sent */
	struct hsock *accepted[VT_MULTICONN + 2]; /* a listener's queue */
	unsigned int n_accepted;
	/* from the guest: bytes, and (SEQPACKET) where each message ends */
	uint8_t *rx;
	size_t rx_len, rx_read, rx_cap;
	size_t msg_end[MAX_MSGS];
	bool msg_eor[MAX_MSGS];
	unsigned int n_msgs, msgs_read;
	uint32_t buf_alloc, fwd_cnt; /* ours */
	uint32_t g_buf_alloc, g_fwd_cnt, tx_cnt; /* the guest's credit for us */
	struct hchunk *q, *q_tail; /* what we send, waiting for credit */
};

static struct hsock hs[MAX_HSOCKS];
static struct hsock *ctl;
static uint32_t next_hport = 50000;

static struct hsock *hs_new(uint32_t hport, uint32_t gport, uint16_t type)
{
	for (unsigned int i = 0; i < MAX_HSOCKS; i++) {
		if (!hs[i].used) {
			memset(&hs[i], 0, sizeof(hs[i]));
			hs[i].used = true;
			hs[i].hport = hport;
			hs[i].gport = gport;
			hs[i].type = type;
			hs[i].buf_alloc = 256 * KIB;
			return &hs[i];
		}
	}
	fail_msg("more host sockets than %u", MAX_HSOCKS);
	return NULL;
}

static void hs_free(struct hsock *s)
{
	while (s->q) {
		struct hchunk *c = s->q;

		s->q = c->next;
		free(c->data);
		free(c);
	}
	free(s->rx);
	memset(s, 0, sizeof(*s));
}

static void host_out(struct hsock *s, uint16_t op, uint32_t flags, const void *data, uint32_t len)
{
	host_pkt_deliver(&(struct host_pkt){ .src_port = s->hport,
					     .dst_port = s->gport,
					     .type = s->type,
					     .op = op,
					     .flags = flags,
					     .data = data,
					     .len = len,
					     .buf_alloc = s->buf_alloc,
					     .fwd_cnt = s->fwd_cnt });
}

/* An RST for a packet no socket of ours takes (Linux answers every one but an RST). */
static void host_rst_for(const struct virtio_vsock_hdr *h)
{
	if (h->op == VSOCK_OP_RST)
		return;
	host_pkt_deliver(&(struct host_pkt){ .src_port = h->dst_port,
					     .dst_port = h->src_port,
					     .type = h->type,
					     .op = VSOCK_OP_RST });
}

static struct hsock *find_conn(uint32_t hport, uint32_t gport)
{
	for (unsigned int i = 0; i < MAX_HSOCKS; i++)
		if (hs[i].used && !hs[i].listening && !hs[i].reset && hs[i].hport == hport &&
		    hs[i].gport == gport)
			return &hs[i];
	return NULL;
}

static struct hsock *find_listener(uint32_t hport, uint16_t type)
{
	for (unsigned int i = 0; i < MAX_HSOCKS; i++)
		if (hs[i].used && hs[i].listening && hs[i].hport == hport && hs[i].type == type)
			return &hs[i];
	return NULL;
}

static void rx_append(struct hsock *s, const struct vsock_pkt *p)
{
	if (s->rx_len + p->hdr.len > s->rx_cap) {
		s->rx_cap = (s->rx_len + p->hdr.len) * 2 + 4096;
		s->rx = realloc(s->rx, s->rx_cap);
	}
	memcpy(s->rx + s->rx_len, p->ext ? p->ext : p->data, p->hdr.len);
	s->rx_len += p->hdr.len;
	if (s->type == VSOCK_TYPE_SEQPACKET && (p->hdr.flags & VSOCK_SEQ_EOM)) {
		assert_true(s->n_msgs < MAX_MSGS);
		s->msg_end[s->n_msgs] = s->rx_len;
		s->msg_eor[s->n_msgs++] = p->hdr.flags & VSOCK_SEQ_EOR;
	}
}

/* A packet the guest sent, as Linux's virtio_transport_recv_pkt takes it. */
static void host_take(const struct vsock_pkt *p)
{
	const struct virtio_vsock_hdr *h = &p->hdr;
	struct hsock *s = find_conn(h->dst_port, h->src_port), *l;

	assert_int_equal(h->src_cid, GUEST_CID);
	assert_int_equal(h->dst_cid, HOST_CID);
	if (!s) {
		l = h->op == VSOCK_OP_REQUEST ? find_listener(h->dst_port, h->type) : NULL;
		if (!l) {
			host_rst_for(h);
			return;
		}
		s = hs_new(h->dst_port, h->src_port, h->type);
		s->connected = true;
		s->g_buf_alloc = h->buf_alloc;
		s->g_fwd_cnt = h->fwd_cnt;
		l->accepted[l->n_accepted++] = s;
		host_out(s, VSOCK_OP_RESPONSE, 0, NULL, 0);
		return;
	}
	s->g_buf_alloc = h->buf_alloc;
	s->g_fwd_cnt = h->fwd_cnt;
	switch (h->op) {
	case VSOCK_OP_RESPONSE:
		s->connected = true;
		break;
	case VSOCK_OP_RST:
		s->reset = true;
		s->connected = false;
		break;
	case VSOCK_OP_SHUTDOWN:
		s->guest_shut |= h->flags;
		/* Linux: both ways shut and nothing left to read, it resets */
		if (s->guest_shut == (VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND) &&
		    s->rx_read == s->rx_len) {
			host_out(s, VSOCK_OP_RST, 0, NULL, 0);
			s->reset = true;
		}
		break;
	case VSOCK_OP_RW:
		rx_append(s, p);
		break;
	case VSOCK_OP_CREDIT_REQUEST:
		host_out(s, VSOCK_OP_CREDIT_UPDATE, 0, NULL, 0);
		break;
	default:
		break;
	}
}

static uint32_t guest_credit(const struct hsock *s)
{
	uint32_t in_flight = s->tx_cnt - s->g_fwd_cnt;

	return in_flight >= s->g_buf_alloc ? 0 : s->g_buf_alloc - in_flight;
}

/* Send what the guest has credit for; true if anything went. */
static bool flush(struct hsock *s)
{
	bool moved = false;

	while (s->q && !s->reset && s->q->len <= guest_credit(s)) {
		struct hchunk *c = s->q;

		host_out(s, VSOCK_OP_RW, c->flags, c->data, c->len);
		s->tx_cnt += c->len;
		s->q = c->next;
		if (!s->q)
			s->q_tail = NULL;
		free(c->data);
		free(c);
		moved = true;
	}
	return moved;
}

/* ---- the pump: the guest's packets to the host, the host's to the guest, the guest's loop ---- */

static bool pump_once(void)
{
	bool moved = false;

	while (n_sent) {
		struct vsock_pkt *batch[MAX_SENT];
		unsigned int n = n_sent;

		memcpy(batch, sent, n * sizeof(batch[0]));
		n_sent = 0;
		for (unsigned int i = 0; i < n; i++) {
			host_take(batch[i]);
			vsock_pkt_free(batch[i]);
		}
		moved = true;
	}
	for (unsigned int i = 0; i < MAX_HSOCKS; i++)
		if (hs[i].used)
			moved |= flush(&hs[i]);
	moved |= poll_once() != 0;
	vsock_next_timer = vsock_poll();
	return moved || n_sent;
}

static void pump(void)
{
	for (int i = 0; i < 100000 && pump_once(); i++)
		;
}

/*
 * Until @done(@s), the clock jumping to the guest's next wake-up when
 * nothing moves: the guest is waiting for time (or for the host, and then
 * its own limit ends the wait, which the checks see).
 */
static bool pump_until(bool (*done)(struct hsock *s, size_t n), struct hsock *s, size_t n)
{
	for (int jumps = 0; jumps < 100; jumps++) {
		uint64_t next;

		pump();
		if (done(s, n))
			return true;
		next = poll_next_due() < vsock_next_timer ? poll_next_due() : vsock_next_timer;
		if (next == UINT64_MAX || next <= fake_now)
			return false;
		fake_now = next;
	}
	return false;
}

static bool has_bytes(struct hsock *s, size_t n)
{
	if (s->type == VSOCK_TYPE_SEQPACKET)
		return s->n_msgs > s->msgs_read;
	return s->rx_len - s->rx_read >= n || s->reset || (s->guest_shut & VSOCK_SHUTDOWN_SEND);
}

static bool has_line(struct hsock *s, size_t n)
{
	return memchr(s->rx + s->rx_read, '\n', s->rx_len - s->rx_read) || s->reset ||
	       (s->guest_shut & VSOCK_SHUTDOWN_SEND);
}

static bool has_conn(struct hsock *s, size_t n)
{
	return s->n_accepted > n;
}

static bool is_connected(struct hsock *s, size_t n)
{
	return s->connected || s->reset;
}

static bool guest_closed(struct hsock *s, size_t n)
{
	return s->reset || (s->guest_shut & VSOCK_SHUTDOWN_SEND);
}

static bool queue_empty(struct hsock *s, size_t n)
{
	return !s->q || s->reset;
}

/* ---- the host's socket calls ---- */

/* Read @n bytes (consumed), the credit told at once. */
static void h_read(struct hsock *s, void *buf, size_t n)
{
	assert_true(s->rx_len - s->rx_read >= n);
	if (buf)
		memcpy(buf, s->rx + s->rx_read, n);
	s->rx_read += n;
	s->fwd_cnt += n;
	host_out(s, VSOCK_OP_CREDIT_UPDATE, 0, NULL, 0);
}

static void h_recv(struct hsock *s, void *buf, size_t n)
{
	if (!pump_until(has_bytes, s, n))
		fail_msg("the guest sent %zu of %zu bytes\n%s", s->rx_len - s->rx_read, n,
			 out_text);
	assert_true(s->rx_len - s->rx_read >= n);
	h_read(s, buf, n);
}

/* The next SEQPACKET message: its length, its bytes in @buf (up to @cap), its EOR. */
static size_t h_recv_msg(struct hsock *s, void *buf, size_t cap, bool *eor)
{
	size_t len;

	if (!pump_until(has_bytes, s, 0))
		fail_msg("no message from the guest\n%s", out_text);
	assert_true(s->n_msgs > s->msgs_read);
	len = s->msg_end[s->msgs_read] - s->rx_read;
	assert_true(len <= cap);
	if (eor)
		*eor = s->msg_eor[s->msgs_read];
	h_read(s, buf, len);
	s->msgs_read++;
	return len;
}

/* Everything queued, as Linux's blocking send() returns once it is. */
static void h_send(struct hsock *s, const void *data, size_t len, uint32_t flags)
{
	const uint8_t *p = data;
	size_t off = 0;

	do {
		struct hchunk *c = calloc(1, sizeof(*c));
		uint32_t n = len - off > MAX_CHUNK ? MAX_CHUNK : len - off;

		c->data = malloc(n ? n : 1);
		memcpy(c->data, p + off, n);
		c->len = n;
		off += n;
		if (s->type == VSOCK_TYPE_SEQPACKET && off == len)
			c->flags = VSOCK_SEQ_EOM | flags;
		if (s->q_tail)
			s->q_tail->next = c;
		else
			s->q = c;
		s->q_tail = c;
	} while (off < len);
	if (!pump_until(queue_empty, s, 0))
		fail_msg("the guest gave no credit for %zu bytes\n%s", len, out_text);
}

static void h_set_buf(struct hsock *s, uint32_t bytes)
{
	s->buf_alloc = bytes;
	host_out(s, VSOCK_OP_CREDIT_UPDATE, 0, NULL, 0);
	pump();
}

static void h_shutdown(struct hsock *s, uint32_t how)
{
	host_out(s, VSOCK_OP_SHUTDOWN, how, NULL, 0);
	pump();
}

/* close(): SHUTDOWN both ways (an RST if the guest finished already), gone. */
static void h_close(struct hsock *s)
{
	if (!s->listening && !s->reset)
		host_out(s,
			 s->guest_shut == (VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND) ?
				 VSOCK_OP_RST :
				 VSOCK_OP_SHUTDOWN,
			 VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND, NULL, 0);
	hs_free(s);
	pump();
}

static struct hsock *h_dial(uint32_t gport, uint16_t type, uint32_t hport)
{
	struct hsock *s = hs_new(hport ? hport : next_hport++, gport, type);

	host_out(s, VSOCK_OP_REQUEST, 0, NULL, 0);
	assert_true(pump_until(is_connected, s, 0));
	return s;
}

static struct hsock *h_listen(uint32_t port, uint16_t type)
{
	struct hsock *l = hs_new(port, 0, type);

	l->listening = true;
	return l;
}

static struct hsock *h_take(struct hsock *l)
{
	if (!pump_until(has_conn, l, l->n_accepted ? l->n_accepted - 1 : 0) && !l->n_accepted)
		fail_msg("the guest did not connect\n%s", out_text);
	assert_true(l->n_accepted > 0);
	return l->accepted[--l->n_accepted];
}

/* ---- the control connection, vsock_test's control.c ---- */

static void ctl_send(const char *line)
{
	/* as control_writeln: the text (MSG_MORE), then the newline */
	h_send(ctl, line, strlen(line), 0);
	h_send(ctl, "\n", 1, 0);
}

static void ctl_send_ulong(unsigned long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lu", v);
	ctl_send(num);
}

/* The guest's next line; NULL if the control connection ended first. */
static const char *ctl_line(void)
{
	static char line[VT_LINE_MAX + 2];
	uint8_t *nl;
	size_t n;

	pump_until(has_line, ctl, 0);
	nl = memchr(ctl->rx + ctl->rx_read, '\n', ctl->rx_len - ctl->rx_read);
	if (!nl)
		return NULL;
	n = nl - (ctl->rx + ctl->rx_read);
	assert_true(n <= VT_LINE_MAX);
	h_read(ctl, line, n + 1);
	line[n] = '\0';
	return line;
}

static void ctl_expect(const char *want)
{
	const char *got = ctl_line();

	if (!got || strcmp(got, want))
		fail_msg("expected \"%s\" from the guest, got %s%s%s\n%s", want, got ? "\"" : "",
			 got ? got : "nothing", got ? "\"" : "", out_text);
}

static unsigned long ctl_ulong(void)
{
	const char *got = ctl_line();

	assert_non_null(got);
	return strtoul(got, NULL, 10);
}

/* vsock_test's vsock_connect() and vsock_accept(), the host's side of LISTENING. */
static struct hsock *h_connect(uint16_t type)
{
	ctl_expect("LISTENING");
	return h_dial(PEER, type, 0);
}

static struct hsock *h_accept(uint16_t type)
{
	struct hsock *l = h_listen(PEER, type), *s;

	ctl_send("LISTENING");
	s = h_take(l);
	hs_free(l);
	return s;
}

static void h_wait_remote_close(struct hsock *s)
{
	if (!pump_until(guest_closed, s, 0))
		fail_msg("the guest did not close\n%s", out_text);
}

static unsigned long djb2(const uint8_t *p, size_t n)
{
	unsigned long h = 5381;

	while (n--)
		h = (h << 5) + h + *p++;
	return h;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

#define STREAM VSOCK_TYPE_STREAM
#define SEQ VSOCK_TYPE_SEQPACKET

/* ---- vsock_test's halves, the host's: the client ones (guest: server) ---- */

static void lc_connection_reset(void)
{
	struct hsock *s = h_dial(PEER, STREAM, 0);

	assert_true(s->reset);
	hs_free(s);
}

static void lc_bind_only(void)
{
	struct hsock *s;

	ctl_expect("BIND");
	s = h_dial(PEER, STREAM, 0);
	assert_true(s->reset);
	hs_free(s);
	ctl_send("DONE");
}

static void lc_client_close(void)
{
	struct hsock *s = h_connect(STREAM);

	h_send(s, "A", 1, 0);
	h_close(s);
}

static void lc_server_close(void)
{
	struct hsock *s = h_connect(STREAM);
	uint8_t b;

	h_wait_remote_close(s);
	h_recv(s, &b, 1);
	assert_int_equal(b, 'A');
	assert_true(s->rx_read == s->rx_len && guest_closed(s, 0));
	h_close(s);
}

static void lc_multiconn(void)
{
	struct hsock *s[VT_MULTICONN];
	uint8_t b;

	for (int i = 0; i < VT_MULTICONN; i++)
		s[i] = h_connect(STREAM);
	for (int i = 0; i < VT_MULTICONN; i++) {
		if (i % 2) {
			h_recv(s[i], &b, 1);
			assert_int_equal(b, 'A');
		} else {
			h_send(s[i], "A", 1, 0);
		}
	}
	for (int i = 0; i < VT_MULTICONN; i++)
		h_close(s[i]);
}

static void lc_peek(uint16_t type)
{
	struct hsock *s = h_connect(type);
	uint8_t buf[64];

	fill(buf, sizeof(buf), 5);
	ctl_expect("SRVREADY");
	h_send(s, buf, sizeof(buf), 0);
	h_close(s);
}

static void lc_stream_peek(void)
{
	lc_peek(STREAM);
}

/* vsock_test's msg bounds messages: small and big by turns, some with EOR. */
static unsigned long send_messages(struct hsock *s)
{
	static uint8_t buf[16 * KIB];
	unsigned long hash = 0;

	for (unsigned int i = 0; i < 128; i++) {
		size_t n = i & 1 ? 4096 + (i * 977) % (12 * KIB) : 1 + (i * 131) % 4096;
		bool eor = i == 64 || i % 3 == 0;

		memset(buf, i, n);
		h_send(s, buf, n, eor ? VSOCK_SEQ_EOR : 0);
		hash += eor + djb2(buf, n);
	}
	return hash;
}

static void lc_msg_bounds(void)
{
	struct hsock *s = h_connect(SEQ);
	unsigned long hash;

	h_set_buf(s, 2u << 20);
	ctl_expect("SRVREADY");
	hash = send_messages(s);
	ctl_send("SENDDONE");
	ctl_send_ulong(hash);
	h_close(s);
}

static void lc_trunc(void)
{
	struct hsock *s = h_connect(SEQ);
	uint8_t buf[32] = { 0 };

	h_send(s, buf, sizeof(buf), 0);
	ctl_send("SENDDONE");
	h_close(s);
}

static void lc_timeout(void)
{
	struct hsock *s = h_connect(SEQ);

	ctl_send("WAITDONE");
	h_close(s);
}

static void lc_rcvlowat(void)
{
	struct hsock *s = h_connect(STREAM);
	uint8_t buf[128];

	ctl_expect("SRVSENT");
	pump();
	assert_int_equal(s->rx_len - s->rx_read, 1);
	ctl_send("CLNSENT");
	h_recv(s, buf, sizeof(buf));
	for (int i = 0; i < 128; i++)
		assert_int_equal(buf[i], 'A');
	ctl_send("POLLDONE");
	h_close(s);
}

/* The host's own send fails at once (EMSGSIZE): nothing on the wire. */
static void lc_bigmsg(void)
{
	struct hsock *s = h_connect(SEQ);

	ctl_send("CLISENT");
	h_close(s);
}

static void lc_inv_buf(uint16_t type)
{
	struct hsock *s = h_connect(type);
	uint8_t buf[512];

	ctl_expect("SENDDONE");
	if (type == SEQ)
		assert_int_equal(h_recv_msg(s, buf, sizeof(buf), NULL), 512);
	else
		h_recv(s, buf, sizeof(buf));
	ctl_send("DONE");
	h_close(s);
}

static void lc_stream_inv_buf(void)
{
	lc_inv_buf(STREAM);
}

static void lc_seqpacket_inv_buf(void)
{
	lc_inv_buf(SEQ);
}

static void lc_skb_merge(void)
{
	struct hsock *s = h_connect(STREAM);

	h_send(s, "HELLO", 5, 0);
	ctl_send("SEND0");
	ctl_expect("REPLY0");
	h_send(s, "WORLD", 5, 0);
	ctl_send("SEND1");
	ctl_expect("REPLY1");
	h_close(s);
}

static void lc_seqpacket_peek(void)
{
	lc_peek(SEQ);
}

static void lc_shutwr(void)
{
	struct hsock *s = h_connect(STREAM);

	h_shutdown(s, VSOCK_SHUTDOWN_SEND);
	ctl_send("CLIENTDONE");
	h_close(s);
}

static void lc_shutrd(void)
{
	struct hsock *s = h_connect(STREAM);

	ctl_expect("SHUTRDDONE");
	assert_true(s->guest_shut & VSOCK_SHUTDOWN_RCV);
	ctl_send("CLIENTDONE");
	h_close(s);
}

static const size_t zc_len[] = { 2 * 4096 + 200, 6 * 4096, 48 * 4096, 2 * 4096 + 100,
				 3 * 4096,	 4096,	   100 * 4096 };
#define ZC_FAILS 4 /* its sendmsg fails: nothing sent, hash 0 */

static void lc_zerocopy(uint16_t type)
{
	for (unsigned int i = 0; i < (type == STREAM ? 7u : 6u); i++) {
		struct hsock *s = h_connect(type);
		uint8_t *buf = malloc(zc_len[i]);

		fill(buf, zc_len[i], i);
		if (i != ZC_FAILS)
			h_send(s, buf, zc_len[i], 0);
		ctl_send_ulong(i == ZC_FAILS ? 0 : djb2(buf, zc_len[i]));
		ctl_send("DONE");
		free(buf);
		h_close(s);
	}
}

static void lc_stream_zerocopy(void)
{
	lc_zerocopy(STREAM);
}

static void lc_seqpacket_zerocopy(void)
{
	lc_zerocopy(SEQ);
}

static void lc_empty_errq(void)
{
	struct hsock *s = h_connect(STREAM);

	ctl_send("DONE");
	h_close(s);
}

static void lc_double_bind(void)
{
	for (int i = 0; i < 2; i++) {
		struct hsock *s;

		ctl_expect("LISTENING");
		s = h_dial(PEER, STREAM, PEER + 1); /* the same port both times */
		assert_true(s->connected);
		h_close(s);
	}
}

static void lc_credit(void)
{
	struct hsock *s = h_connect(STREAM);
	static uint8_t buf[128 * KIB + 1];
	uint8_t b;

	h_recv(s, &b, 1);
	/* the guest set its buffer to 128 KiB before the byte: the credit says so */
	assert_int_equal(s->g_buf_alloc, 128 * KIB);
	h_send(s, buf, sizeof(buf), 0);
	h_close(s);
}

static void lc_unsent(uint16_t type)
{
	struct hsock *s = h_connect(type);
	uint8_t buf[64];

	fill(buf, sizeof(buf), 9);
	h_send(s, buf, sizeof(buf), 0);
	ctl_expect("RECEIVED");
	h_close(s);
}

static void lc_stream_unsent(void)
{
	lc_unsent(STREAM);
}

static void lc_seqpacket_unsent(void)
{
	lc_unsent(SEQ);
}

/* ---- the server halves (guest: client) ---- */

static void ls_bind_only(void)
{
	ctl_send("BIND");
	ctl_expect("DONE");
}

static void ls_client_close(void)
{
	struct hsock *s = h_accept(STREAM);
	uint8_t b;

	h_wait_remote_close(s);
	h_recv(s, &b, 1);
	assert_int_equal(b, 'A');
	assert_true(s->rx_read == s->rx_len);
	h_close(s);
}

static void ls_server_close(void)
{
	struct hsock *s = h_accept(STREAM);

	h_send(s, "A", 1, 0);
	h_close(s);
}

static void ls_multiconn(void)
{
	struct hsock *s[VT_MULTICONN];
	uint8_t b;

	for (int i = 0; i < VT_MULTICONN; i++)
		s[i] = h_accept(STREAM);
	for (int i = 0; i < VT_MULTICONN; i++) {
		if (i % 2) {
			h_send(s[i], "A", 1, 0);
		} else {
			h_recv(s[i], &b, 1);
			assert_int_equal(b, 'A');
		}
	}
	for (int i = 0; i < VT_MULTICONN; i++)
		h_close(s[i]);
}

static void ls_peek(uint16_t type)
{
	struct hsock *s = h_accept(type);
	uint8_t buf[64];

	ctl_send("SRVREADY");
	if (type == SEQ)
		assert_int_equal(h_recv_msg(s, buf, sizeof(buf), NULL), 64);
	else
		h_recv(s, buf, sizeof(buf));
	h_close(s);
}

static void ls_stream_peek(void)
{
	ls_peek(STREAM);
}

static void ls_seqpacket_peek(void)
{
	ls_peek(SEQ);
}

static void ls_msg_bounds(void)
{
	struct hsock *s = h_accept(SEQ);
	static uint8_t buf[16 * KIB];
	unsigned long hash = 0;
	bool eor;

	h_set_buf(s, 2u << 20);
	ctl_send("SRVREADY");
	ctl_expect("SENDDONE");
	while (s->msgs_read < s->n_msgs) {
		size_t n = h_recv_msg(s, buf, sizeof(buf), &eor);

		hash += eor + djb2(buf, n);
	}
	assert_int_equal(s->n_msgs, 128);
	assert_int_equal(hash, ctl_ulong());
	h_close(s);
}

static void ls_trunc(void)
{
	struct hsock *s = h_accept(SEQ);
	uint8_t buf[64];

	ctl_expect("SENDDONE");
	assert_int_equal(h_recv_msg(s, buf, sizeof(buf), NULL), 32);
	h_close(s);
}

static void ls_timeout(void)
{
	struct hsock *s = h_accept(SEQ);
	uint64_t before = fake_now;

	ctl_expect("WAITDONE");
	assert_true(fake_now - before >= 1000000000ULL); /* the guest waited its second */
	h_close(s);
}

static void ls_invalid_rec(void)
{
	struct hsock *s = h_accept(SEQ);
	static uint8_t buf[3 * 4096];

	assert_int_equal(h_recv_msg(s, buf, sizeof(buf), NULL), sizeof(buf));
	assert_int_equal(buf[0], 'a');
	assert_int_equal(h_recv_msg(s, buf, sizeof(buf), NULL), sizeof(buf));
	assert_int_equal(buf[sizeof(buf) - 1], 'b');
	h_close(s);
}

static void ls_rcvlowat(void)
{
	struct hsock *s = h_accept(STREAM);

	h_send(s, "A", 1, 0);
	ctl_send("SRVSENT");
	ctl_expect("CLNSENT");
	for (int i = 0; i < 127; i++)
		h_send(s, "A", 1, 0);
	ctl_expect("POLLDONE");
	h_close(s);
}

static void ls_bigmsg(void)
{
	struct hsock *s = h_accept(SEQ);

	ctl_expect("CLISENT");
	assert_int_equal(s->rx_len, 0);
	h_close(s);
}

static void ls_skb_merge(void)
{
	struct hsock *s = h_accept(STREAM);
	uint8_t buf[10];

	ctl_expect("SEND0");
	h_recv(s, buf, 2);
	ctl_send("REPLY0");
	ctl_expect("SEND1");
	h_recv(s, buf + 2, 8);
	assert_memory_equal(buf, "HELLOWORLD", 10);
	ctl_send("REPLY1");
	h_close(s);
}

static void ls_shutwr(void)
{
	struct hsock *s = h_accept(STREAM);

	ctl_expect("CLIENTDONE");
	assert_true(s->guest_shut & VSOCK_SHUTDOWN_SEND);
	assert_int_equal(s->rx_len, 0);
	h_close(s);
}

static void ls_shutrd(void)
{
	struct hsock *s = h_accept(STREAM);

	h_shutdown(s, VSOCK_SHUTDOWN_RCV);
	ctl_send("SHUTRDDONE");
	ctl_expect("CLIENTDONE");
	assert_int_equal(s->rx_len, 0);
	h_close(s);
}

static void ls_double_bind(void)
{
	struct hsock *l = h_listen(PEER, STREAM);

	for (int i = 0; i < 2; i++) {
		struct hsock *s;

		ctl_send("LISTENING");
		s = h_take(l);
		assert_int_equal(s->gport, PEER + 1);
		h_wait_remote_close(s);
		hs_free(s);
	}
	hs_free(l);
}

static void ls_credit(bool lowat_first)
{
	struct hsock *s = h_accept(STREAM);
	static uint8_t buf[128 * KIB + 1];

	h_set_buf(s, 128 * KIB);
	h_send(s, "A", 1, 0);
	assert_true(pump_until(has_bytes, s, 128 * KIB));
	assert_int_equal(s->rx_len, 128 * KIB); /* no more than our credit */
	h_recv(s, buf, 64 * KIB);
	h_recv(s, buf, 64 * KIB + 1);
	h_close(s);
}

static void ls_credit_set_rcvlowat(void)
{
	ls_credit(false);
}

static void ls_credit_low_rx_bytes(void)
{
	ls_credit(true);
}

/* ---- the table: vsock_test's other half of each case, per role of the guest ---- */

struct host_case {
	void (*half[VT_ROLES])(void); /* NULL: vsock_test has none, or the guest's is n/a */
	bool na[VT_ROLES]; /* the guest says SKIP */
};

#define H(server_role, client_role) \
	.half = { [VT_SERVER] = (server_role), [VT_CLIENT] = (client_role) }

static const struct host_case host_cases[] = {
	{ H(lc_connection_reset, NULL) },
	{ H(lc_bind_only, ls_bind_only) },
	{ H(lc_client_close, ls_client_close) },
	{ H(lc_server_close, ls_server_close) },
	{ H(lc_multiconn, ls_multiconn) },
	{ H(lc_stream_peek, ls_stream_peek) },
	{ H(lc_msg_bounds, ls_msg_bounds) },
	{ H(lc_trunc, ls_trunc) },
	{ H(lc_timeout, ls_timeout) },
	{ H(NULL, ls_invalid_rec), .na = { [VT_SERVER] = true } },
	{ H(lc_rcvlowat, ls_rcvlowat) },
	{ H(lc_bigmsg, ls_bigmsg) },
	{ H(lc_stream_inv_buf, NULL), .na = { [VT_CLIENT] = true } },
	{ H(lc_seqpacket_inv_buf, NULL), .na = { [VT_CLIENT] = true } },
	{ H(lc_skb_merge, ls_skb_merge) },
	{ H(lc_seqpacket_peek, ls_seqpacket_peek) },
	{ H(lc_shutwr, ls_shutwr) },
	{ H(lc_shutrd, ls_shutrd) },
	{ H(lc_stream_zerocopy, NULL), .na = { [VT_CLIENT] = true } },
	{ H(lc_seqpacket_zerocopy, NULL), .na = { [VT_CLIENT] = true } },
	{ H(lc_empty_errq, NULL), .na = { [VT_CLIENT] = true } },
	{ H(lc_double_bind, ls_double_bind) },
	{ H(lc_credit, ls_credit_set_rcvlowat) },
	{ H(lc_credit, ls_credit_low_rx_bytes) },
	{ H(lc_stream_unsent, NULL), .na = { [VT_CLIENT] = true } },
	{ H(lc_seqpacket_unsent, NULL), .na = { [VT_CLIENT] = true } },
};

#define N_CASES (sizeof(host_cases) / sizeof(host_cases[0]))

/* ---- runs ---- */

static int setup(void **state)
{
	for (unsigned int i = 0; i < MAX_HSOCKS; i++)
		if (hs[i].used)
			hs_free(&hs[i]);
	clear_sent();
	config_reset();
	vsock_init(&fake);
	fake_loop_init();
	real_stdout = stdout;
	stdout = open_memstream(&printed, &printed_len);
	fake_now = 1000;
	vsock_next_timer = UINT64_MAX;
	memset(&cnt, 0, sizeof(cnt));
	poll_ctx_del(&vt_ctx); /* the previous test's */
	vsock_test_init();
	return 0;
}

static int teardown(void **state)
{
	struct vsock_sock *s;

	if (phase != PH_IDLE) {
		vt_fail(&run, "test over");
		run_fail(&run);
	}
	if (ctl_listener)
		vsock_close(ctl_listener);
	ctl_listener = NULL;
	vsock_transport_reset();
	while ((s = vsock_next(NULL)))
		vsock_close(s);
	for (unsigned int i = 0; i < MAX_HSOCKS; i++)
		if (hs[i].used)
			hs_free(&hs[i]);
	clear_sent();
	fclose(stdout);
	stdout = real_stdout;
	free(printed);
	printed = NULL;
	assert_int_equal(vsock_pkt_live(), 0);
	return 0;
}

/* The control connection, made the way the role says; the run starts. */
static void start_run(enum vt_role role)
{
	char *argv[] = { "vsock-test", "client", "7777" };
	struct hsock *l;

	assert_int_equal(cfg_vsock_test_port.def, CTL_PORT);
	assert_int_equal(cfg_vsock_test_peer_port.def, PEER);
	if (role == VT_SERVER) {
		ctl = h_dial(CTL_PORT, STREAM, 0);
		assert_true(ctl->connected);
	} else {
		l = h_listen(HOST_CTL_PORT, STREAM);
		assert_int_equal(vt_cmd(3, argv), 0);
		ctl = h_take(l);
		hs_free(l);
	}
	pump();
	assert_int_not_equal(phase, PH_IDLE);
}

/* One barrier of run_tests(): both write NEXT or SKIP, then read the other's. */
static bool barrier(unsigned int id, enum vt_role role, bool host_runs)
{
	const struct host_case *c = &host_cases[id];

	ctl_send(host_runs ? "NEXT" : "SKIP");
	ctl_expect(c->na[role] ? "SKIP" : "NEXT");
	return host_runs && !c->na[role];
}

/* A whole run with the cases in @pick (NULL: all) in @role; checks the guest's verdicts. */
static void run_cases(enum vt_role role, const bool *pick)
{
	char want[256];

	start_run(role);
	for (unsigned int id = 0; id < N_CASES; id++) {
		bool picked = !pick || pick[id], run_it = barrier(id, role, picked);

		if (run_it && host_cases[id].half[role])
			host_cases[id].half[role]();
		pump();
		if (strstr(out_text, "FAIL"))
			fail_msg("case %u:\n%s", id, out_text);
		/* ringside's verdict: ok, or n/a with the facility it lacks */
		snprintf(want, sizeof(want), "vsock-test: case %u %s: %s", id, vt_cases[id].name,
			 run_it ? "ok" : "n/a: ringside ");
		if (picked && !strstr(out_text, want))
			fail_msg("no \"%s\" in:\n%s", want, out_text);
	}
	ctl_send("COMPLETED");
	ctl_expect("COMPLETED");
	pump();
	assert_int_equal(phase, PH_IDLE);
	assert_non_null(strstr(out_text, "vsock-test: done as"));
	assert_int_equal(cnt.failed, 0);
	h_close(ctl);
}

static void run_one(enum vt_role role, unsigned int id)
{
	bool pick[N_CASES] = { false };

	pick[id] = true;
	run_cases(role, pick);
	assert_int_equal(cnt.ok, !host_cases[id].na[role]);
}

static void test_table_is_vsock_tests(void **state)
{
	assert_int_equal(vt_n_cases, N_CASES);
	assert_int_equal(vt_n_cases, 26); /* Linux 6.12's vsock_test */
	for (unsigned int id = 0; id < N_CASES; id++) {
		for (int r = 0; r < VT_ROLES; r++) {
			/* a half ringside plays, or a reason it cannot; the host's table agrees */
			assert_true(!vt_cases[id].na[r] || !vt_cases[id].half[r]);
			assert_int_equal(host_cases[id].na[r], vt_cases[id].na[r] != NULL);
		}
	}
	assert_string_equal(vt_cases[0].name, "SOCK_STREAM connection reset");
	assert_string_equal(vt_cases[25].name, "SOCK_SEQPACKET ioctl(SIOCOUTQ) 0 unsent bytes");
}

static void test_all_cases_as_server(void **state)
{
	run_cases(VT_SERVER, NULL);
	assert_int_equal(cnt.ok, 25);
	assert_int_equal(cnt.na, 1);
}

static void test_all_cases_as_client(void **state)
{
	run_cases(VT_CLIENT, NULL);
	assert_int_equal(cnt.ok, 19);
	assert_int_equal(cnt.na, 7);
}

/* ---- a control line out of place: one error, the run over, nothing hangs ---- */

/* The run ended with @err on one FAIL line; the control connection is gone. */
static void assert_ended(const char *err)
{
	pump();
	assert_int_equal(phase, PH_IDLE);
	if (!strstr(out_text, err))
		fail_msg("no \"%s\" in:\n%s", err, out_text);
	assert_non_null(strstr(out_text, "vsock-test: aborted as"));
	assert_int_equal(cnt.failed, 1);
	assert_true(ctl->reset || ctl->guest_shut);
}

static void test_bad_barrier_line(void **state)
{
	start_run(VT_SERVER);
	ctl_send("NEXT!");
	ctl_expect("NEXT");
	assert_ended("case 0 SOCK_STREAM connection reset: FAIL: expected NEXT or SKIP on the "
		     "control connection, got \"NEXT!\"");
}

static void test_line_out_of_order(void **state)
{
	start_run(VT_CLIENT);
	barrier(0, VT_CLIENT, false);
	barrier(1, VT_CLIENT, false);
	barrier(2, VT_CLIENT, false);
	barrier(3, VT_CLIENT, false);
	barrier(4, VT_CLIENT, false);
	assert_true(barrier(5, VT_CLIENT, true));
	/* the guest waits for LISTENING; SRVREADY comes first */
	ctl_send("SRVREADY");
	assert_ended("case 5 SOCK_STREAM MSG_PEEK: FAIL: expected \"LISTENING\" on the control "
		     "connection, got \"SRVREADY\"");
}

static void test_line_too_long(void **state)
{
	char line[VT_LINE_MAX + 2];

	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	start_run(VT_SERVER);
	ctl_send(line);
	assert_ended("FAIL: a control line longer than 128 bytes");
}

/* Case 6 as server up to the peer's sum, which is @line: the guest rejects it as @shown. */
static void bad_number(const char *line, const char *shown)
{
	char want[160];
	struct hsock *s;

	start_run(VT_SERVER);
	for (unsigned int id = 0; id < 6; id++)
		barrier(id, VT_SERVER, false);
	assert_true(barrier(6, VT_SERVER, true));
	s = h_connect(SEQ);
	ctl_expect("SRVREADY");
	ctl_send("SENDDONE");
	h_close(s);
	ctl_send(line);
	snprintf(want, sizeof(want),
		 "case 6 SOCK_SEQPACKET msg bounds: FAIL: expected a number on the control "
		 "connection, got \"%s\"",
		 shown);
	assert_ended(want);
}

static void test_not_a_number(void **state)
{
	bad_number("12\x01x", "12?x");
}

/* control_readulong's strtoul fails on these too (ERANGE), or they are no number. */
static void test_number_out_of_range(void **state)
{
	bad_number("18446744073709551616", "18446744073709551616");
}

static void test_number_with_sign(void **state)
{
	bad_number("+5", "+5");
}

static void test_nul_in_line(void **state)
{
	start_run(VT_SERVER);
	h_send(ctl, "NE\0XT\n", 6, 0);
	assert_ended("case 0 SOCK_STREAM connection reset: FAIL: a NUL byte in a control line");
}

/*
 * A run waiting for the host is not run again until the host writes or
 * its time comes: nothing scheduled, a time set (the step's limit, or a
 * timed wait's end when the half asked for one, case 8's 1 s read).
 */
static void test_waits_are_scheduled(void **state)
{
	struct hsock *l;

	start_run(VT_CLIENT);
	pump();
	assert_false(stub_scheduled(&vt_ctx));
	assert_int_equal(poll_once(), 0);
	assert_true(vt_ctx.due_ns == run.step_start + VT_STEP_TIMEOUT_NS);
	for (unsigned int id = 0; id < 8; id++)
		barrier(id, VT_CLIENT, false);
	assert_true(barrier(8, VT_CLIENT, true));
	l = h_listen(PEER, SEQ);
	ctl_send("LISTENING");
	h_take(l);
	hs_free(l);
	pump();
	/* connected, reading a quiet socket for 1 s */
	assert_int_equal(run.pc, 1);
	assert_false(stub_scheduled(&vt_ctx));
	assert_true(vt_ctx.due_ns == run.step_start + 1000000000ULL);
}

/* A pass does at most its budget of steps; the rest runs in the next passes. */
static void test_budget_bounds_a_pass(void **state)
{
	static const char skips[] = "SKIP\nSKIP\nSKIP\nSKIP\nSKIP\nSKIP\n";

	start_run(VT_SERVER);
	ctl_expect("NEXT");
	/* six SKIPs at once, the guest not run meanwhile */
	host_out(ctl, VSOCK_OP_RW, 0, skips, sizeof(skips) - 1);
	assert_true(stub_scheduled(&vt_ctx));
	assert_int_equal(vt_ctx.poll(&vt_ctx, 4), 4); /* the budget used: more to do */
	assert_int_equal(run.case_id, 2); /* two barriers heard, two said */
	pump();
	assert_int_equal(run.case_id, 6);
	for (unsigned int id = 1; id < 6; id++)
		ctl_expect(vt_cases[id].na[VT_SERVER] ? "SKIP" : "NEXT");
	assert_int_equal(cnt.peer_skipped, 6);
}

static void test_control_closed_mid_case(void **state)
{
	start_run(VT_CLIENT);
	assert_true(barrier(0, VT_CLIENT, true));
	ctl_expect("NEXT"); /* case 0's half needs no line: on to case 1 */
	h_shutdown(ctl, VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	assert_ended("case 1 SOCK_STREAM bind only: FAIL: the peer closed the control connection");
}

static void test_silent_peer_times_out(void **state)
{
	start_run(VT_SERVER);
	assert_true(barrier(0, VT_SERVER, true));
	ctl_expect("NEXT");
	/* nothing from the host: the guest's own limit ends the wait */
	assert_null(ctl_line());
	assert_ended("case 1 SOCK_STREAM bind only: FAIL: no control line for 30 s");
	assert_true(fake_now >= 30 * 1000000000ULL);
}

static void test_silent_case_times_out(void **state)
{
	start_run(VT_SERVER);
	for (unsigned int id = 0; id < 5; id++)
		barrier(id, VT_SERVER, false);
	assert_true(barrier(5, VT_SERVER, true));
	ctl_expect("LISTENING");
	/* the host never connects */
	assert_null(ctl_line());
	assert_ended("case 5 SOCK_STREAM MSG_PEEK: FAIL: step 0: nothing happened for 30 s");
}

static void test_second_control_connection_refused(void **state)
{
	struct hsock *other;

	start_run(VT_SERVER);
	other = h_dial(CTL_PORT, STREAM, 0);
	pump();
	assert_true(other->reset || other->guest_shut);
	assert_int_equal(cnt.refused, 1);
	hs_free(other);
	/* the run goes on, and a new one may start after it */
	barrier(0, VT_SERVER, true);
	h_shutdown(ctl, VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	assert_ended("the peer closed the control connection");
	hs_free(ctl);
	start_run(VT_SERVER);
	assert_int_equal(cnt.runs, 2);
}

/* Client role, nobody listening on the host's control port: no run, one line. */
static void test_control_refused(void **state)
{
	char *argv[] = { "vsock-test", "client", "7777" };

	assert_int_equal(vt_cmd(3, argv), 0);
	pump();
	assert_int_equal(phase, PH_IDLE);
	assert_non_null(strstr(output(), "vsock-test: no run: the control connection to the host "
					 "failed: refused (RST)\n"));
	assert_int_equal(cnt.failed, 0);
	assert_int_equal(cnt.aborted, 1);
}

static void test_commands(void **state)
{
	char *bad_port[] = { "vsock-test", "client", "12x" };
	char *list[] = { "vsock-test", "list" };
	char *stop[] = { "vsock-test", "stop" };

	assert_int_equal(vt_cmd(3, bad_port), -1);
	assert_non_null(strstr(out_text, "error: vsock-test client: bad port \"12x\""));
	assert_int_equal(vt_cmd(2, stop), -1);
	assert_int_equal(vt_cmd(2, list), 0);
	assert_non_null(strstr(out_text, "9\tSOCK_SEQPACKET invalid receive buffer\tn/a: "));
	start_run(VT_SERVER);
	assert_int_equal(vt_cmd(2, stop), 0);
	assert_ended("FAIL: stopped from the console");
}

/* ---- each case alone, in each role ---- */

#define CASE_TESTS(id)                                    \
	static void test_case_##id##_server(void **state) \
	{                                                 \
		run_one(VT_SERVER, id);                   \
	}                                                 \
	static void test_case_##id##_client(void **state) \
	{                                                 \
		run_one(VT_CLIENT, id);                   \
	}
CASE_TESTS(0)
CASE_TESTS(1)
CASE_TESTS(2)
CASE_TESTS(3)
CASE_TESTS(4)
CASE_TESTS(5)
CASE_TESTS(6)
CASE_TESTS(7)
CASE_TESTS(8)
CASE_TESTS(9)
CASE_TESTS(10)
CASE_TESTS(11)
CASE_TESTS(12)
CASE_TESTS(13)
CASE_TESTS(14)
CASE_TESTS(15)
CASE_TESTS(16)
CASE_TESTS(17)
CASE_TESTS(18)
CASE_TESTS(19)
CASE_TESTS(20)
CASE_TESTS(21)
CASE_TESTS(22)
CASE_TESTS(23)
CASE_TESTS(24)
CASE_TESTS(25)

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define BOTH(id) T(test_case_##id##_server), T(test_case_##id##_client)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_table_is_vsock_tests),
		BOTH(0),
		BOTH(1),
		BOTH(2),
		BOTH(3),
		BOTH(4),
		BOTH(5),
		BOTH(6),
		BOTH(7),
		BOTH(8),
		BOTH(9),
		BOTH(10),
		BOTH(11),
		BOTH(12),
		BOTH(13),
		BOTH(14),
		BOTH(15),
		BOTH(16),
		BOTH(17),
		BOTH(18),
		BOTH(19),
		BOTH(20),
		BOTH(21),
		BOTH(22),
		BOTH(23),
		BOTH(24),
		BOTH(25),
		T(test_all_cases_as_server),
		T(test_all_cases_as_client),
		T(test_bad_barrier_line),
		T(test_line_out_of_order),
		T(test_line_too_long),
		T(test_not_a_number),
		T(test_number_out_of_range),
		T(test_number_with_sign),
		T(test_nul_in_line),
		T(test_waits_are_scheduled),
		T(test_budget_bounds_a_pass),
		T(test_control_closed_mid_case),
		T(test_silent_peer_times_out),
		T(test_silent_case_times_out),
		T(test_second_control_connection_refused),
		T(test_control_refused),
		T(test_commands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
