// SPDX-License-Identifier: MIT
/*
 * An iperf3 server on vsock (iperf3_port, default 5201), so Debian's
 * unmodified iperf3 client measures the guest through a TCP forwarder.
 *
 * The control protocol, as iperf3 3.12 speaks it: the client connects and
 * sends a 37-byte cookie; each step after that is a one-byte state from
 * the server (PARAM_EXCHANGE, CREATE_STREAMS, TEST_START, TEST_RUNNING,
 * EXCHANGE_RESULTS, DISPLAY_RESULTS) or from the client (TEST_END,
 * IPERF_DONE, CLIENT_TERMINATE), and parameters and results travel as
 * JSON behind a 4-byte big-endian length. Data streams are further
 * connections to the same port that open with the same cookie; the
 * server sinks them (forward), fills them (-R), or, with --bidir, sinks
 * the client's senders and fills the others, until the client's TEST_END.
 * One test at a time: a connection that is neither the control
 * connection nor one of its streams gets ACCESS_DENIED.
 *
 * A state machine driven by the poll loop; nothing blocks. Its every
 * socket is handed to its owner (vsock_set_owner), so its context runs
 * when one of them changed, and at its step or drain deadline while a
 * test is on (poll_schedule_at).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/json.h"
#include "app/services.h"
#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/stats.h"
#include "kernel/time.h"
#include "net/vsock/vsock.h"

CONFIG_KEY(cfg_iperf3_port) = {
	.name = "iperf3_port",
	.help = "iperf3 server port (0: off)",
	.type = CONFIG_UINT,
	.max = 0xffffffff,
	.def = 5201,
};

/* The states iperf3 sends as one signed byte (iperf_api.h). */
enum iperf_msg {
	TEST_START = 1,
	TEST_RUNNING = 2,
	TEST_END = 4,
	PARAM_EXCHANGE = 9,
	CREATE_STREAMS = 10,
	CLIENT_TERMINATE = 12,
	EXCHANGE_RESULTS = 13,
	DISPLAY_RESULTS = 14,
	IPERF_DONE = 16,
	ACCESS_DENIED = -1,
	SERVER_ERROR = -2,
};

#define IE_INITTEST 101 /* iperf3's "test initialization failed" */

#define COOKIE_LEN 37 /* 36 characters and a NUL */
#define MAX_STREAMS 128 /* iperf3's own -P limit */
#define MAX_PENDING 16 /* connections still sending their cookie */
#define MSG_MAX 16384 /* the longest JSON message accepted */
#define TX_MAX (MSG_MAX + 64)
#define BACKLOG 32
/*
 * After TEST_END, how long bytes the client reports sent may take to
 * arrive: they sit in the forwarder's and back end's buffers.
 */
#define DRAIN_NS 10000000000ull
/*
 * A client that stops mid-handshake must not hold the server: every step
 * but the test itself has this long (iperf3's own idle timeout is 120 s).
 */
#define STEP_NS 60000000000ull

enum phase {
	PH_IDLE, /* no client */
	PH_COOKIE, /* reading the control cookie */
	PH_PARAMS, /* sent PARAM_EXCHANGE, reading the parameters */
	PH_STREAMS, /* sent CREATE_STREAMS, accepting data streams */
	PH_RUNNING, /* data flows until TEST_END */
	PH_RESULTS, /* sent EXCHANGE_RESULTS, reading the client's results */
	PH_DRAIN, /* counting bytes the client sent still in flight to us */
	PH_DISPLAY, /* sent DISPLAY_RESULTS, waiting for IPERF_DONE */
	PH_CLOSING, /* an error went out; close once it is sent */
};

struct iperf_pending {
	struct vsock_sock *sock;
	uint8_t cookie[COOKIE_LEN];
	size_t got;
};

/* What we do with a stream: with --bidir, its data tells (decide_roles). */
enum stream_role {
	ROLE_UNKNOWN, /* --bidir, until the client's senders have spoken */
	ROLE_SINK, /* the client sends on it: we read and count */
	ROLE_SOURCE, /* we send on it (-R, the client's receivers with --bidir) */
};

struct iperf_stream {
	struct vsock_sock *sock;
	unsigned int id; /* iperf3 numbers streams 1, 3, 4, 5, ... */
	uint64_t bytes;
	uint64_t client_sent; /* we receive: the client's count, from its results */
	enum stream_role role;
};

struct iperf_params {
	unsigned int parallel;
	unsigned int n_streams; /* parallel, twice that with --bidir */
	bool reverse, bidir;
	uint64_t len, bytes, blocks;
	uint64_t limit; /* -R with -n or -k: bytes to send in all */
};

struct iperf_counters {
	uint64_t tests, completed, aborted, denied, refused;
	uint64_t drain_timeouts; /* bytes the client reports never arrived */
	uint64_t step_timeouts; /* a client stalled between steps */
	uint64_t bad_msgs, bad_params, bytes_in, bytes_out;
	uint64_t bidir_reordered; /* --bidir tests whose streams came out of order */
};

static struct iperf_server {
	uint32_t port;
	struct vsock_sock *listener;
	struct vsock_sock *ctl;
	enum phase phase;
	uint8_t cookie[COOKIE_LEN];
	size_t cookie_got;
	uint8_t rx[4 + MSG_MAX]; /* a length-prefixed message being read */
	size_t rx_len;
	uint8_t tx[TX_MAX]; /* control bytes not yet sent */
	size_t tx_len, tx_off;
	struct iperf_params params;
	struct iperf_pending pending[MAX_PENDING];
	unsigned int n_pending;
	struct iperf_stream streams[MAX_STREAMS];
	unsigned int n_streams;
	bool roles_open; /* --bidir streams not yet known as sink or source */
	uint64_t start_ns, end_ns, sent, drain_deadline, step_deadline;
	struct iperf_counters cnt;
	struct json_doc doc;
	struct config_hook port_hook;
} srv;

static void set_phase(enum phase ph)
{
	srv.phase = ph;
	srv.step_deadline = now_ns() + STEP_NS;
}

/* ---- control output ---- */

static void ctl_queue(const void *data, size_t len)
{
	if (srv.tx_len + len > sizeof(srv.tx))
		return; /* cannot happen: one step queues at most one message */
	memcpy(srv.tx + srv.tx_len, data, len);
	srv.tx_len += len;
}

static void ctl_state(enum iperf_msg m)
{
	int8_t b = m;

	ctl_queue(&b, 1);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void ctl_error(int ie)
{
	uint8_t e[8];

	put_be32(e, ie);
	put_be32(e + 4, 0);
	ctl_state(SERVER_ERROR);
	ctl_queue(e, sizeof(e));
	set_phase(PH_CLOSING);
}

static void ctl_flush(void)
{
	while (srv.tx_off < srv.tx_len) {
		ssize_t n =
			vsock_send(srv.ctl, srv.tx + srv.tx_off, srv.tx_len - srv.tx_off, false);

		if (n <= 0)
			return;
		srv.tx_off += n;
	}
	srv.tx_off = srv.tx_len = 0;
}

/* ---- control input ---- */

/* The next state byte from the client, or 0 if none is there yet. */
static int ctl_read_state(void)
{
	int8_t b;

	if (vsock_recv(srv.ctl, &b, 1, NULL) != 1)
		return 0;
	return b ? b : -128; /* 0 is no state iperf3 sends */
}

/* 1: a whole message is in srv.rx + 4; 0: not yet; -1: too long or empty. */
static int ctl_read_msg(uint32_t *len)
{
	for (;;) {
		size_t want = 4;
		ssize_t n;

		if (srv.rx_len >= 4) {
			*len = (uint32_t)srv.rx[0] << 24 | srv.rx[1] << 16 | srv.rx[2] << 8 |
			       srv.rx[3];
			if (!*len || *len > MSG_MAX)
				return -1;
			want = 4 + *len;
		}
		if (srv.rx_len == want) {
			srv.rx_len = 0;
			return 1;
		}
		n = vsock_recv(srv.ctl, srv.rx + srv.rx_len, want - srv.rx_len, NULL);
		if (n <= 0)
			return 0;
		srv.rx_len += n;
	}
}

/* ---- the data streams ---- */

static void sink(struct iperf_stream *st)
{
	const uint8_t *data;
	size_t n;

	while ((n = vsock_peek(st->sock, &data, NULL))) {
		vsock_consume(st->sock, n);
		st->bytes += n;
		srv.cnt.bytes_in += n;
	}
}

static void source(struct iperf_stream *st)
{
	const uint8_t *pattern = vsock_pattern();

	for (;;) {
		size_t space = vsock_send_space(st->sock);
		ssize_t sent;

		if (space > VSOCK_MAX_PKT_PAYLOAD)
			space = VSOCK_MAX_PKT_PAYLOAD;
		if (srv.params.limit && space > srv.params.limit - srv.sent)
			space = srv.params.limit - srv.sent;
		if (!space)
			return;
		sent = vsock_send(st->sock, pattern + st->bytes % 251, space, false);
		if (sent <= 0)
			return;
		st->bytes += sent;
		srv.sent += sent;
		srv.cnt.bytes_out += sent;
	}
}

/* iperf3 numbers the streams it creates 1, 3, 4, 5, ... */
static unsigned int stream_id(unsigned int created)
{
	return created == 1 ? 1 : created + 1;
}

/*
 * --bidir: iperf3's server tells the client's senders (the first half it
 * created) from its receivers by the order they connect. A forwarder that
 * forks a connection per stream (socat) may deliver them in either order,
 * and a sender taken for a receiver never has its data read: the client
 * blocks on it for good. So roles go by the data instead: the client's
 * senders write from TEST_RUNNING on and its receivers never do. A stream
 * with bytes waiting is a sink; once `parallel` are, the rest are ours to
 * fill (or, at TEST_END, the first undecided ones fill the sinks up).
 * Ids then follow the client's numbering: its senders first, each half
 * in the order it reached us. @force decides every stream now.
 */
static void decide_roles(bool force)
{
	unsigned int sinks = 0, sources = 0;
	bool reordered = false;

	for (unsigned int i = 0; i < srv.n_streams; i++) {
		struct iperf_stream *st = &srv.streams[i];
		const uint8_t *data;

		if (st->role == ROLE_UNKNOWN && st->sock && vsock_peek(st->sock, &data, NULL))
			st->role = ROLE_SINK;
		sinks += st->role == ROLE_SINK;
	}
	if (sinks < srv.params.parallel && !force)
		return;
	for (unsigned int i = 0, seen = 0; i < srv.n_streams; i++) {
		struct iperf_stream *st = &srv.streams[i];
		unsigned int created;

		if (st->role == ROLE_UNKNOWN)
			st->role = sinks++ < srv.params.parallel ? ROLE_SINK : ROLE_SOURCE;
		if (st->role == ROLE_SINK)
			created = ++seen;
		else
			created = srv.params.parallel + ++sources;
		reordered |= created != i + 1;
		st->id = stream_id(created);
	}
	if (reordered)
		srv.cnt.bidir_reordered++;
	srv.roles_open = false;
}

static void run_streams(void)
{
	if (srv.roles_open)
		decide_roles(false);
	for (unsigned int i = 0; i < srv.n_streams; i++) {
		struct iperf_stream *st = &srv.streams[i];

		if (!st->sock || vsock_state(st->sock) != VSOCK_CONNECTED)
			continue;
		if (st->role == ROLE_SOURCE)
			source(st);
		else if (st->role == ROLE_SINK)
			sink(st);
	}
}

/* ---- a test's life ---- */

static void close_data_streams(bool senders_only)
{
	for (unsigned int i = 0; i < srv.n_streams; i++) {
		if (senders_only && srv.streams[i].role != ROLE_SOURCE)
			continue;
		if (srv.streams[i].sock)
			vsock_close(srv.streams[i].sock);
		srv.streams[i].sock = NULL;
	}
}

/*
 * Drop pending[i], the others keeping the order they connected in: iperf3
 * tells a stream's role and id by that order (see pending_done).
 */
static void pending_remove(unsigned int i)
{
	memmove(&srv.pending[i], &srv.pending[i + 1],
		(srv.n_pending - i - 1) * sizeof(srv.pending[0]));
	srv.n_pending--;
}

static void close_pending(void)
{
	for (unsigned int i = 0; i < srv.n_pending; i++)
		vsock_close(srv.pending[i].sock);
	srv.n_pending = 0;
}

static void test_begin(struct vsock_sock *s, const uint8_t *cookie, size_t cookie_got)
{
	srv.ctl = s;
	set_phase(PH_COOKIE);
	if (cookie_got)
		memcpy(srv.cookie, cookie, cookie_got);
	srv.cookie_got = cookie_got;
	srv.rx_len = srv.tx_len = srv.tx_off = 0;
	srv.sent = 0;
	memset(&srv.params, 0, sizeof(srv.params));
	srv.cnt.tests++;
}

/*
 * The next client may connect while this one's IPERF_DONE is still on
 * its way: the oldest connection waiting becomes the control connection.
 */
static void test_finish(bool completed)
{
	close_data_streams(false);
	srv.n_streams = 0;
	srv.roles_open = false;
	if (srv.ctl)
		vsock_close(srv.ctl);
	srv.ctl = NULL;
	srv.phase = PH_IDLE;
	if (completed)
		srv.cnt.completed++;
	else
		srv.cnt.aborted++;
	if (srv.n_pending) {
		struct iperf_pending next = srv.pending[0];

		pending_remove(0);
		test_begin(next.sock, next.cookie, next.got);
	}
}

static bool get_u64(int obj, const char *key, uint64_t *v)
{
	int t = json_find(&srv.doc, obj, key);

	*v = 0;
	return t < 0 || json_get_u64(&srv.doc, t, v);
}

static bool get_bool(int obj, const char *key, bool *v)
{
	int t = json_find(&srv.doc, obj, key);

	*v = false;
	return t < 0 || json_get_bool(&srv.doc, t, v);
}

/* Stream tests over TCP only: UDP and SCTP are refused. */
static bool parse_params(uint32_t len)
{
	struct iperf_params *p = &srv.params;
	uint64_t parallel;
	bool tcp, udp, sctp;

	if (json_parse(&srv.doc, (const char *)srv.rx + 4, len) ||
	    srv.doc.tok[0].type != JSON_OBJECT)
		return false;
	if (!get_bool(0, "tcp", &tcp) || !get_bool(0, "udp", &udp) || !get_bool(0, "sctp", &sctp) ||
	    !get_bool(0, "bidirectional", &p->bidir) || !get_bool(0, "reverse", &p->reverse) ||
	    !get_u64(0, "parallel", &parallel) || !get_u64(0, "len", &p->len) ||
	    !get_u64(0, "num", &p->bytes) || !get_u64(0, "blockcount", &p->blocks))
		return false;
	if (!tcp || udp || sctp || !parallel || parallel > (p->bidir ? 1 : 2) * MAX_STREAMS / 2 ||
	    (p->reverse && p->bidir))
		return false;
	p->parallel = parallel;
	p->n_streams = p->bidir ? 2 * parallel : parallel;
	p->limit = p->bytes;
	if (p->blocks && p->len && p->blocks <= UINT64_MAX / p->len)
		p->limit = p->blocks * p->len;
	return true;
}

/*
 * The client's results: per stream, the bytes it sent (forward), which
 * the drain waits for. Streams match by id, as iperf3 matches ours.
 */
static bool parse_client_results(uint32_t len)
{
	int streams;

	if (json_parse(&srv.doc, (const char *)srv.rx + 4, len) ||
	    (streams = json_find(&srv.doc, 0, "streams")) < 0)
		return false;
	for (unsigned int k = 0; k < srv.doc.tok[streams].count; k++) {
		int st = json_index(&srv.doc, streams, k);
		uint64_t id, bytes;

		if (!get_u64(st, "id", &id) || !get_u64(st, "bytes", &bytes))
			return false;
		for (unsigned int i = 0; i < srv.n_streams; i++) {
			if (srv.streams[i].id == id)
				srv.streams[i].client_sent = bytes;
		}
	}
	return true;
}

/* Every byte the client reports sent has arrived, or time is up. */
static bool drained(void)
{
	bool all = true;

	run_streams();
	for (unsigned int i = 0; i < srv.n_streams; i++) {
		const struct iperf_stream *st = &srv.streams[i];

		if (st->bytes < st->client_sent && st->sock &&
		    vsock_state(st->sock) == VSOCK_CONNECTED && !vsock_eof(st->sock))
			all = false;
	}
	if (!all && now_ns() >= srv.drain_deadline) {
		srv.cnt.drain_timeouts++;
		return true;
	}
	return all;
}

static void send_results(void)
{
	static char text[MSG_MAX];
	struct json_writer w;
	uint64_t micro = (srv.end_ns - srv.start_ns) / 1000;
	uint8_t hdr[4];
	long len;

	json_writer_init(&w, text, sizeof(text));
	json_open(&w, NULL, '{');
	json_put_u64(&w, "cpu_util_total", 0);
	json_put_u64(&w, "cpu_util_user", 0);
	json_put_u64(&w, "cpu_util_system", 0);
	json_put_u64(&w, "sender_has_retransmits", 0);
	json_open(&w, "streams", '[');
	for (unsigned int i = 0; i < srv.n_streams; i++) {
		json_open(&w, NULL, '{');
		json_put_u64(&w, "id", srv.streams[i].id);
		json_put_u64(&w, "bytes", srv.streams[i].bytes);
		json_put_u64(&w, "retransmits", 0);
		json_put_u64(&w, "jitter", 0);
		json_put_u64(&w, "errors", 0);
		json_put_u64(&w, "omitted_errors", 0);
		json_put_u64(&w, "packets", 0);
		json_put_u64(&w, "omitted_packets", 0);
		json_put_u64(&w, "start_time", 0);
		json_put_micro(&w, "end_time", micro);
		json_close(&w, '}');
	}
	json_close(&w, ']');
	json_close(&w, '}');
	len = json_end(&w);
	if (len < 0) {
		ctl_error(IE_INITTEST);
		return;
	}
	put_be32(hdr, len);
	ctl_queue(hdr, 4);
	ctl_queue(text, len);
	ctl_state(DISPLAY_RESULTS);
	set_phase(PH_DISPLAY);
}

static void test_end(void)
{
	srv.end_ns = now_ns();
	if (srv.roles_open)
		decide_roles(true);
	/* sending stops here; streams we receive on stay open for the drain */
	close_data_streams(true);
	ctl_state(EXCHANGE_RESULTS);
	set_phase(PH_RESULTS);
}

/* One step of the control state machine; false once the test is over. */
static bool ctl_step(void)
{
	uint32_t len;
	int r;

	switch (srv.phase) {
	case PH_COOKIE: {
		ssize_t n = 0;

		if (srv.cookie_got < COOKIE_LEN)
			n = vsock_recv(srv.ctl, srv.cookie + srv.cookie_got,
				       COOKIE_LEN - srv.cookie_got, NULL);
		if (n > 0)
			srv.cookie_got += n;
		if (srv.cookie_got < COOKIE_LEN)
			return false;
		ctl_state(PARAM_EXCHANGE);
		set_phase(PH_PARAMS);
		return true;
	}
	case PH_PARAMS:
		if (!(r = ctl_read_msg(&len)))
			return false;
		if (r < 0 || !parse_params(len)) {
			srv.cnt.bad_params++;
			ctl_error(IE_INITTEST);
			return false;
		}
		ctl_state(CREATE_STREAMS);
		set_phase(PH_STREAMS);
		return true;
	case PH_RESULTS:
		if (!(r = ctl_read_msg(&len)))
			return false;
		if (r < 0 || !parse_client_results(len)) {
			srv.cnt.bad_msgs++;
			ctl_error(IE_INITTEST);
			return false;
		}
		srv.drain_deadline = now_ns() + DRAIN_NS;
		set_phase(PH_DRAIN);
		return true;
	case PH_DRAIN:
		if (!drained())
			return false;
		close_data_streams(false);
		send_results();
		return true;
	default:
		break;
	}
	if (srv.phase == PH_CLOSING || !(r = ctl_read_state()))
		return false;
	if (r == TEST_END && srv.phase == PH_RUNNING) {
		test_end();
		return true;
	}
	if (r == IPERF_DONE && srv.phase == PH_DISPLAY) {
		test_finish(true);
		return false;
	}
	if (r != CLIENT_TERMINATE)
		srv.cnt.bad_msgs++;
	test_finish(false);
	return false;
}

static void streams_ready(void)
{
	if (srv.phase != PH_STREAMS || srv.n_streams < srv.params.n_streams)
		return;
	ctl_state(TEST_START);
	ctl_state(TEST_RUNNING);
	srv.start_ns = now_ns();
	set_phase(PH_RUNNING);
}

static void control(void)
{
	enum vsock_state st = vsock_state(srv.ctl);

	ctl_flush();
	if (srv.phase == PH_CLOSING && !srv.tx_len) {
		test_finish(false);
		return;
	}
	if (srv.phase != PH_RUNNING && srv.phase != PH_DRAIN && now_ns() >= srv.step_deadline) {
		srv.cnt.step_timeouts++;
		test_finish(false);
		return;
	}
	while (srv.ctl && ctl_step())
		;
	if (!srv.ctl)
		return;
	streams_ready();
	ctl_flush();
	if (st == VSOCK_CLOSED || vsock_eof(srv.ctl))
		test_finish(false); /* the client went away mid-test */
}

/* ---- new connections: the control one, then streams by cookie ---- */

static void deny(struct vsock_sock *s)
{
	int8_t b = ACCESS_DENIED;

	vsock_send(s, &b, 1, false);
	vsock_close(s);
	srv.cnt.denied++;
}

/*
 * A whole cookie arrived: a stream, the next client waiting, or denied.
 * iperf3's server takes streams in the order they connected (it reads
 * each cookie before it accepts the next), and stream ids follow that
 * order. So a stream of ours whose cookie arrived while an older
 * connection's is still coming (@older_waiting) waits for it. With
 * --bidir the order is no longer trusted for the roles (decide_roles).
 */
static bool pending_done(unsigned int i, bool older_waiting)
{
	struct iperf_pending *p = &srv.pending[i];
	bool ours = srv.phase == PH_STREAMS && srv.n_streams < srv.params.n_streams &&
		    !memcmp(p->cookie, srv.cookie, COOKIE_LEN);

	if (!ours && srv.phase == PH_DISPLAY)
		return false; /* this test is ending: it may be the next one */
	if (ours && older_waiting)
		return false;
	if (ours) {
		struct iperf_stream *st = &srv.streams[srv.n_streams++];

		st->sock = p->sock;
		st->bytes = st->client_sent = 0;
		st->role = srv.params.bidir   ? ROLE_UNKNOWN :
			   srv.params.reverse ? ROLE_SOURCE :
						ROLE_SINK;
		srv.roles_open = srv.params.bidir;
		/* by the order they came; with --bidir decide_roles() has the last word */
		st->id = stream_id(srv.n_streams);
	} else {
		deny(p->sock);
	}
	pending_remove(i);
	return true;
}

/* Oldest connection first, so streams are taken in the order they came. */
static void pending_poll(void)
{
	bool older_waiting = false;

	for (unsigned int i = 0; i < srv.n_pending;) {
		struct iperf_pending *p = &srv.pending[i];
		ssize_t n = vsock_recv(p->sock, p->cookie + p->got, COOKIE_LEN - p->got, NULL);

		if (n > 0)
			p->got += n;
		if (p->got == COOKIE_LEN) {
			if (!pending_done(i, older_waiting))
				i++;
		} else if (vsock_state(p->sock) != VSOCK_CONNECTED || vsock_eof(p->sock)) {
			vsock_close(p->sock);
			pending_remove(i);
		} else {
			older_waiting = true;
			i++;
		}
	}
}

static struct poll_ctx iperf3_ctx;
static struct vsock_owner iperf3_owner = { .ctx = &iperf3_ctx };

static void accept_all(void)
{
	struct vsock_sock *s;

	while (srv.listener && (s = vsock_accept(srv.listener))) {
		vsock_set_owner(s, &iperf3_owner, NULL);
		if (srv.phase == PH_IDLE) {
			test_begin(s, NULL, 0);
		} else if (srv.n_pending == MAX_PENDING) {
			vsock_close(s);
			srv.cnt.refused++;
		} else {
			srv.pending[srv.n_pending].sock = s;
			srv.pending[srv.n_pending++].got = 0;
		}
	}
}

/*
 * One look at everything: whichever socket changed, the state machine
 * runs whole (its few sockets cost less than telling them apart). The
 * ready list is emptied first: a change that comes during the run
 * schedules the context again.
 */
static unsigned int iperf3_poll(struct poll_ctx *ctx, unsigned int budget)
{
	unsigned int changed = 0;

	while (vsock_take_ready(&iperf3_owner, NULL))
		changed++;
	accept_all();
	pending_poll();
	if (srv.ctl)
		control();
	if (srv.phase == PH_RUNNING || srv.phase == PH_DRAIN)
		run_streams();
	/* an error went out whole: the close that follows it is this context's */
	if (srv.ctl && srv.phase == PH_CLOSING && !srv.tx_len)
		poll_schedule(ctx);
	/* a running test has no time limit: its sockets schedule it */
	poll_schedule_at(ctx, !srv.ctl || srv.phase == PH_RUNNING ? UINT64_MAX :
			      srv.phase == PH_DRAIN		  ? srv.drain_deadline :
								    srv.step_deadline);
	return changed != 0;
}

static struct poll_ctx iperf3_ctx = {
	.name = "iperf3",
	.poll = iperf3_poll,
};

/* ---- the listener follows iperf3_port ---- */

static void iperf3_start(void)
{
	srv.port = config_get(&cfg_iperf3_port);
	if (!srv.port)
		return;
	srv.listener = vsock_listen(srv.port, VSOCK_TYPE_STREAM, BACKLOG);
	if (srv.listener)
		vsock_set_owner(srv.listener, &iperf3_owner, NULL);
	else
		printf("iperf3: cannot listen on port %u\n", srv.port);
}

static void port_changed(struct config_key *key)
{
	(void)key;
	close_pending(); /* no test follows on the old port */
	if (srv.ctl)
		test_finish(false);
	if (srv.listener)
		vsock_close(srv.listener);
	srv.listener = NULL;
	iperf3_start();
	poll_schedule(&iperf3_ctx);
}

static void iperf3_stats(void)
{
	const struct iperf_counters *c = &srv.cnt;

	printf("  port %u tests %llu completed %llu aborted %llu denied %llu refused %llu\n",
	       srv.port, (unsigned long long)c->tests, (unsigned long long)c->completed,
	       (unsigned long long)c->aborted, (unsigned long long)c->denied,
	       (unsigned long long)c->refused);
	printf("  step_timeouts %llu drain_timeouts %llu bidir_reordered %llu bad_params %llu bad_msgs %llu in %llu B out %llu B\n",
	       (unsigned long long)c->step_timeouts, (unsigned long long)c->drain_timeouts,
	       (unsigned long long)c->bidir_reordered, (unsigned long long)c->bad_params,
	       (unsigned long long)c->bad_msgs, (unsigned long long)c->bytes_in,
	       (unsigned long long)c->bytes_out);
}

static void iperf3_stats_json(struct json_writer *w)
{
	const struct iperf_counters *c = &srv.cnt;

	json_put_u64(w, "port", srv.port);
	json_put_u64(w, "tests", c->tests);
	json_put_u64(w, "completed", c->completed);
	json_put_u64(w, "aborted", c->aborted);
	json_put_u64(w, "denied", c->denied);
	json_put_u64(w, "refused", c->refused);
	json_put_u64(w, "step_timeouts", c->step_timeouts);
	json_put_u64(w, "drain_timeouts", c->drain_timeouts);
	json_put_u64(w, "bidir_reordered", c->bidir_reordered);
	json_put_u64(w, "bad_params", c->bad_params);
	json_put_u64(w, "bad_msgs", c->bad_msgs);
	json_put_u64(w, "bytes_in", c->bytes_in);
	json_put_u64(w, "bytes_out", c->bytes_out);
}

void iperf3_init(void)
{
	poll_ctx_add(&iperf3_ctx);
	iperf3_start();
	srv.port_hook.fn = port_changed;
	config_on_change(&cfg_iperf3_port, &srv.port_hook);
	stats_register("iperf3", iperf3_stats, iperf3_stats_json);
}
