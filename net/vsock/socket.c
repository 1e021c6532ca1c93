// SPDX-License-Identifier: MIT
/*
 * vsock connections over any transport (virtio 1.2, 5.10.6): the
 * connection table, the REQUEST/RESPONSE/SHUTDOWN/RST state machine and
 * credit flow control (5.10.6.3). Received packets stay in the buffer they
 * arrived in until read (zero copy); small ones may be merged (the
 * small-packet copy of Linux's 2019 vsock throughput series).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/time.h"
#include "net/vsock/vsock.h"

enum credit_choice { CREDIT_LAZY, CREDIT_EAGER, CREDIT_CHOICES };
static const char *const credit_choices[CREDIT_CHOICES + 1] = {
	[CREDIT_LAZY] = "lazy",
	[CREDIT_EAGER] = "eager",
};
CONFIG_KEY(cfg_credit) = {
	.name = "credit",
	.help = "vsock credit updates: lazy (when free space < 64 KiB) or eager (every read)",
	.type = CONFIG_ENUM,
	.choices = credit_choices,
	.def = CREDIT_LAZY,
};

CONFIG_KEY(cfg_smallcopy) = {
	.name = "smallcopy",
	.help = "vsock: copy RX payloads <= 128 B into the previous queued buffer",
	.type = CONFIG_BOOL,
	.def = 1,
};

CONFIG_KEY(cfg_vsock_buf) = {
	.name = "vsock_buf",
	.help = "vsock receive space per socket (buf_alloc), bytes",
	.type = CONFIG_UINT,
	.min = 4096,
	.max = 16 << 20,
	.def = 256 << 10,
};

#define MAX_SOCKS 512
#define HASH_SIZE 256
#define EPHEMERAL_FIRST 49152u
#define CONNECT_TIMEOUT_NS (10ULL * 1000000000ULL)
#define CLOSE_TIMEOUT_NS (5ULL * 1000000000ULL)
/* How often a wait on the device asks the transport whether it answers. */
#define DEVICE_CHECK_NS 1000000000ULL
#define SMALLCOPY_MAX 128
/*
 * A queued packet may hold a buffer up to this many times its payload
 * (rounded up to a pool class), once the socket's queued buffers exceed
 * its buf_alloc: beyond that, small payloads move into buffers of their
 * own size (rx_compact).
 */
#define RX_HOLD_RATIO 4
#define LAZY_CREDIT_THRESHOLD VSOCK_MAX_PKT_PAYLOAD

struct sock_list {
	struct vsock_sock *head, *tail;
};

struct vsock_sock {
	enum vsock_state state;
	enum vsock_type type;
	bool owned; /* an application holds it (else: accept queue or orphan) */
	uint32_t local_port, peer_port;
	uint64_t local_cid, peer_cid; /* fixed while connected: a reset ends it */
	struct vsock_sock *hnext; /* hash chain */
	int error;
	uint64_t deadline; /* connect or close timeout, 0: none */

	/* listeners: children waiting in accept() */
	struct vsock_sock *listener;
	struct vsock_sock *accept_head, *accept_tail, *accept_next;
	unsigned int backlog, n_pending;

	/* receive side */
	struct vsock_pkt *rx_head, *rx_tail;
	uint32_t buf_alloc; /* what we advertise */
	uint32_t rx_cnt; /* payload bytes accepted */
	uint32_t fwd_cnt; /* payload bytes the application consumed */
	uint32_t last_fwd_cnt; /* fwd_cnt the peer last heard */
	uint32_t rcvlowat; /* vsock_set_rcvlowat; 0: not set */
	uint64_t rx_mem; /* buffer bytes (cap) of the packets queued */

	/* send side */
	uint32_t peer_buf_alloc, peer_fwd_cnt, tx_cnt;
	bool credit_requested;

	uint32_t shutdown_local, shutdown_peer;
	uint32_t rx_msgs; /* SEQPACKET: complete messages queued */
	uint64_t rx_bytes, tx_bytes;

	/* readiness (vsock_set_owner), see ---- readiness ---- */
	struct vsock_owner *owner; /* NULL: untracked */
	void *owner_ctx;
	bool on_ready, on_tx_wait;
	struct vsock_sock *ready_next, *tx_wait_next;
};

static const struct vsock_transport *transport;
static struct vsock_sock socks[MAX_SOCKS];
static struct vsock_sock *conn_hash[HASH_SIZE];
/* The connection the last packet was for: the next is most likely too. */
static struct vsock_sock *last_conn;
static struct vsock_counters ctr;
static uint32_t next_ephemeral = EPHEMERAL_FIRST;
static unsigned int n_timers; /* sockets with a deadline */
static bool connect_waits; /* run_timers() saw a socket still connecting */
static uint64_t device_check_at; /* the transport's next check_device; 0: no wait */
static uint64_t events; /* changes: vsock_poll_pass() reports when it moved */
static unsigned int accept_queued; /* children waiting in every listener */
static bool tx_blocked; /* a send found the transport full */
/*
 * The last send went straight to the device with nothing queued behind
 * it (send_pkt said so): the transport cannot be full before the next
 * send, so tx_full() need not be asked. Its queue grows only by our sends.
 */
static bool tx_room_known;
/* The transport checks dst_cid itself (dst_cid_checked): vsock_rx does not. */
static bool check_dst_cid = true;
/* Owned sockets wait for room on one list; an owner's ready ones on its own. */
static struct sock_list tx_wait;
/* The socket layer's poll context (vsock_set_pass); NULL: the caller runs the pass. */
static struct poll_ctx *pass_ctx;
static bool notified; /* since the last vsock_poll_pass(): once is enough */

static inline void notify(void)
{
	if (!notified) {
		notified = true;
		if (pass_ctx)
			poll_schedule(pass_ctx);
	}
}

void vsock_settle(void)
{
	if (transport && transport->settle)
		transport->settle();
}

const struct vsock_counters *vsock_counters(void)
{
	return &ctr;
}

uint64_t vsock_local_cid(void)
{
	return transport ? transport->local_cid() : VSOCK_CID_ANY;
}

const char *vsock_state_name(enum vsock_state st)
{
	static const char *const names[] = { "free",	  "listen",  "connecting",
					     "connected", "closing", "closed" };

	return (unsigned int)st < sizeof(names) / sizeof(names[0]) ? names[st] : "?";
}

/* ---- readiness ---- */

/*
 * Singly linked FIFOs: a packet appends, the owner takes the head, each
 * in a few instructions. Taking a socket out of the middle (closed or
 * handed to another owner while listed) walks its list: once per connection at most.
 */
static void ready_del(struct vsock_sock *s)
{
	struct vsock_owner *o = s->owner;
	struct vsock_sock **pp = &o->ready_head, *prev = NULL;

	while (*pp != s) {
		prev = *pp;
		pp = &prev->ready_next;
	}
	*pp = s->ready_next;
	if (o->ready_tail == s)
		o->ready_tail = prev;
	s->on_ready = false;
}

static void tx_wait_del(struct vsock_sock *s)
{
	struct vsock_sock **pp = &tx_wait.head, *prev = NULL;

	while (*pp != s) {
		prev = *pp;
		pp = &prev->tx_wait_next;
	}
	*pp = s->tx_wait_next;
	if (tx_wait.tail == s)
		tx_wait.tail = prev;
	s->on_tx_wait = false;
}

/* Off both lists: before the owner changes or the socket goes. */
static void unlist(struct vsock_sock *s)
{
	if (s->on_ready)
		ready_del(s);
	if (s->on_tx_wait)
		tx_wait_del(s);
}

/*
 * Something an owner may act on changed: queue @s once for it. Runs on
 * every packet of an owned socket, so it is an append and no more; one
 * also waiting for TX room stays there (served once more then, harmless).
 */
static inline void mark_ready(struct vsock_sock *s)
{
	struct vsock_owner *o = s->owner;

	if (!o || s->on_ready)
		return;
	s->ready_next = NULL;
	if (o->ready_tail)
		o->ready_tail->ready_next = s;
	else
		o->ready_head = s;
	o->ready_tail = s;
	s->on_ready = true;
	poll_schedule(o->ctx); /* the owner runs without the pass in between */
}

/* A send found the transport full: ready again once TX room returns. */
static void wait_tx(struct vsock_sock *s)
{
	if (!s->owner || s->on_tx_wait)
		return;
	s->tx_wait_next = NULL;
	if (tx_wait.tail)
		tx_wait.tail->tx_wait_next = s;
	else
		tx_wait.head = s;
	tx_wait.tail = s;
	s->on_tx_wait = true;
}

static void wake_tx_waiters(void)
{
	struct vsock_sock *s = tx_wait.head;

	tx_wait.head = tx_wait.tail = NULL;
	while (s) {
		struct vsock_sock *next = s->tx_wait_next;

		s->on_tx_wait = false;
		mark_ready(s);
		s = next;
	}
}

void vsock_set_owner(struct vsock_sock *s, struct vsock_owner *owner, void *ctx)
{
	if (owner != s->owner)
		unlist(s);
	s->owner = owner;
	s->owner_ctx = ctx;
}

void *vsock_owner(const struct vsock_sock *s)
{
	return s->owner_ctx;
}

void vsock_set_ready(struct vsock_sock *s)
{
	mark_ready(s);
	notify();
}

void vsock_set_pass(struct poll_ctx *ctx)
{
	pass_ctx = ctx;
}

/* The head comes off: once per served change. */
struct vsock_sock *vsock_take_ready(struct vsock_owner *owner, void **ctx)
{
	struct vsock_sock *s = owner->ready_head;

	if (!s)
		return NULL;
	owner->ready_head = s->ready_next;
	if (!owner->ready_head)
		owner->ready_tail = NULL;
	s->on_ready = false;
	if (ctx)
		*ctx = s->owner_ctx;
	return s;
}

unsigned int vsock_ready_count(const struct vsock_owner *owner)
{
	unsigned int n = 0;

	for (const struct vsock_sock *s = owner->ready_head; s; s = s->ready_next)
		n++;
	return n;
}

/* ---- table ---- */

static unsigned int hash(uint32_t local_port, uint64_t peer_cid, uint32_t peer_port)
{
	uint64_t h = local_port * 0x9e3779b1u ^ peer_port * 0x85ebca77u ^ peer_cid;

	return (h ^ (h >> 16)) & (HASH_SIZE - 1);
}

static struct vsock_sock *sock_alloc(void)
{
	for (unsigned int i = 0; i < MAX_SOCKS; i++) {
		if (socks[i].state == VSOCK_FREE) {
			memset(&socks[i], 0, sizeof(socks[i]));
			socks[i].buf_alloc = config_get(&cfg_vsock_buf);
			return &socks[i];
		}
	}
	return NULL;
}

static void hash_add(struct vsock_sock *s)
{
	unsigned int h = hash(s->local_port, s->peer_cid, s->peer_port);

	s->hnext = conn_hash[h];
	conn_hash[h] = s;
}

static void hash_del(struct vsock_sock *s)
{
	struct vsock_sock **pp = &conn_hash[hash(s->local_port, s->peer_cid, s->peer_port)];

	if (s == last_conn)
		last_conn = NULL; /* only sockets in the table are remembered */
	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == s) {
			*pp = s->hnext;
			return;
		}
	}
}

static bool conn_is(const struct vsock_sock *s, uint32_t local_port, uint64_t peer_cid,
		    uint32_t peer_port)
{
	return s->local_port == local_port && s->peer_port == peer_port && s->peer_cid == peer_cid;
}

static struct vsock_sock *find_conn(uint32_t local_port, uint64_t peer_cid, uint32_t peer_port)
{
	struct vsock_sock *s = last_conn;

	if (s && conn_is(s, local_port, peer_cid, peer_port))
		return s;
	for (s = conn_hash[hash(local_port, peer_cid, peer_port)]; s; s = s->hnext) {
		if (conn_is(s, local_port, peer_cid, peer_port)) {
			last_conn = s;
			return s;
		}
	}
	return NULL;
}

static struct vsock_sock *find_listener(uint32_t port, uint16_t type)
{
	for (unsigned int i = 0; i < MAX_SOCKS; i++)
		if (socks[i].state == VSOCK_LISTEN && socks[i].local_port == port &&
		    socks[i].type == type)
			return &socks[i];
	return NULL;
}

static bool port_in_use(uint32_t port)
{
	for (unsigned int i = 0; i < MAX_SOCKS; i++)
		if (socks[i].state != VSOCK_FREE && socks[i].local_port == port)
			return true;
	return false;
}

/* Nobody holds it and no listener will hand it out: free it when done. */
static bool orphan(const struct vsock_sock *s)
{
	return !s->owned && !s->listener;
}

/*
 * Every new deadline schedules the pass, which asks for its earliest
 * timer (one may come before the time it asked for, a close behind a
 * connect), and so does the last one going, which withdraws the time.
 * Only connects and closes set one: never per packet.
 */
static void set_deadline(struct vsock_sock *s, uint64_t ns)
{
	bool had = s->deadline != 0;

	if (!had && ns)
		n_timers++;
	else if (had && !ns)
		n_timers--;
	s->deadline = ns;
	if (ns || (had && !n_timers))
		notify();
}

static void drop_rx(struct vsock_sock *s)
{
	while (s->rx_head) {
		struct vsock_pkt *p = s->rx_head;

		s->rx_head = p->next;
		vsock_pkt_free(p);
	}
	s->rx_tail = NULL;
	s->rx_msgs = 0;
	s->rx_mem = 0;
}

static void sock_free(struct vsock_sock *s)
{
	unlist(s);
	s->owner = NULL;
	if (s->state != VSOCK_LISTEN && s->state != VSOCK_FREE)
		hash_del(s);
	set_deadline(s, 0);
	drop_rx(s);
	s->state = VSOCK_FREE;
}

/* ---- sending ---- */

static void fill_hdr(struct vsock_pkt *pkt, const struct vsock_sock *s, uint16_t op, uint32_t flags)
{
	struct virtio_vsock_hdr *h = &pkt->hdr;

	h->src_cid = s->local_cid;
	h->dst_cid = s->peer_cid;
	h->src_port = s->local_port;
	h->dst_port = s->peer_port;
	h->type = s->type;
	h->op = op;
	h->flags = flags;
	h->buf_alloc = s->buf_alloc;
	h->fwd_cnt = s->fwd_cnt;
}

static void transmit(struct vsock_sock *s, struct vsock_pkt *pkt)
{
	/* every packet carries our credit: the peer's view is now current */
	s->last_fwd_cnt = s->fwd_cnt;
	ctr.tx_pkts++;
	ctr.tx_bytes += pkt->hdr.len;
	tx_room_known = transport->send_pkt(pkt);
}

static void send_ctrl(struct vsock_sock *s, uint16_t op, uint32_t flags)
{
	struct vsock_pkt *pkt = vsock_pkt_alloc(0);

	if (!pkt)
		return;
	fill_hdr(pkt, s, op, flags);
	if (op == VSOCK_OP_RST)
		ctr.rst_sent++;
	else if (op == VSOCK_OP_CREDIT_UPDATE)
		ctr.credit_updates_sent++;
	else if (op == VSOCK_OP_CREDIT_REQUEST)
		ctr.credit_requests_sent++;
	transmit(s, pkt);
}

/* RST for a packet that matches no socket (never in reply to an RST). */
static void reply_rst(const struct virtio_vsock_hdr *in)
{
	struct vsock_pkt *pkt;

	if (in->op == VSOCK_OP_RST) {
		ctr.rx_rst_ignored++;
		return;
	}
	pkt = vsock_pkt_alloc(0);
	if (!pkt)
		return;
	pkt->hdr.src_cid = vsock_local_cid();
	pkt->hdr.dst_cid = in->src_cid;
	pkt->hdr.src_port = in->dst_port;
	pkt->hdr.dst_port = in->src_port;
	pkt->hdr.type = in->type;
	pkt->hdr.op = VSOCK_OP_RST;
	ctr.rst_sent++;
	ctr.tx_pkts++;
	tx_room_known = transport->send_pkt(pkt);
}

static uint32_t peer_free(const struct vsock_sock *s)
{
	uint32_t in_flight = s->tx_cnt - s->peer_fwd_cnt;

	return in_flight >= s->peer_buf_alloc ? 0 : s->peer_buf_alloc - in_flight;
}

static bool can_send(const struct vsock_sock *s)
{
	return s->state == VSOCK_CONNECTED && !(s->shutdown_local & VSOCK_SHUTDOWN_SEND) &&
	       !(s->shutdown_peer & VSOCK_SHUTDOWN_RCV);
}

/*
 * The driver frees TX slots without telling us: the pass (vsock_poll_pass)
 * asks, and readies @s then.
 */
static void tx_blocked_by(struct vsock_sock *s)
{
	if (!tx_blocked)
		notify();
	tx_blocked = true;
	wait_tx(s);
}

static inline bool tx_full(struct vsock_sock *s)
{
	if (tx_room_known || !transport->tx_full())
		return false;
	tx_blocked_by(s);
	return true;
}

size_t vsock_send_space(struct vsock_sock *s)
{
	if (!can_send(s) || tx_full(s))
		return 0;
	return peer_free(s);
}

static void check_tx_room(void)
{
	if (tx_blocked && !transport->tx_full()) {
		tx_blocked = false;
		events++;
		wake_tx_waiters();
	}
}

/* Out of credit: ask once; credit on the peer's next packet clears the flag. */
static void request_credit(struct vsock_sock *s)
{
	if (!s->credit_requested) {
		s->credit_requested = true;
		send_ctrl(s, VSOCK_OP_CREDIT_REQUEST, 0);
	}
}

/* @by_ref: the packet points at @p (vsock_send_static) instead of a copy. */
static int send_chunk(struct vsock_sock *s, const uint8_t *p, uint32_t n, uint32_t flags,
		      bool by_ref)
{
	struct vsock_pkt *pkt = vsock_pkt_alloc(by_ref ? 0 : n);

	if (!pkt)
		return -ENOMEM;
	if (by_ref)
		pkt->ext = p;
	else
		memcpy(pkt->data, p, n);
	fill_hdr(pkt, s, VSOCK_OP_RW, flags);
	pkt->hdr.len = n;
	s->tx_cnt += n;
	s->tx_bytes += n;
	transmit(s, pkt);
	return 0;
}

static ssize_t send_data(struct vsock_sock *s, const void *buf, size_t len, bool eor, bool by_ref)
{
	const uint8_t *p = buf;
	size_t space, done = 0;

	if (!can_send(s))
		return s->state == VSOCK_CONNECTED ? -EPIPE : -ENOTCONN;
	if (tx_full(s)) {
		ctr.tx_full++;
		return -EAGAIN;
	}
	space = peer_free(s);
	if (s->type == VSOCK_TYPE_SEQPACKET) {
		if (len > s->peer_buf_alloc)
			return -EMSGSIZE;
		if (len > space) {
			request_credit(s);
			return -EAGAIN;
		}
	} else if (len > space) {
		len = space;
	}
	if (!len && (s->type == VSOCK_TYPE_STREAM || !space)) {
		request_credit(s);
		return -EAGAIN;
	}
	do {
		uint32_t n = len - done > VSOCK_MAX_PKT_PAYLOAD ? VSOCK_MAX_PKT_PAYLOAD :
								  len - done;
		uint32_t flags = 0;

		if (s->type == VSOCK_TYPE_SEQPACKET && done + n == len)
			flags = VSOCK_SEQ_EOM | (eor ? VSOCK_SEQ_EOR : 0);
		if (send_chunk(s, p + done, n, flags, by_ref))
			break;
		done += n;
	} while (done < len);
	if (done)
		return done;
	/* the pool refills as the device returns packets: retry then */
	tx_blocked_by(s);
	return -ENOMEM;
}

/*
 * The received buffer becomes the sent packet: its header is rewritten in
 * place for the way back, so the bytes are neither copied nor is a packet
 * allocated (without this, an echo's whole cost would be one of each). The payload is
 * read, and the reply carries the credit that frees.
 */
static __attribute__((noinline)) ssize_t send_head(struct vsock_sock *s, struct vsock_pkt *p)
{
	struct virtio_vsock_hdr *h;
	uint32_t n;

	if (p->off || s->type != VSOCK_TYPE_STREAM)
		return 0;
	if (!can_send(s))
		return s->state == VSOCK_CONNECTED ? -EPIPE : -ENOTCONN;
	if (tx_full(s)) {
		ctr.tx_full++;
		return -EAGAIN;
	}
	n = p->hdr.len;
	if (n > peer_free(s))
		return 0;
	s->rx_head = p->next;
	if (!s->rx_head)
		s->rx_tail = NULL;
	s->rx_mem -= p->cap;
	s->fwd_cnt += n;
	p->next = NULL;
	/*
	 * What fill_hdr would write, less what the received header already
	 * says: len is n, type is ours (vsock_rx checked it), op is RW (only
	 * RW payloads are queued). The addresses turn round, flags clear.
	 */
	h = &p->hdr;
	h->src_cid = s->local_cid;
	h->dst_cid = s->peer_cid;
	h->src_port = s->local_port;
	h->dst_port = s->peer_port;
	h->flags = 0;
	h->buf_alloc = s->buf_alloc;
	h->fwd_cnt = s->fwd_cnt;
	s->tx_cnt += n;
	s->tx_bytes += n;
	transmit(s, p);
	return n;
}

/*
 * The echo calls this until the queue is empty: that last call, one per
 * served change, returns before send_head's register saves.
 */
ssize_t vsock_send_rx_head(struct vsock_sock *s)
{
	struct vsock_pkt *p = s->rx_head;

	return p ? send_head(s, p) : -ENODATA;
}

ssize_t vsock_send(struct vsock_sock *s, const void *buf, size_t len, bool eor)
{
	return send_data(s, buf, len, eor, false);
}

ssize_t vsock_send_static(struct vsock_sock *s, const void *buf, size_t len)
{
	if (s->type != VSOCK_TYPE_STREAM)
		return -EINVAL;
	return send_data(s, buf, len, false, true);
}

/* ---- receiving ---- */

static uint32_t rx_queued(const struct vsock_sock *s)
{
	return s->rx_cnt - s->fwd_cnt;
}

size_t vsock_rx_queued(const struct vsock_sock *s)
{
	return rx_queued(s);
}

/*
 * The small-packet copy (Linux's 2019 vsock throughput series): a tiny
 * payload would pin a whole RX buffer while it waits to be read. Copy it
 * into the free tail of the previous queued buffer when that does not
 * cross a message boundary.
 */
static bool try_smallcopy(struct vsock_sock *s, struct vsock_pkt *pkt)
{
	struct vsock_pkt *tail = s->rx_tail;
	uint32_t n = pkt->hdr.len;

	if (!tail || n > SMALLCOPY_MAX || !config_get(&cfg_smallcopy))
		return false;
	if (tail->cap - tail->hdr.len < n || (tail->hdr.flags & VSOCK_SEQ_EOM))
		return false;
	memcpy(tail->data + tail->hdr.len, pkt->data, n);
	tail->hdr.len += n;
	tail->hdr.flags = pkt->hdr.flags;
	if (s->type == VSOCK_TYPE_SEQPACKET && (pkt->hdr.flags & VSOCK_SEQ_EOM))
		s->rx_msgs++;
	ctr.rx_smallcopy++;
	return true; /* the caller gives @pkt back to the transport */
}

/*
 * Credit bounds the payload a socket queues, not the buffers holding it:
 * with 64 KiB RX buffers (rxbuf=65580) a peer writing 200-byte packets
 * nobody reads would pin 64 KiB per 200 B, 300 times buf_alloc. Once the
 * queued buffers exceed buf_alloc, a payload much smaller than its buffer
 * is copied into a packet of its own size and the big buffer returns at
 * once. The usual reader, who drains each packet as it comes, never gets
 * here. Returns the packet to queue (the same one when no memory).
 */
static struct vsock_pkt *rx_compact(struct vsock_sock *s, struct vsock_pkt *pkt)
{
	uint32_t n = pkt->hdr.len;
	struct vsock_pkt *small;

	if (s->rx_mem + pkt->cap <= s->buf_alloc || pkt->cap / RX_HOLD_RATIO < n)
		return pkt;
	small = vsock_pkt_alloc(n);
	if (!small)
		return pkt;
	small->hdr = pkt->hdr;
	memcpy(small->data, pkt->data, n);
	vsock_pkt_free(pkt);
	ctr.rx_compacted++;
	return small;
}

/* Data for a connection: NULL when queued, else @pkt, whose payload was taken or dropped. */
static struct vsock_pkt *rx_data(struct vsock_sock *s, struct vsock_pkt *pkt)
{
	uint32_t n = pkt->hdr.len;

	if (s->shutdown_local & VSOCK_SHUTDOWN_RCV || s->state == VSOCK_CLOSING) {
		/* nobody will read it: count it consumed so credit keeps moving */
		s->rx_cnt += n;
		s->fwd_cnt += n;
		return pkt;
	}
	if ((uint64_t)rx_queued(s) + n > s->buf_alloc) {
		ctr.rx_over_credit++; /* the peer ignored our credit: drop */
		return pkt;
	}
	s->rx_cnt += n;
	s->rx_bytes += n;
	if (!n && !(pkt->hdr.flags & VSOCK_SEQ_EOM))
		return pkt;
	if (try_smallcopy(s, pkt))
		return pkt;
	pkt = rx_compact(s, pkt);
	if (s->type == VSOCK_TYPE_SEQPACKET && (pkt->hdr.flags & VSOCK_SEQ_EOM))
		s->rx_msgs++;
	s->rx_mem += pkt->cap;
	pkt->next = NULL;
	pkt->off = 0;
	if (s->rx_tail)
		s->rx_tail->next = pkt;
	else
		s->rx_head = pkt;
	s->rx_tail = pkt;
	return NULL;
}

/* Both directions shut by the peer and nothing left to read: finish. */
static void peer_done(struct vsock_sock *s)
{
	send_ctrl(s, VSOCK_OP_RST, 0);
	if (orphan(s)) {
		sock_free(s);
		return;
	}
	hash_del(s);
	s->state = VSOCK_CLOSED;
	set_deadline(s, 0);
}

static void maybe_credit_update(struct vsock_sock *s)
{
	uint32_t unseen = s->fwd_cnt - s->last_fwd_cnt;

	if (!unseen)
		return;
	/*
	 * lazy (Linux's rule): only when the peer's view of free space gets
	 * small, or fewer bytes are queued than the reader waits for
	 * (rcvlowat): the sender may be waiting for credit to send them
	 */
	if (config_get(&cfg_credit) == CREDIT_LAZY && s->buf_alloc > unseen &&
	    s->buf_alloc - unseen >= LAZY_CREDIT_THRESHOLD && rx_queued(s) >= s->rcvlowat)
		return;
	send_ctrl(s, VSOCK_OP_CREDIT_UPDATE, 0);
}

int vsock_set_buf_size(struct vsock_sock *s, uint32_t bytes)
{
	if (bytes < cfg_vsock_buf.min || bytes > cfg_vsock_buf.max)
		return -EINVAL;
	s->buf_alloc = bytes;
	/* the peer may be waiting for the room: tell it now, as Linux does */
	if (s->state == VSOCK_CONNECTED)
		send_ctrl(s, VSOCK_OP_CREDIT_UPDATE, 0);
	return 0;
}

void vsock_set_rcvlowat(struct vsock_sock *s, uint32_t bytes)
{
	s->rcvlowat = bytes;
	/* fewer queued than the reader now waits for: the sender may lack the credit */
	if (s->state == VSOCK_CONNECTED && rx_queued(s) < bytes && s->fwd_cnt != s->last_fwd_cnt)
		send_ctrl(s, VSOCK_OP_CREDIT_UPDATE, 0);
}

size_t vsock_peek(struct vsock_sock *s, const uint8_t **data, bool *eor)
{
	struct vsock_pkt *p = s->rx_head;

	if (!p)
		return 0;
	*data = p->data + p->off;
	if (eor)
		*eor = s->type == VSOCK_TYPE_SEQPACKET && (p->hdr.flags & VSOCK_SEQ_EOM);
	return p->hdr.len - p->off;
}

void vsock_consume(struct vsock_sock *s, size_t n)
{
	while (s->rx_head) {
		struct vsock_pkt *p = s->rx_head;
		uint32_t left = p->hdr.len - p->off;
		uint32_t take = n < left ? n : left;

		p->off += take;
		s->fwd_cnt += take;
		n -= take;
		if (p->off < p->hdr.len)
			break;
		/* whole packet read (an empty EOM packet is read by consuming 0) */
		s->rx_head = p->next;
		if (!s->rx_head)
			s->rx_tail = NULL;
		if (s->type == VSOCK_TYPE_SEQPACKET && (p->hdr.flags & VSOCK_SEQ_EOM))
			s->rx_msgs--;
		s->rx_mem -= p->cap;
		vsock_pkt_free(p);
		if (!n)
			break;
	}
	if (s->state == VSOCK_CONNECTED)
		maybe_credit_update(s);
	if (s->state == VSOCK_CONNECTED && !s->rx_head &&
	    s->shutdown_peer == (VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND))
		peer_done(s);
}

/*
 * SEQPACKET: the rest of a message that did not fit the reader's buffer,
 * up to and including the packet with end of message.
 */
static void discard_message(struct vsock_sock *s)
{
	const uint8_t *data;
	bool end = false;

	while (!end) {
		size_t n = vsock_peek(s, &data, &end);

		if (!n && !end)
			break;
		vsock_consume(s, n);
	}
}

ssize_t vsock_recv(struct vsock_sock *s, void *buf, size_t len, bool *eor)
{
	uint8_t *out = buf;
	size_t done = 0;
	bool end = false;

	/* a SEQPACKET reader gets whole messages only */
	if (s->type == VSOCK_TYPE_SEQPACKET && !s->rx_msgs)
		return 0;
	for (;;) {
		const uint8_t *data = NULL;
		size_t n = vsock_peek(s, &data, &end);
		size_t take;

		if (!n && !end)
			break;
		take = n < len - done ? n : len - done;
		if (take)
			memcpy(out + done, data, take);
		done += take;
		vsock_consume(s, take);
		if (end && take == n)
			break;
		if (done == len) {
			/*
			 * SEQPACKET: the buffer is full before the end of the
			 * message, wherever that falls (inside a packet or on a
			 * packet boundary): the rest of the message goes, and
			 * the caller gets its start with end of record.
			 */
			if (s->type == VSOCK_TYPE_SEQPACKET) {
				discard_message(s);
				end = true;
			}
			break;
		}
	}
	if (eor)
		*eor = end;
	return done;
}

/*
 * SEQPACKET: the first queued message's length and whether it ends a
 * record; 0 and false when no whole message is queued.
 */
static size_t first_msg(const struct vsock_sock *s, bool *eor)
{
	size_t n = 0;

	*eor = false;
	if (!s->rx_msgs)
		return 0;
	for (const struct vsock_pkt *p = s->rx_head; p; p = p->next) {
		n += p->hdr.len - p->off;
		if (p->hdr.flags & VSOCK_SEQ_EOM) {
			*eor = p->hdr.flags & VSOCK_SEQ_EOR;
			break;
		}
	}
	return n;
}

/* Nothing to hand out: -EAGAIN, or 0 at EOF (a read returning 0 is the end). */
static ssize_t nothing_queued(const struct vsock_sock *s)
{
	return vsock_eof(s) ? 0 : -EAGAIN;
}

ssize_t vsock_peek_copy(const struct vsock_sock *s, void *buf, size_t len, struct vsock_msg *m)
{
	bool seq = s->type == VSOCK_TYPE_SEQPACKET;
	size_t done = 0, msg_len;
	bool eor;

	msg_len = first_msg(s, &eor);
	if (seq ? !s->rx_msgs : !s->rx_head)
		return nothing_queued(s);
	for (const struct vsock_pkt *p = s->rx_head; p && done < len; p = p->next) {
		size_t n = p->hdr.len - p->off;

		n = n < len - done ? n : len - done;
		memcpy((uint8_t *)buf + done, p->data + p->off, n);
		done += n;
		if (seq && (p->hdr.flags & VSOCK_SEQ_EOM))
			break;
	}
	if (m) {
		m->len = seq ? msg_len : done;
		m->eor = eor;
	}
	return done;
}

ssize_t vsock_recv_msg(struct vsock_sock *s, void *buf, size_t len, struct vsock_msg *m)
{
	bool seq = s->type == VSOCK_TYPE_SEQPACKET;
	size_t msg_len;
	ssize_t n;
	bool eor;

	msg_len = first_msg(s, &eor);
	if (seq ? !s->rx_msgs : !s->rx_head)
		return nothing_queued(s);
	n = vsock_recv(s, buf, len, NULL);
	if (m) {
		m->len = seq ? msg_len : (size_t)n;
		m->eor = eor;
	}
	return n;
}

bool vsock_eof(const struct vsock_sock *s)
{
	if (s->rx_head)
		return false;
	return s->state == VSOCK_CLOSED || (s->shutdown_peer & VSOCK_SHUTDOWN_SEND);
}

bool vsock_done(const struct vsock_sock *s)
{
	return s->state == VSOCK_CLOSED || vsock_eof(s);
}

/* ---- the state machine ---- */

static void handle_request(struct vsock_sock *l, const struct virtio_vsock_hdr *h)
{
	struct vsock_sock *c;

	if (l->n_pending >= l->backlog) {
		ctr.backlog_full++;
		reply_rst(h);
		return;
	}
	c = sock_alloc();
	if (!c) {
		ctr.request_no_socket++;
		reply_rst(h);
		return;
	}
	c->state = VSOCK_CONNECTED;
	c->type = l->type;
	c->local_port = l->local_port;
	c->local_cid = h->dst_cid; /* checked: addressed_to_us() or the transport */
	c->peer_cid = h->src_cid;
	c->peer_port = h->src_port;
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	c->listener = l;
	c->buf_alloc = l->buf_alloc; /* vsock_set_buf_size on the listener */
	hash_add(c);
	if (l->accept_tail)
		l->accept_tail->accept_next = c;
	else
		l->accept_head = c;
	l->accept_tail = c;
	l->n_pending++;
	accept_queued++;
	mark_ready(l);
	send_ctrl(c, VSOCK_OP_RESPONSE, 0);
}

static __attribute__((noinline)) void rx_connecting(struct vsock_sock *s,
						    const struct virtio_vsock_hdr *h)
{
	set_deadline(s, 0);
	if (h->op == VSOCK_OP_RESPONSE) {
		s->state = VSOCK_CONNECTED;
		return;
	}
	if (h->op != VSOCK_OP_RST) {
		ctr.rx_bad_op++;
		send_ctrl(s, VSOCK_OP_RST, 0);
	}
	hash_del(s);
	s->state = VSOCK_CLOSED;
	s->error = h->op == VSOCK_OP_RST ? -ECONNREFUSED : -EPROTO;
}

static void rx_shutdown(struct vsock_sock *s, uint32_t flags)
{
	s->shutdown_peer |= flags & (VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
	if (s->shutdown_peer != (VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND))
		return;
	if (!s->rx_head || s->state == VSOCK_CLOSING)
		peer_done(s);
}

static void rx_rst(struct vsock_sock *s)
{
	if (s->state == VSOCK_CLOSING || orphan(s)) {
		sock_free(s);
		return;
	}
	hash_del(s);
	set_deadline(s, 0);
	s->state = VSOCK_CLOSED;
	if (s->shutdown_peer != (VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND))
		s->error = -ECONNRESET;
}

/*
 * Everything but data on a connection. Not inline: vsock_rx's data path,
 * the one every echo takes, then keeps fewer registers to save.
 */
static __attribute__((noinline)) struct vsock_pkt *rx_ctrl(struct vsock_sock *s,
							   struct vsock_pkt *pkt)
{
	const struct virtio_vsock_hdr *h = &pkt->hdr;

	switch (h->op) {
	case VSOCK_OP_CREDIT_UPDATE:
		ctr.credit_updates_rcvd++;
		break;
	case VSOCK_OP_CREDIT_REQUEST:
		ctr.credit_requests_rcvd++;
		if (s->state == VSOCK_CONNECTED)
			send_ctrl(s, VSOCK_OP_CREDIT_UPDATE, 0);
		break;
	case VSOCK_OP_SHUTDOWN:
		rx_shutdown(s, h->flags);
		break;
	case VSOCK_OP_RST:
		rx_rst(s);
		break;
	default:
		ctr.rx_bad_op++; /* REQUEST or RESPONSE on a live connection */
		break;
	}
	return pkt;
}

/* A packet for no connection: a REQUEST for a listener, else RST. */
static __attribute__((noinline)) struct vsock_pkt *rx_no_conn(struct vsock_pkt *pkt)
{
	const struct virtio_vsock_hdr *h = &pkt->hdr;
	struct vsock_sock *l = h->op == VSOCK_OP_REQUEST ? find_listener(h->dst_port, h->type) :
							   NULL;

	if (l) {
		handle_request(l, h);
	} else {
		if (h->op != VSOCK_OP_RST)
			ctr.rx_no_socket++;
		reply_rst(h);
	}
	return pkt;
}

/*
 * Whatever the transport: a packet must be for our CID and from the host,
 * the one peer a guest has (5.10). Anything else is dropped unanswered: a
 * reply would go to an address that is not ours to talk to.
 */
static bool addressed_to_us(const struct virtio_vsock_hdr *h)
{
	if (check_dst_cid && h->dst_cid != vsock_local_cid()) {
		ctr.rx_bad_dst_cid++;
		return false;
	}
	if (h->src_cid != VSOCK_CID_HOST) {
		ctr.rx_bad_src_cid++;
		return false;
	}
	return true;
}

struct vsock_pkt *vsock_rx(struct vsock_pkt *pkt)
{
	const struct virtio_vsock_hdr *h = &pkt->hdr;
	struct vsock_sock *s;

	ctr.rx_pkts++;
	ctr.rx_bytes += h->len;
	events++;

	if (!addressed_to_us(h))
		return pkt;
	s = find_conn(h->dst_port, h->src_cid, h->src_port);
	if (!s)
		return rx_no_conn(pkt);
	if (h->type != s->type) {
		ctr.rx_bad_type++;
		reply_rst(h);
		return pkt;
	}
	/* 5.10.6.3: every packet carries the sender's credit */
	s->peer_buf_alloc = h->buf_alloc;
	s->peer_fwd_cnt = h->fwd_cnt;
	/*
	 * Credit on any packet ends the stall, and an explicit update answers
	 * our request even when it frees nothing: either way the next stall
	 * asks again.
	 */
	if (s->credit_requested && (peer_free(s) || h->op == VSOCK_OP_CREDIT_UPDATE))
		s->credit_requested = false;

	/* any packet may bring data, credit, a state change or EOF */
	mark_ready(s);
	if (s->state == VSOCK_CONNECTING) {
		rx_connecting(s, h);
		return pkt;
	}
	if (h->op == VSOCK_OP_RW)
		return rx_data(s, pkt);
	return rx_ctrl(s, pkt);
}

/* ---- the application side ---- */

struct vsock_sock *vsock_listen(uint32_t port, enum vsock_type type, unsigned int backlog)
{
	struct vsock_sock *s;

	if (find_listener(port, type) || !backlog)
		return NULL;
	s = sock_alloc();
	if (!s)
		return NULL;
	s->state = VSOCK_LISTEN;
	s->type = type;
	s->owned = true;
	s->local_port = port;
	s->backlog = backlog;
	return s;
}

unsigned int vsock_accept_queued(void)
{
	return accept_queued;
}

struct vsock_sock *vsock_accept(struct vsock_sock *l)
{
	struct vsock_sock *c = l->accept_head;

	if (!c)
		return NULL;
	l->accept_head = c->accept_next;
	if (!l->accept_head)
		l->accept_tail = NULL;
	l->n_pending--;
	accept_queued--;
	c->accept_next = NULL;
	c->listener = NULL;
	c->owned = true;
	return c;
}

static uint32_t ephemeral_port(void)
{
	for (unsigned int tries = 0; tries < 16384; tries++) {
		uint32_t p = next_ephemeral++;

		if (next_ephemeral == 65536)
			next_ephemeral = EPHEMERAL_FIRST;
		if (!port_in_use(p))
			return p;
	}
	return 0;
}

static struct vsock_sock *connect_from(uint64_t cid, uint32_t port, enum vsock_type type,
				       uint32_t local)
{
	struct vsock_sock *s = sock_alloc();

	if (!s)
		return NULL;
	s->state = VSOCK_CONNECTING;
	s->type = type;
	s->owned = true;
	s->local_port = local;
	s->local_cid = vsock_local_cid();
	s->peer_cid = cid;
	s->peer_port = port;
	hash_add(s);
	set_deadline(s, now_ns() + CONNECT_TIMEOUT_NS);
	send_ctrl(s, VSOCK_OP_REQUEST, 0);
	return s;
}

struct vsock_sock *vsock_connect(uint64_t cid, uint32_t port, enum vsock_type type)
{
	uint32_t local = ephemeral_port();

	return local ? connect_from(cid, port, type, local) : NULL;
}

struct vsock_sock *vsock_connect_from(uint64_t cid, uint32_t port, enum vsock_type type,
				      uint32_t local)
{
	return port_in_use(local) ? NULL : connect_from(cid, port, type, local);
}

int vsock_shutdown(struct vsock_sock *s, uint32_t how)
{
	how &= VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND;
	if (s->state != VSOCK_CONNECTED)
		return -ENOTCONN;
	if (!how || (s->shutdown_local | how) == s->shutdown_local)
		return 0;
	s->shutdown_local |= how;
	send_ctrl(s, VSOCK_OP_SHUTDOWN, s->shutdown_local);
	return 0;
}

void vsock_close(struct vsock_sock *s)
{
	/* the owner gives it up: never handed out again */
	unlist(s);
	s->owner = NULL;
	switch (s->state) {
	case VSOCK_LISTEN:
		while (s->accept_head) {
			struct vsock_sock *c = vsock_accept(s);

			vsock_close(c);
		}
		sock_free(s);
		return;
	case VSOCK_CONNECTING:
		send_ctrl(s, VSOCK_OP_RST, 0);
		sock_free(s);
		return;
	case VSOCK_CONNECTED:
		s->owned = false;
		drop_rx(s);
		if (s->shutdown_peer == (VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND)) {
			peer_done(s);
			return;
		}
		s->shutdown_local = VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND;
		send_ctrl(s, VSOCK_OP_SHUTDOWN, s->shutdown_local);
		s->state = VSOCK_CLOSING;
		set_deadline(s, now_ns() + CLOSE_TIMEOUT_NS);
		return;
	case VSOCK_CLOSED:
		sock_free(s);
		return;
	default:
		return;
	}
}

static uint64_t run_timers(void)
{
	uint64_t now, next = UINT64_MAX;
	bool connecting = false;

	now = now_ns();
	for (unsigned int i = 0; i < MAX_SOCKS && n_timers; i++) {
		struct vsock_sock *s = &socks[i];

		if (!s->deadline)
			continue;
		if (now < s->deadline) {
			next = s->deadline < next ? s->deadline : next;
			connecting |= s->state == VSOCK_CONNECTING;
			continue;
		}
		set_deadline(s, 0);
		events++;
		send_ctrl(s, VSOCK_OP_RST, 0);
		if (s->state == VSOCK_CONNECTING) {
			ctr.connect_timeouts++;
			hash_del(s);
			s->state = VSOCK_CLOSED;
			s->error = -ETIMEDOUT;
			mark_ready(s);
		} else if (s->state == VSOCK_CLOSING) {
			ctr.close_timeouts++;
			sock_free(s);
		}
	}
	connect_waits = connecting;
	return next;
}

/*
 * A connect or a send waits on the device: the transport looks, once a
 * second, whether the device still completes anything (check_device).
 * Returns when to look next.
 */
static uint64_t check_device(void)
{
	uint64_t now;

	if (!transport || !transport->check_device)
		return UINT64_MAX;
	now = now_ns();
	if (!device_check_at || now >= device_check_at) {
		transport->check_device(!device_check_at);
		device_check_at = now + DEVICE_CHECK_NS;
	}
	return device_check_at;
}

uint64_t vsock_poll(void)
{
	return n_timers ? run_timers() : UINT64_MAX;
}

bool vsock_poll_pass(struct vsock_pass *p)
{
	static uint64_t events_passed; /* events at the last pass */

	notified = false;
	/* most passes: no timer, no TX wait, nothing new */
	if (!(n_timers | tx_blocked) && events == events_passed)
		return false;
	p->next_timer = n_timers ? run_timers() : UINT64_MAX;
	if (tx_blocked)
		check_tx_room();
	if ((n_timers && connect_waits) || tx_blocked) {
		uint64_t t = check_device();

		p->next_timer = t < p->next_timer ? t : p->next_timer;
	} else {
		device_check_at = 0;
	}
	p->again = n_timers || tx_blocked;
	p->tx_wait = tx_blocked;
	p->changed = events != events_passed;
	events_passed = events;
	p->accept_queued = accept_queued;
	return true;
}

/*
 * 5.10.6.7: after a transport reset the peer forgot every connection;
 * they end without packets, listeners stay.
 */
void vsock_transport_reset(void)
{
	ctr.transport_resets++;
	events++;
	tx_room_known = false; /* the device may be gone: ask again */
	notify();
	for (unsigned int i = 0; i < MAX_SOCKS; i++) {
		struct vsock_sock *s = &socks[i];

		if (s->state == VSOCK_FREE || s->state == VSOCK_LISTEN || s->state == VSOCK_CLOSED)
			continue;
		if (orphan(s)) {
			sock_free(s);
			continue;
		}
		hash_del(s);
		set_deadline(s, 0);
		s->state = VSOCK_CLOSED;
		s->error = -ECONNRESET;
		mark_ready(s);
	}
}

void vsock_init(const struct vsock_transport *t)
{
	transport = t;
	tx_room_known = false;
	check_dst_cid = !t || !t->dst_cid_checked;
}

enum vsock_state vsock_state(const struct vsock_sock *s)
{
	return s->state;
}

int vsock_error(const struct vsock_sock *s)
{
	return s->error;
}

void vsock_get_info(const struct vsock_sock *s, struct vsock_info *in)
{
	in->state = s->state;
	in->type = s->type;
	in->local_port = s->local_port;
	in->peer_port = s->peer_port;
	in->peer_cid = s->peer_cid;
	in->buf_alloc = s->buf_alloc;
	in->fwd_cnt = s->fwd_cnt;
	in->rx_queued = rx_queued(s);
	in->peer_buf_alloc = s->peer_buf_alloc;
	in->peer_fwd_cnt = s->peer_fwd_cnt;
	in->tx_cnt = s->tx_cnt;
	in->peer_free = peer_free(s);
	in->rx_bytes = s->rx_bytes;
	in->tx_bytes = s->tx_bytes;
	in->accept_queue = s->n_pending;
	in->peer_shutdown = s->shutdown_peer;
	in->rcvlowat = s->rcvlowat;
	in->owner = s->owner;
	in->on_ready = s->on_ready;
	in->on_tx_wait = s->on_tx_wait;
}

struct vsock_sock *vsock_next(struct vsock_sock *prev)
{
	unsigned int i = prev ? (unsigned int)(prev - socks) + 1 : 0;

	for (; i < MAX_SOCKS; i++)
		if (socks[i].state != VSOCK_FREE)
			return &socks[i];
	return NULL;
}
