// SPDX-License-Identifier: MIT
/*
 * A hostile driver on demand: `attack MODE [every=N] [count=N]` (or the
 * boot keys attack, attack_every, attack_count) writes COUNT malformed
 * packets or forged ring entries, one every N ms, into the live vsock TX
 * queue while the services run beside it, then watches what the device
 * does: it answers (completes what it was given), keeps some buffers
 * for good while completing others, or falls silent, in which case the
 * TX queue is marked broken and the transport resets the device
 * (virtio_pci.c, the virtio-recover context), as for any device that
 * stopped answering.
 *
 * Header modes go through the ring API with a descriptor of the length
 * the mode wants (split and packed); ring modes write descriptors the
 * ring API would never write (virtq_add_forged; a few are for one layout
 * only, and say "not for this ring" on the other). Modes that
 * lie about a connection use the "victim": a connected socket of the
 * mode's type on attack_port (the sink's port by default; any connected
 * SEQPACKET socket for the seqpacket modes), else ports nobody uses.
 *
 * The virtio-net modes (net_attack.c) run the same way on the virtio-net
 * TX queue: the same command, boot keys, tally and silence watch.
 *
 * Off by default, and nothing here runs on the data path: the context
 * joins the loop with the first attack (the command or the boot key).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/hostile.h"
#include "drivers/virtio/net_attack.h"
#include "drivers/virtio/vsock_attack.h"
#include "kernel/config.h"
#include "kernel/dma.h"
#include "kernel/poll.h"
#include "kernel/printk.h"
#include "kernel/shell.h"
#include "kernel/shell_json.h"
#include "kernel/time.h"
#include "net/vsock/vsock.h"

#define NS_PER_MS 1000000ULL
#define UNUSED_PORT HOSTILE_UNUSED_PORT
#define FLOOD_BURST 256u
#define PAYLOAD 16u

struct attack_mode {
	const char *name;
	const char *help;
	enum vsock_type type; /* of the victim, and of the packets */
	int (*send)(const struct attack_mode *m, const struct hostile_victim *t, uint32_t nth);
	int arg;
	int ring; /* one layout only: ONLY_SPLIT, ONLY_PACKED; or ON_NET */
};

#define ONLY_SPLIT 1
#define ONLY_PACKED 2
#define ON_NET 3 /* a virtio-net mode: the virtio-net TX queue */

struct attack_tally {
	uint64_t runs, sent, refused, answered, kept, silent;
};

static int send_hdr(const struct attack_mode *m, const struct hostile_victim *t, uint32_t nth);
static int send_ring(const struct attack_mode *m, const struct hostile_victim *t, uint32_t nth);
static int send_avail_jump(const struct attack_mode *m, const struct hostile_victim *t,
			   uint32_t nth);
static int send_notify_flood(const struct attack_mode *m, const struct hostile_victim *t,
			     uint32_t nth);
static int send_wrong_way(const struct attack_mode *m, const struct hostile_victim *t,
			  uint32_t nth);
static int send_net(const struct attack_mode *m, const struct hostile_victim *t, uint32_t nth);

/* Header modes: what each changes in an otherwise honest header. */
enum hdr_lie {
	LIE_LEN_BUF,
	LIE_LEN_64K,
	LIE_LEN_NEG,
	LIE_OP,
	LIE_TYPE,
	LIE_RESPONSE,
	LIE_RW_UNUSED,
	LIE_SRC_HOST,
	LIE_SRC_OTHER,
	LIE_BUF_ZERO,
	LIE_BUF_HUGE,
	LIE_BUF_SHRINK,
	LIE_FWD_BACK,
	LIE_FWD_JUMP,
	LIE_CREDIT_FLOOD,
	LIE_SEQ_NO_EOM,
	LIE_SEQ_HUGE,
	LIE_SHUTDOWN_BITS,
};

/* Ring modes: the descriptors written (split ring, virtio 1.2 §2.7.5). */
enum ring_lie {
	RING_LOOP,
	RING_LONG,
	RING_ADDR_OUT,
	RING_ADDR_WRAP,
	RING_LEN_ZERO,
	RING_LEN_4G,
	RING_INDIRECT_NESTED,
	RING_INDIRECT_ODD,
	RING_INDIRECT_EMPTY,
	PACKED_NEXT_LAST,
	PACKED_WRAP_LIE,
	PACKED_WRAP_CHAIN,
	PACKED_WRAP_STALE,
};

/* name, help, type of the victim and packets, sender, its argument, ring mode */
#define S VSOCK_TYPE_STREAM
#define Q VSOCK_TYPE_SEQPACKET
#define ATTACK_MODES(X)                                                                            \
	X("len-over-buf", "RW whose len is larger than its buffer", S, send_hdr, LIE_LEN_BUF, 0)   \
	X("len-over-64k", "RW of 68 KiB, buffer as large", S, send_hdr, LIE_LEN_64K, 0)            \
	X("len-negative", "RW whose len is negative as s32", S, send_hdr, LIE_LEN_NEG, 0)          \
	X("bad-op", "op 42 on the victim's ports", S, send_hdr, LIE_OP, 0)                         \
	X("bad-type", "type 9 RW on the victim's ports", S, send_hdr, LIE_TYPE, 0)                 \
	X("response", "RESPONSE nobody asked for, on the victim", S, send_hdr, LIE_RESPONSE, 0)    \
	X("rw-unused", "RW for a port nobody uses", S, send_hdr, LIE_RW_UNUSED, 0)                 \
	X("src-cid-host", "RW with the host's CID as source", S, send_hdr, LIE_SRC_HOST, 0)        \
	X("src-cid-other", "RW with another guest's CID as source", S, send_hdr, LIE_SRC_OTHER, 0) \
	X("buf-alloc-zero", "CREDIT_UPDATE with buf_alloc 0", S, send_hdr, LIE_BUF_ZERO, 0)        \
	X("buf-alloc-huge", "CREDIT_UPDATE with buf_alloc 4 GiB - 1", S, send_hdr, LIE_BUF_HUGE,   \
	  0)                                                                                       \
	X("buf-alloc-shrink", "CREDIT_UPDATEs with buf_alloc halving", S, send_hdr,                \
	  LIE_BUF_SHRINK, 0)                                                                       \
	X("fwd-cnt-back", "CREDIT_UPDATE with fwd_cnt 64 KiB backwards", S, send_hdr,              \
	  LIE_FWD_BACK, 0)                                                                         \
	X("fwd-cnt-jump", "CREDIT_UPDATE with fwd_cnt 1 GiB past what was sent", S, send_hdr,      \
	  LIE_FWD_JUMP, 0)                                                                         \
	X("credit-flood", "CREDIT_REQUESTs, 256 a burst", S, send_hdr, LIE_CREDIT_FLOOD, 0)        \
	X("seq-no-eom", "SEQPACKET RWs of 4 KiB, never an EOM", Q, send_hdr, LIE_SEQ_NO_EOM, 0)    \
	X("seq-huge", "SEQPACKET RWs of 64 KiB, never an EOM", Q, send_hdr, LIE_SEQ_HUGE, 0)       \
	X("shutdown-bits", "SHUTDOWN with only undefined flag bits", S, send_hdr,                  \
	  LIE_SHUTDOWN_BITS, 0)                                                                    \
	X("ring-loop", "chain of two descriptors pointing at each other", S, send_ring, RING_LOOP, \
	  ONLY_SPLIT)                                                                              \
	X("ring-long", "chain through every free descriptor, last back to the first", S,           \
	  send_ring, RING_LONG, ONLY_SPLIT)                                                        \
	X("ring-addr-out", "buffer beyond guest memory", S, send_ring, RING_ADDR_OUT, 0)           \
	X("ring-addr-wrap", "buffer whose end wraps past 2^64", S, send_ring, RING_ADDR_WRAP, 0)   \
	X("ring-len-zero", "one descriptor of length 0", S, send_ring, RING_LEN_ZERO, 0)           \
	X("ring-len-4g", "one descriptor of length 4 GiB - 1", S, send_ring, RING_LEN_4G, 0)       \
	X("ring-write-tx", "device-writable buffer on TX", S, send_wrong_way, 0, 0)                \
	X("ring-rx-readonly", "device-readable buffer on RX", S, send_wrong_way, 1, 0)             \
	X("ring-indirect-nested", "indirect table inside an indirect table", S, send_ring,         \
	  RING_INDIRECT_NESTED, 0)                                                                 \
	X("ring-indirect-odd", "indirect table of 17 bytes", S, send_ring, RING_INDIRECT_ODD, 0)   \
	X("ring-indirect-empty", "indirect table of 0 bytes", S, send_ring, RING_INDIRECT_EMPTY,   \
	  0)                                                                                       \
	X("ring-avail-jump", "avail->idx moved past the ring size", S, send_avail_jump, 0,         \
	  ONLY_SPLIT)                                                                              \
	X("packed-next-last", "one slot flagged NEXT, the next slot not available", S, send_ring,  \
	  PACKED_NEXT_LAST, ONLY_PACKED)                                                           \
	X("packed-wrap-lie", "one slot whose avail/used bits lie about the wrap counter", S,       \
	  send_ring, PACKED_WRAP_LIE, ONLY_PACKED)                                                 \
	X("packed-wrap-chain", "legal: a chain from the ring's last slot on into slot 0", S,       \
	  send_ring, PACKED_WRAP_CHAIN, ONLY_PACKED)                                               \
	X("packed-wrap-stale", "a chain from the last slot into slot 0 with the old wrap bits", S, \
	  send_ring, PACKED_WRAP_STALE, ONLY_PACKED)                                               \
	X("notify-flood", "kicks with no new buffer, 2000 a burst", S, send_notify_flood, 0, 0)

#define MODE_ENTRY(name, help, type, fn, arg, ring) { name, help, type, fn, arg, ring },
#define NET_ENTRY(name, help, lie) { name, help, S, send_net, lie, ON_NET },
static const struct attack_mode modes[] = { ATTACK_MODES(MODE_ENTRY) NET_ATTACK_MODES(NET_ENTRY) };
#undef MODE_ENTRY
#undef NET_ENTRY
#define N_MODES (sizeof(modes) / sizeof(modes[0]))

/* "off", then every mode's name: the boot key's choices, there before
 * the command line is parsed. */
#define MODE_NAME(name, help, type, fn, arg, ring) name,
#define NET_NAME(name, help, lie) name,
static const char *const mode_names[] = { "off",
					  ATTACK_MODES(MODE_NAME) NET_ATTACK_MODES(NET_NAME) NULL };
#undef MODE_NAME
#undef NET_NAME
#undef S
#undef Q

CONFIG_KEY(cfg_attack) = {
	.name = "attack",
	.help = "hostile driver: start this attack mode at boot (`attack list`)",
	.type = CONFIG_ENUM,
	.choices = mode_names,
	.def = 0,
};

CONFIG_KEY(cfg_attack_every) = {
	.name = "attack_every",
	.help = "hostile driver: ms between two attack packets",
	.type = CONFIG_UINT,
	.min = 1,
	.max = 60000,
	.def = 20,
};

CONFIG_KEY(cfg_attack_count) = {
	.name = "attack_count",
	.help = "hostile driver: attack packets per run",
	.type = CONFIG_UINT,
	.min = 1,
	.max = 1000000,
	.def = 20,
};

CONFIG_KEY(cfg_attack_port) = {
	.name = "attack_port",
	.help = "hostile driver: the victim is a connection on this local port",
	.type = CONFIG_UINT,
	.min = 1,
	.max = 0xffffffff,
	.def = 1235,
};

struct attack_run {
	const struct attack_mode *mode;
	uint32_t every_ms, count, sent;
	uint64_t next_ns; /* next packet */
	struct tx_watch watch; /* of the mode's TX queue */
	uint64_t resets0; /* transport resets before the run */
	bool active, settling;
	bool json; /* started as `attack MODE ... json`: the end as a JSON line too */
};

static struct attack_run run;
static struct attack_tally tally[N_MODES];
static struct poll_ctx attack_ctx;

/* ---- what goes into the queue ---- */

/* The queue a mode writes into, NULL without its device. */
static struct virtq *mode_txq(const struct attack_mode *m)
{
	return m->ring == ON_NET ? virtio_net_txq() : virtio_vsock_txq();
}

static void find_target(const struct attack_mode *m, struct hostile_victim *t)
{
	hostile_victim(m->type, config_get(&cfg_attack_port), t);
}

static int send_hdr(const struct attack_mode *m, const struct hostile_victim *t, uint32_t nth)
{
	struct virtio_vsock_hdr h;
	uint32_t payload = 0, desc_payload = 0;
	unsigned int burst = 1, i;
	int ret = 0;

	hostile_hdr(t, VSOCK_OP_CREDIT_UPDATE, &h);
	switch ((enum hdr_lie)m->arg) {
	case LIE_LEN_BUF:
		h.op = VSOCK_OP_RW;
		h.len = 4096;
		payload = desc_payload = PAYLOAD;
		break;
	case LIE_LEN_64K:
		h.op = VSOCK_OP_RW;
		h.len = payload = desc_payload = VSOCK_MAX_PKT_PAYLOAD + 4096;
		break;
	case LIE_LEN_NEG:
		h.op = VSOCK_OP_RW;
		h.len = 0x80000000u + PAYLOAD;
		payload = desc_payload = PAYLOAD;
		break;
	case LIE_OP:
		h.op = 42;
		break;
	case LIE_TYPE:
		h.op = VSOCK_OP_RW;
		h.type = 9;
		h.len = payload = desc_payload = PAYLOAD;
		break;
	case LIE_RESPONSE:
		h.op = VSOCK_OP_RESPONSE;
		break;
	case LIE_RW_UNUSED:
		h.op = VSOCK_OP_RW;
		h.src_port = UNUSED_PORT + 2;
		h.dst_port = UNUSED_PORT + 3 + nth;
		h.len = payload = desc_payload = PAYLOAD;
		break;
	case LIE_SRC_HOST:
	case LIE_SRC_OTHER:
		h.op = VSOCK_OP_RW;
		h.src_cid = m->arg == LIE_SRC_HOST ? VSOCK_CID_HOST : h.src_cid + 1;
		h.len = payload = desc_payload = PAYLOAD;
		break;
	case LIE_BUF_ZERO:
		h.buf_alloc = 0;
		break;
	case LIE_BUF_HUGE:
		h.buf_alloc = 0xffffffffu;
		break;
	case LIE_BUF_SHRINK:
		h.buf_alloc = t->buf_alloc >> (1 + nth % 16);
		break;
	case LIE_FWD_BACK:
		h.fwd_cnt = t->fwd_cnt - 65536;
		break;
	case LIE_FWD_JUMP:
		h.fwd_cnt = t->fwd_cnt + 0x40000000u;
		break;
	case LIE_CREDIT_FLOOD:
		h.op = VSOCK_OP_CREDIT_REQUEST;
		burst = FLOOD_BURST;
		break;
	case LIE_SEQ_NO_EOM:
	case LIE_SEQ_HUGE:
		h.op = VSOCK_OP_RW;
		h.len = m->arg == LIE_SEQ_HUGE ? VSOCK_MAX_PKT_PAYLOAD : 4096;
		payload = desc_payload = h.len;
		break;
	case LIE_SHUTDOWN_BITS:
		h.op = VSOCK_OP_SHUTDOWN;
		h.flags = ~(VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND);
		break;
	}
	/* a burst that found the ring full part way still went out */
	for (i = 0; i < burst && !ret; i++)
		ret = hostile_queue_pkt(&h, payload, VSOCK_HDR_LEN + desc_payload);
	return i > 1 ? 0 : ret;
}

/*
 * Honest CREDIT_UPDATEs on the victim until the next buffer starts in the
 * ring's last slot (true), or the ring is full (false: again next time).
 */
static bool reach_last_slot(const struct attack_mode *m, const struct hostile_victim *t)
{
	struct virtq *vq = virtio_vsock_txq();
	struct virtio_vsock_hdr h;

	hostile_hdr(t, VSOCK_OP_CREDIT_UPDATE, &h);
	while (virtq_forge_next_slot(vq) != virtq_size(vq) - 1)
		if (virtq_free_slots(vq) < 3 || hostile_queue_pkt(&h, 0, VSOCK_HDR_LEN))
			return false;
	return virtq_free_slots(vq) >= 2;
}

/*
 * Ring modes: a valid header in a buffer of our own (freed when the chain
 * completes), then descriptors around it that break one rule each.
 */
static int send_ring(const struct attack_mode *m, const struct hostile_victim *t, uint32_t nth)
{
	struct virtq *vq = virtio_vsock_txq();
	struct virtq_desc one[1], two[2], *d = one;
	struct vsock_pkt *pkt;
	uint64_t hdr_pa;
	unsigned int n = 1, k;
	int ret;

	(void)nth;
	if (!vq)
		return -ENODEV;
	if ((m->ring == ONLY_SPLIT && virtq_layout(vq) != VIRTQ_SPLIT) ||
	    (m->ring == ONLY_PACKED && virtq_layout(vq) != VIRTQ_PACKED))
		return -EOPNOTSUPP;
	if (m->arg >= RING_INDIRECT_NESTED && m->arg <= RING_INDIRECT_EMPTY &&
	    !(virtq_features(vq) & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC)))
		return -EOPNOTSUPP;
	pkt = vsock_pkt_alloc(64);
	if (!pkt)
		return -ENOMEM;
	hostile_hdr(t, VSOCK_OP_CREDIT_UPDATE, &pkt->hdr);
	hdr_pa = virt_to_phys(&pkt->hdr);
	one[0] = (struct virtq_desc){ hdr_pa, VSOCK_HDR_LEN, 0, 0xffff };
	switch ((enum ring_lie)m->arg) {
	case RING_LOOP:
	case RING_LONG:
		n = m->arg == RING_LOOP ? 2 : virtq_free_slots(vq);
		if (n < 2) {
			vsock_pkt_free(pkt);
			return -ENOSPC;
		}
		d = calloc(n, sizeof(*d));
		if (!d) {
			vsock_pkt_free(pkt);
			return -ENOMEM;
		}
		/* 2.7.5.3.1: a chain never loops; this one's last points at its first */
		for (k = 0; k < n; k++)
			d[k] = (struct virtq_desc){ hdr_pa, k ? 8 : VSOCK_HDR_LEN,
						    VIRTQ_DESC_F_NEXT, (k + 1) % n };
		break;
	case PACKED_NEXT_LAST:
		/* 2.8.6: the chain goes on into a slot not made available */
		one[0].flags = VIRTQ_DESC_F_NEXT;
		break;
	case PACKED_WRAP_LIE:
		/* 2.8.1: available only to a device whose wrap counter differs */
		one[0].next = VIRTQ_FORGE_WRAP_LIE;
		break;
	case PACKED_WRAP_CHAIN:
	case PACKED_WRAP_STALE:
		/*
		 * 2.8.1, 2.8.6: the header split over the last slot and slot 0;
		 * slot 0 is written on the next lap, with the flipped counter,
		 * or (stale) with the counter of the lap before.
		 */
		if (!reach_last_slot(m, t)) {
			vsock_pkt_free(pkt);
			return -ENOSPC;
		}
		n = 2;
		d = two;
		two[0] = (struct virtq_desc){ hdr_pa, 20, VIRTQ_DESC_F_NEXT, 1 };
		two[1] = (struct virtq_desc){ hdr_pa + 20, VSOCK_HDR_LEN - 20, 0,
					      m->arg == PACKED_WRAP_STALE ? VIRTQ_FORGE_WRAP_LIE :
									    0 };
		break;
	case RING_ADDR_OUT:
		one[0].addr = 1ULL << 46; /* far past any memory QEMU gives a guest */
		break;
	case RING_ADDR_WRAP:
		one[0].addr = ~0ULL - 0xfff;
		one[0].len = 0x2000;
		break;
	case RING_LEN_ZERO:
		one[0].len = 0;
		break;
	case RING_LEN_4G:
		one[0].len = 0xffffffffu;
		break;
	case RING_INDIRECT_NESTED:
	case RING_INDIRECT_ODD:
	case RING_INDIRECT_EMPTY: {
		/* the table lives in the packet's payload, after the header */
		struct virtq_desc *table = (struct virtq_desc *)pkt->data;

		table[0] = (struct virtq_desc){ hdr_pa, VSOCK_HDR_LEN, 0, 0 };
		if (m->arg == RING_INDIRECT_NESTED)
			table[0] = (struct virtq_desc){ virt_to_phys(&table[1]), 16,
							VIRTQ_DESC_F_INDIRECT, 0 };
		table[1] = (struct virtq_desc){ hdr_pa, VSOCK_HDR_LEN, 0, 0 };
		/* 2.8.19: a packed table's flags sit where a split one's next is */
		if (virtq_layout(vq) == VIRTQ_PACKED)
			table[0].next = table[0].flags, table[0].flags = 0;
		one[0].addr = virt_to_phys(table);
		one[0].flags = VIRTQ_DESC_F_INDIRECT;
		one[0].len = m->arg == RING_INDIRECT_ODD   ? 17 :
			     m->arg == RING_INDIRECT_EMPTY ? 0 :
							     16;
		break;
	}
	}
	ret = virtq_add_forged(vq, d, n, pkt);
	if (d != one && d != two)
		free(d);
	if (ret)
		vsock_pkt_free(pkt);
	return ret;
}

/*
 * Buffers the wrong way round, through the ring API (both layouts): a
 * device-writable one on TX (arg 0), a device-readable one on RX (arg 1).
 * Either comes back through the driver's own reclaim or reap.
 */
static int send_wrong_way(const struct attack_mode *m, const struct hostile_victim *t, uint32_t nth)
{
	struct virtq *vq = virtio_vsock_txq();
	struct vsock_pkt *pkt;
	struct vbuf b;
	int ret;

	(void)nth;
	if (!vq)
		return -ENODEV;
	pkt = vsock_pkt_alloc(64);
	if (!pkt)
		return -ENOMEM;
	hostile_hdr(t, VSOCK_OP_CREDIT_UPDATE, &pkt->hdr);
	b.addr = &pkt->hdr;
	b.len = VSOCK_HDR_LEN + 64;
	if (m->arg)
		ret = virtio_vsock_post_rx(pkt, &b, 1, NULL, 0);
	else
		ret = virtq_add(vq, NULL, 0, &b, 1, pkt);
	if (ret)
		vsock_pkt_free(pkt);
	return ret;
}

static int send_avail_jump(const struct attack_mode *m, const struct hostile_victim *t,
			   uint32_t nth)
{
	struct virtq *vq = virtio_vsock_txq();

	(void)m, (void)t, (void)nth;
	if (!vq)
		return -ENODEV;
	/* 2.7.13.3: the driver is never more than the ring size ahead */
	return virtq_forge_avail_idx(vq, virtq_size(vq) + 1) ? 0 : -EOPNOTSUPP;
}

static int send_net(const struct attack_mode *m, const struct hostile_victim *t, uint32_t nth)
{
	(void)t;
	return net_attack_send((enum net_lie)m->arg, nth);
}

static int send_notify_flood(const struct attack_mode *m, const struct hostile_victim *t,
			     uint32_t nth)
{
	struct virtq *vq = virtio_vsock_txq();

	(void)m, (void)t, (void)nth;
	if (!vq)
		return -ENODEV;
	for (unsigned int i = 0; i < 2000; i++)
		virtq_notify(vq);
	return 0;
}

/* ---- the run ---- */

/* The end of a run started with `json`, for programs: "attack-json: {...}". */
static void stop_json(const char *how, uint64_t resets)
{
	struct json_writer *w = shell_json_begin();

	json_put_string(w, "mode", run.mode->name);
	json_put_string(w, "outcome", how);
	json_put_u64(w, "sent", run.sent);
	json_put_u64(w, "count", run.count);
	if (run.mode->ring != ON_NET)
		json_put_u64(w, "transport_resets", resets);
	shell_json_end("attack");
}

static void attack_stop(const char *how)
{
	uint64_t resets = vsock_counters()->transport_resets - run.resets0;

	if (run.json)
		stop_json(how, resets);
	if (run.mode->ring == ON_NET)
		pr_warn("attack %s: %s: sent %u of %u\n", run.mode->name, how, run.sent, run.count);
	else
		pr_warn("attack %s: %s: sent %u of %u, transport resets %llu\n", run.mode->name,
			how, run.sent, run.count, (unsigned long long)resets);
	run.active = false;
}

/*
 * After the last packet: a harmless probe (vsock: an RST between ports
 * nobody uses; virtio-net has normal traffic), then wait until TX is
 * drained. A device that completes nothing for HOSTILE_SILENCE_NS while
 * buffers are out did not survive it on its own: the queue is marked
 * broken, and the transport resets the device.
 */
static void settle_start(uint64_t now)
{
	if (run.mode->ring != ON_NET)
		hostile_probe();
	run.settling = true;
	tx_watch_settle(&run.watch, mode_txq(run.mode), now);
}

static void settle(uint64_t now)
{
	struct attack_tally *t = &tally[run.mode - modes];
	struct virtq *vq = mode_txq(run.mode);
	char how[64];

	switch (tx_watch_verdict(&run.watch, vq, now)) {
	case TXW_WAIT:
		return;
	case TXW_ANSWERED:
		t->answered++;
		attack_stop("done, device answered");
		return;
	case TXW_KEPT:
		t->kept++;
		snprintf(how, sizeof(how), "done, device keeps %llu buffers",
			 (unsigned long long)tx_watch_kept(&run.watch, vq));
		attack_stop(how);
		return;
	case TXW_SILENT:
		t->silent++;
		virtq_mark_broken(vq); /* virtio-recover resets the device */
		attack_stop("done, device silent: reset");
		return;
	case TXW_NO_DEVICE:
		t->silent++;
		attack_stop("done, no device");
		return;
	case TXW_BUSY:
		attack_stop("done, device still busy");
		return;
	}
}

/* While an attack runs: a look every millisecond, by the clock. */
static unsigned int attack_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct attack_tally *t;
	struct hostile_victim tgt;
	uint64_t now = now_ns();
	struct virtq *vq;
	int ret;

	if (!run.active)
		return 0;
	poll_schedule_at(ctx, now + NS_PER_MS);
	if (run.settling) {
		settle(now);
		return 0;
	}
	vq = mode_txq(run.mode);
	if (!vq || now < run.next_ns)
		return 0; /* the boot key waits for the device */
	t = &tally[run.mode - modes];
	find_target(run.mode, &tgt);
	ret = run.mode->send(run.mode, &tgt, run.sent);
	if (ret == -EOPNOTSUPP) {
		attack_stop("not for this ring or feature set");
		return 1;
	}
	if (ret == -EIO || virtq_is_broken(vq)) {
		tally[run.mode - modes].silent++;
		attack_stop("done, queue broken: reset");
		return 1;
	}
	virtq_kick(vq); /* also what a burst queued before the ring filled */
	if (ret) {
		t->refused++; /* ring full: try again next time */
		if (tx_watch_silent(&run.watch, vq, now)) {
			/* full, and the device takes nothing: settle says silent */
			run.settling = true;
			tx_watch_settle(&run.watch, vq, now);
			return 1;
		}
	} else {
		run.sent++;
		t->sent++;
	}
	run.next_ns = now + run.every_ms * NS_PER_MS;
	if (run.sent >= run.count)
		settle_start(now);
	return 1;
}

static struct poll_ctx attack_ctx = {
	.name = "vsock-attack",
	.poll = attack_poll,
};

/*
 * The context joins the loop with the first attack, not at boot: a
 * guest that never attacks runs exactly the contexts it ran before.
 */
static int attack_start(const struct attack_mode *m, uint32_t every_ms, uint32_t count)
{
	if (!attack_ctx.cpu) {
		int ret = poll_ctx_add(&attack_ctx);

		if (ret)
			return ret;
	}
	memset(&run, 0, sizeof(run));
	run.mode = m;
	run.every_ms = every_ms;
	run.count = count;
	run.active = true;
	run.resets0 = vsock_counters()->transport_resets;
	tx_watch_begin(&run.watch, mode_txq(m), now_ns());
	tally[m - modes].runs++;
	pr_warn("attack %s: start: %u packets, one every %u ms\n", m->name, count, every_ms);
	poll_schedule(&attack_ctx);
	return 0;
}

/* ---- console and boot key ---- */

static const struct attack_mode *find_mode(const char *name)
{
	for (unsigned int i = 0; i < N_MODES; i++)
		if (!strcmp(modes[i].name, name))
			return &modes[i];
	return NULL;
}

static const char *mode_ring(const struct attack_mode *m)
{
	return m->ring == ONLY_SPLIT  ? "split" :
	       m->ring == ONLY_PACKED ? "packed" :
	       m->ring == ON_NET      ? "net" :
					"any";
}

static int list_modes_json(void)
{
	struct json_writer *w = shell_json_begin();

	json_open(w, "modes", '[');
	for (unsigned int i = 0; i < N_MODES; i++) {
		const struct attack_tally *t = &tally[i];

		json_open(w, NULL, '{');
		json_put_string(w, "name", modes[i].name);
		json_put_string(w, "help", modes[i].help);
		json_put_string(w, "ring", mode_ring(&modes[i]));
		json_put_u64(w, "runs", t->runs);
		json_put_u64(w, "sent", t->sent);
		json_put_u64(w, "refused", t->refused);
		json_put_u64(w, "answered", t->answered);
		json_put_u64(w, "silent", t->silent);
		json_put_u64(w, "kept", t->kept);
		json_close(w, '}');
	}
	json_close(w, ']');
	return shell_json_end("attack");
}

static void list_modes(void)
{
	for (unsigned int i = 0; i < N_MODES; i++) {
		const struct attack_tally *t = &tally[i];

		printf("  %-22s %s%s; runs %llu sent %llu refused %llu answered %llu silent %llu "
		       "kept %llu\n",
		       modes[i].name, modes[i].help,
		       modes[i].ring == ONLY_SPLIT  ? " (split ring)" :
		       modes[i].ring == ONLY_PACKED ? " (packed ring)" :
		       modes[i].ring == ON_NET	    ? " (virtio-net)" :
						      "",
		       (unsigned long long)t->runs, (unsigned long long)t->sent,
		       (unsigned long long)t->refused, (unsigned long long)t->answered,
		       (unsigned long long)t->silent, (unsigned long long)t->kept);
	}
}

static int parse_opt(const char *arg, const char *key, uint64_t max, uint32_t *out)
{
	size_t n = strlen(key);
	char *end;
	unsigned long long v;

	if (strncmp(arg, key, n) || arg[n] != '=')
		return 1;
	v = strtoull(arg + n + 1, &end, 0);
	if (!arg[n + 1] || *end || arg[n + 1] == '-' || v < 1 || v > max)
		return shell_error("attack: %s must be 1..%llu, got '%s'", key,
				   (unsigned long long)max, arg + n + 1);
	*out = v;
	return 0;
}

static int cmd_attack(int argc, char **argv)
{
	uint32_t every = config_get(&cfg_attack_every), count = config_get(&cfg_attack_count);
	bool json = shell_json_wanted(&argc, argv);
	const struct attack_mode *m;

	if (argc < 2) {
		if (run.active)
			printf("attack %s: running, sent %u of %u\n", run.mode->name, run.sent,
			       run.count);
		else
			printf("no attack running\n");
		return 0;
	}
	if (!strcmp(argv[1], "list")) {
		if (json)
			return list_modes_json();
		list_modes();
		return 0;
	}
	if (!strcmp(argv[1], "stop")) {
		if (run.active)
			attack_stop("stopped");
		return 0;
	}
	m = find_mode(argv[1]);
	if (!m)
		return shell_error("attack: no mode '%s' (attack list)", argv[1]);
	if (run.active)
		return shell_error("attack: %s is running (attack stop)", run.mode->name);
	/* the boot key waits for its device; a command would only seem to hang */
	if (m->ring == ON_NET && !virtio_net_txq())
		return shell_error("attack: %s needs a virtio-net device", m->name);
	for (int i = 2; i < argc; i++) {
		int r = parse_opt(argv[i], "every", cfg_attack_every.max, &every);

		if (r > 0)
			r = parse_opt(argv[i], "count", cfg_attack_count.max, &count);
		if (r > 0)
			return shell_error("attack: unknown option '%s'", argv[i]);
		if (r < 0)
			return r;
	}
	if (attack_start(m, every, count))
		return shell_error("attack: no room for a poll context (POLL_MAX)");
	run.json = json;
	return 0;
}

static const struct shell_cmd attack_cmd = {
	.name = "attack",
	.usage = "list | stop | MODE [every=MS] [count=N] [json]",
	.help = "hostile driver: malformed packets or ring entries into vsock or virtio-net TX",
	.run = cmd_attack,
};

static bool attack_ready; /* vsock_attack_init ran */

static void boot_key_changed(struct config_key *key)
{
	uint64_t v = config_get(key);

	/* parsed before vsock_attack_init: it calls again once the device driver is there */
	if (!attack_ready)
		return;
	if (v && !run.active &&
	    attack_start(&modes[v - 1], config_get(&cfg_attack_every),
			 config_get(&cfg_attack_count)))
		pr_err("attack: no room for a poll context (POLL_MAX)\n");
}

static struct config_hook boot_hook = { .fn = boot_key_changed };

void vsock_attack_init(void)
{
	attack_ready = true;
	shell_register(&attack_cmd);
	config_on_change(&cfg_attack, &boot_hook);
	boot_key_changed(&cfg_attack);
}
