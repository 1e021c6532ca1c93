// SPDX-License-Identifier: MIT
/*
 * drivers/virtio/virtio_vsock.c on the host, both ring layouts, with the
 * real socket layer (net/vsock/) above it and the device-side ring model
 * (ring_model.c) below it standing in for the device: RX refill and
 * header checks on what the device wrote, TX fast path and the software
 * queue with one kick per flush, transport-reset events (5.10.6.7), and
 * remove giving back every buffer. The driver's and the socket layer's
 * poll contexts run in the real loop (kernel/poll.c): what schedules
 * them, and what the watchdog's check finds. The PCI transport is
 * fake_virtio_pci.c.
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

#include "drivers/virtio/virtio_pci.h"
#include "kernel/config.h"
#include "app/json.h"
#include "kernel/poll.h"
#include "kernel/stats.h"
#include "net/vsock/vsock.h"
#include "fake_virtio_pci.h"
#include "ring_model.h"
#include "stub_kernel.h"

#define QSIZE 16
#define GUEST_CID 3
#define RXQ 0
#define TXQ 1
#define EVQ 2

void virtio_vsock_init(void);

/* ---- the loop's contexts, and kernel stubs ---- */

static void (*stats_print)(void);
static void (*stats_json_fn)(struct json_writer *w);

static struct virtq **const queues = fake_pci_queues;
static struct ring_model *const models = fake_pci_models;
static unsigned long *const kicks = fake_pci_kicks;

/* A context of this CPU's loop, by name (NULL: not added). */
static struct poll_ctx *ctx_named(const char *name)
{
	for (uint32_t b = poll_ctx_bits(); b; b &= b - 1)
		if (!strcmp(poll_ctx_at(b & -b)->name, name))
			return poll_ctx_at(b & -b);
	return NULL;
}

/* The driver's (virtio_vsock_init) and the socket layer's (vsock_poller_init). */
static struct poll_ctx *dev_ctx(void)
{
	struct poll_ctx *c = ctx_named("virtio-vsock");

	assert_non_null(c);
	return c;
}

static struct poll_ctx *pass_ctx(void)
{
	return ctx_named("vsock");
}

/* What the watchdog's look at the driver's context finds. */
static enum poll_verdict dev_check(void)
{
	const char *what;

	return dev_ctx()->check(dev_ctx(), false, &what);
}

void stats_register(const char *name, void (*print)(void), void (*json)(struct json_writer *w))
{
	stats_print = print;
	stats_json_fn = json;
}

/* What the driver said on the console, appended (the report tests read it). */
static char printed[1024];

void printk(int level, const char *fmt, ...)
{
	size_t n = strlen(printed);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(printed + n, sizeof(printed) - n, fmt, ap);
	va_end(ap);
}

static unsigned int times_printed(const char *what)
{
	unsigned int n = 0;

	for (const char *p = printed; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static uint64_t fake_now = 1000;

uint64_t now_ns(void)
{
	return fake_now;
}

/* The guest CID in the config space (5.10.4), read at probe and after a reset. */
static void set_cid(uint64_t cid)
{
	memcpy(fake_pci_config, &cid, sizeof(cid));
}

/* ---- fixture ---- */

static struct virtio_device vdev;
static long dma_live_before;

/* A device whose RX and event queues interrupt on @vector (-1: polled, irq=poll). */
static void start_with(enum virtq_layout l, int vector)
{
	config_reset();
	dma_live_before = stub_dma_live;
	fake_pci_reset();
	fake_pci_layout = l;
	fake_pci_qsize = QSIZE;
	fake_pci_vector = vector;
	set_cid(GUEST_CID);
	memset(&vdev, 0, sizeof(vdev));
	vdev.type = VIRTIO_ID_VSOCK;
	vdev.num_queues = 3;
	vdev.features = VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) |
			(l == VIRTQ_PACKED ? VIRTIO_BIT(VIRTIO_F_RING_PACKED) : 0);
	if (!fake_pci_driver)
		virtio_vsock_init();
	assert_non_null(fake_pci_driver);
	/* what the last test left scheduled runs: the loop is idle before the device comes */
	for (int i = 0; i < 4 && poll_scheduled(); i++)
		poll_once();
	assert_false(poll_scheduled());
	assert_int_equal(fake_pci_driver->probe(&vdev), 0);
	/* RX and events schedule the driver's context; TX never interrupts */
	assert_ptr_equal(vdev.queues[RXQ].ctx, dev_ctx());
	assert_ptr_equal(vdev.queues[EVQ].ctx, dev_ctx());
	assert_null(vdev.queues[TXQ].ctx);
	assert_true(stub_scheduled(dev_ctx())); /* a first look once the device runs */
	for (int i = 0; i < 3; i++)
		ring_model_set_kick_mode(&models[i], MODEL_KICK_ALWAYS);
}

static void start(enum virtq_layout l)
{
	start_with(l, -1);
}

static void stop(void)
{
	fake_pci_driver->remove(&vdev);
	assert_null(vdev.priv);
	for (int i = 0; i < 3; i++)
		assert_int_equal(models[i].errors, 0);
	fake_pci_destroy_queues();
	assert_int_equal(vsock_pkt_live(), 0);
	assert_int_equal(stub_dma_live, dma_live_before);
}

/* The driver's own poll, and the work it returned in all, as the loop runs it. */
static unsigned int (*driver_poll)(struct poll_ctx *ctx, unsigned int budget);
static uint64_t driver_work;

static unsigned int counted_poll(struct poll_ctx *ctx, unsigned int budget)
{
	unsigned int work = driver_poll(ctx, budget);

	driver_work += work;
	return work;
}

/* A pass of the loop: the work the driver's context did in it (0: not run, or nothing). */
static unsigned int poll(void)
{
	uint64_t before = driver_work;

	if (!driver_poll) {
		driver_poll = dev_ctx()->poll;
		dev_ctx()->poll = counted_poll;
	}
	poll_once();
	return (unsigned int)(driver_work - before);
}

/* The device delivers a packet into the next RX buffer; @used as it says. */
static void device_rx_raw(const struct virtio_vsock_hdr *h, const void *data, uint32_t used)
{
	struct ring_model *m = &models[RXQ];
	uint8_t buf[4096];

	assert_true(used <= sizeof(buf));
	memset(buf, 0, sizeof(buf));
	memcpy(buf, h, VSOCK_HDR_LEN);
	if (data && used > VSOCK_HDR_LEN)
		memcpy(buf + VSOCK_HDR_LEN, data, used - VSOCK_HDR_LEN);
	assert_int_equal(ring_model_fetch(m), 1);
	assert_int_equal(model_buf_write(&m->held[m->n_held - 1], buf, used), used);
	fake_pci_complete(RXQ, m->n_held - 1, used);
}

static void host_hdr(struct virtio_vsock_hdr *h, uint16_t op, uint32_t sport, uint32_t dport,
		     uint32_t len)
{
	memset(h, 0, sizeof(*h));
	h->src_cid = VSOCK_CID_HOST;
	h->dst_cid = GUEST_CID;
	h->src_port = sport;
	h->dst_port = dport;
	h->type = VSOCK_TYPE_STREAM;
	h->op = op;
	h->len = len;
	h->buf_alloc = 1 << 20;
}

static void device_rx(uint16_t op, uint32_t sport, uint32_t dport, const void *data, uint32_t len)
{
	struct virtio_vsock_hdr h;

	host_hdr(&h, op, sport, dport, len);
	device_rx_raw(&h, data, VSOCK_HDR_LEN + len);
}

/* The device takes the next TX packet: its header, and payload into @data. */
static int device_tx(struct virtio_vsock_hdr *h, void *data, size_t max)
{
	struct ring_model *m = &models[TXQ];
	uint8_t buf[8192];
	size_t n;

	if (!ring_model_fetch(m))
		return 0;
	n = model_buf_read(&m->held[m->n_held - 1], buf, sizeof(buf));
	assert_true(n >= VSOCK_HDR_LEN);
	memcpy(h, buf, VSOCK_HDR_LEN);
	assert_int_equal(n - VSOCK_HDR_LEN, h->len);
	assert_true(h->len <= max);
	if (data)
		memcpy(data, buf + VSOCK_HDR_LEN, h->len);
	fake_pci_complete(TXQ, m->n_held - 1, 0);
	return 1;
}

/* A guest listener on @port with one accepted connection from host @sport. */
static struct vsock_sock *connect_from_host(uint32_t port, uint32_t sport)
{
	struct vsock_sock *l = vsock_listen(port, VSOCK_TYPE_STREAM, 4), *c;
	struct virtio_vsock_hdr h;

	assert_non_null(l);
	device_rx(VSOCK_OP_REQUEST, sport, port, NULL, 0);
	assert_true(poll() > 0);
	c = vsock_accept(l);
	assert_non_null(c);
	assert_int_equal(vsock_state(c), VSOCK_CONNECTED);
	/* the RESPONSE went out on the fast path, from our CID */
	assert_int_equal(device_tx(&h, NULL, 0), 1);
	assert_int_equal(h.op, VSOCK_OP_RESPONSE);
	assert_int_equal(h.src_cid, GUEST_CID);
	assert_int_equal(h.dst_cid, VSOCK_CID_HOST);
	assert_int_equal(h.src_port, port);
	assert_int_equal(h.dst_port, sport);
	vsock_close(l);
	return c;
}

/* ---- tests ---- */

static void probe_posts_rx_and_events(enum virtq_layout l)
{
	start(l);
	assert_int_equal(vsock_local_cid(), GUEST_CID);
	assert_int_equal(ring_model_fetch_all(&models[RXQ]), QSIZE);
	for (unsigned int i = 0; i < models[RXQ].n_held; i++) {
		assert_int_equal(models[RXQ].held[i].in_len,
				 65536 + VSOCK_HDR_LEN); /* rxbuf default */
		assert_int_equal(models[RXQ].held[i].out_len, 0);
	}
	assert_int_equal(ring_model_fetch_all(&models[EVQ]), 8);
	assert_int_equal(models[EVQ].held[0].in_len, 4);
	assert_int_equal(ring_model_fetch_all(&models[TXQ]), 0);
	assert_int_equal(dev_check(), POLL_IDLE); /* nothing waits */
	stop();
}

static void test_probe_split(void **s)
{
	probe_posts_rx_and_events(VIRTQ_SPLIT);
}

static void test_probe_packed(void **s)
{
	probe_posts_rx_and_events(VIRTQ_PACKED);
}

static void test_probe_fails_without_queue(void **s)
{
	config_reset();
	fake_pci_reset();
	fake_pci_layout = VIRTQ_SPLIT;
	fake_pci_vector = -1;
	memset(&vdev, 0, sizeof(vdev));
	vdev.features = VIRTIO_BIT(VIRTIO_F_VERSION_1);
	if (!fake_pci_driver)
		virtio_vsock_init();
	fake_pci_fail_index = EVQ;
	assert_int_not_equal(fake_pci_driver->probe(&vdev), 0);
	fake_pci_fail_index = -1;
	assert_null(vdev.priv);
	fake_pci_destroy_queues();
}

/* The driver's `stats json` section, parsed (app/json.c's reader). */
static void driver_json(struct json_doc *doc)
{
	static char buf[4096];
	struct json_writer w;
	long len;

	json_writer_init(&w, buf, sizeof(buf));
	json_open(&w, NULL, '{');
	stats_json_fn(&w);
	json_close(&w, '}');
	len = json_end(&w);
	assert_true(len > 0);
	assert_int_equal(json_parse(doc, buf, (size_t)len), 0);
}

static uint64_t json_u64(const struct json_doc *doc, int obj, const char *key)
{
	uint64_t v;

	assert_true(json_get_u64(doc, json_find(doc, obj, key), &v));
	return v;
}

static void echo_both_ways(enum virtq_layout l)
{
	uint8_t msg[1000], back[1000];
	struct virtio_vsock_hdr h;
	struct vsock_sock *c;
	unsigned int rx_free;
	uint64_t before;

	start(l);
	c = connect_from_host(1234, 5000);
	for (unsigned int i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 1);
	/* more packets than RX buffers: each completion is refilled */
	for (int round = 0; round < 3 * QSIZE; round++) {
		device_rx(VSOCK_OP_RW, 5000, 1234, msg, sizeof(msg));
		assert_true(poll() > 0);
		assert_int_equal(vsock_recv(c, back, sizeof(back), NULL), sizeof(msg));
		assert_memory_equal(back, msg, sizeof(msg));
		assert_int_equal(vsock_send(c, back, 100 + round, false), 100 + round);
		assert_int_equal(device_tx(&h, back, sizeof(back)), 1);
		assert_int_equal(h.op, VSOCK_OP_RW);
		assert_int_equal(h.len, 100 + round);
		assert_memory_equal(back, msg, h.len);
		/*
		 * A finished TX buffer alone is no work the watchdog looks
		 * for; a pass reclaims it, and being quiet, tops the RX ring up.
		 */
		assert_int_equal(dev_check(), POLL_IDLE);
		before = vsock_pkt_live();
		rx_free = virtq_free_slots(queues[RXQ]);
		poll();
		assert_int_equal(vsock_pkt_live(), before - 1 + rx_free);
		assert_int_equal(virtq_free_slots(queues[RXQ]), 0);
	}
	assert_true(kicks[TXQ] >= 1);
	stats_print();
	{
		static struct json_doc doc;
		struct virtq_stats st;
		bool dev;
		int txq;

		driver_json(&doc);
		assert_true(json_get_bool(&doc, json_find(&doc, 0, "device"), &dev) && dev);
		assert_int_equal(json_u64(&doc, 0, "guest_cid"), vsock_local_cid());
		txq = json_find(&doc, json_find(&doc, 0, "queues"), "txq");
		/* the notifications the fake device saw, and the ring's own counts */
		assert_int_equal(json_u64(&doc, txq, "kicks"), kicks[TXQ]);
		virtq_get_stats(queues[TXQ], &st);
		assert_int_equal(json_u64(&doc, txq, "added"), st.added);
		assert_int_equal(json_u64(&doc, txq, "completed"), st.completed);
		assert_int_equal(json_u64(&doc, json_find(&doc, 0, "drop"), "rx_short"), 0);
	}
	fake_pci_driver->show(&vdev);
	vsock_close(c);
	stop();
}

static void test_echo_split(void **s)
{
	echo_both_ways(VIRTQ_SPLIT);
}

static void test_echo_packed(void **s)
{
	echo_both_ways(VIRTQ_PACKED);
}

/*
 * RX buffers go back an eighth of the ring at a time (QSIZE / 8 = 2): one
 * buffer used is not posted again yet, the second brings both back.
 */
static void rx_refill_batched(enum virtq_layout l)
{
	uint8_t msg[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, back[8];
	struct vsock_sock *c;

	start(l);
	/* the REQUEST's buffer, which nothing keeps, went straight back */
	c = connect_from_host(1234, 5000);
	assert_int_equal(virtq_free_slots(queues[RXQ]), 0);
	for (int i = 0; i < 4; i++) {
		device_rx(VSOCK_OP_RW, 5000, 1234, msg, sizeof(msg));
		assert_true(poll() > 0);
		/* the data is kept: one missing, not posted yet; two: both again */
		assert_int_equal(virtq_free_slots(queues[RXQ]), (i + 1) % 2);
		assert_int_equal(vsock_recv(c, back, sizeof(back), NULL), sizeof(msg));
		assert_memory_equal(back, msg, sizeof(msg));
	}
	/* a pass with nothing received tops the ring up */
	poll();
	assert_int_equal(virtq_free_slots(queues[RXQ]), 0);
	vsock_close(c);
	stop();
}

/*
 * An echo replies in the buffer it received (vsock_send_rx_head); once
 * sent, that buffer goes straight back onto the RX ring, not to the pool.
 */
/* The RX ring's kick decisions so far: the kicks it sent and those it held back. */
static uint64_t rx_kick_decisions(void)
{
	struct virtq_stats st;

	virtq_get_stats(queues[RXQ], &st);
	return st.kicks + st.kicks_suppressed;
}

static void echo_buffer_reposted(enum virtq_layout l)
{
	uint8_t msg[64], back[64];
	struct virtio_vsock_hdr h;
	struct vsock_sock *c;
	uint64_t live, rx_kicks, decided;

	for (unsigned int i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 3 + 1);
	start(l);
	c = connect_from_host(1234, 5000); /* its REQUEST's buffer went straight back */
	device_rx(VSOCK_OP_RW, 5000, 1234, msg, sizeof(msg)); /* kept: one RX slot free */
	assert_true(poll() > 0);
	assert_int_equal(virtq_free_slots(queues[RXQ]), 1);
	assert_int_equal(vsock_send_rx_head(c), sizeof(msg));
	/*
	 * While the reply is in flight, the slot it left is its own: a quiet
	 * pass posts no fresh buffer for it and decides no RX kick.
	 */
	live = vsock_pkt_live();
	rx_kicks = kicks[RXQ];
	decided = rx_kick_decisions();
	poll();
	assert_int_equal(virtq_free_slots(queues[RXQ]), 1);
	assert_int_equal(vsock_pkt_live(), live);
	assert_int_equal(kicks[RXQ], rx_kicks);
	assert_int_equal(rx_kick_decisions(), decided);
	assert_int_equal(device_tx(&h, back, sizeof(back)), 1);
	assert_int_equal(h.len, sizeof(msg));
	assert_memory_equal(back, msg, sizeof(msg));
	poll();
	/* the sent buffer is posted again: no slot free, no buffer freed */
	assert_int_equal(virtq_free_slots(queues[RXQ]), 0);
	assert_int_equal(vsock_pkt_live(), live);
	/* and it receives: the device writes into it like any other */
	for (int i = 0; i < 2; i++) {
		device_rx(VSOCK_OP_RW, 5000, 1234, msg, sizeof(msg));
		assert_true(poll() > 0);
		assert_int_equal(vsock_recv(c, back, sizeof(back), NULL), sizeof(msg));
		assert_memory_equal(back, msg, sizeof(msg));
	}
	vsock_close(c);
	stop();
}

/*
 * A control packet is kept by nobody: its buffer goes straight back onto
 * the RX ring. The Linux host sends a credit update each time its reader
 * empties its queue, one per round trip of a ping-pong; a kick decision
 * per repost would kick each time the device has re-armed avail_event,
 * so reposts are decided for once half the ring waits (rx_announce).
 * And a device that used every buffer it had gets its kick decision.
 */
static void control_buffer_reposted(enum virtq_layout l)
{
	struct vsock_sock *c;
	uint64_t live, decided;

	start(l);
	c = connect_from_host(1234, 5000);
	assert_int_equal(virtq_free_slots(queues[RXQ]), 0);
	poll(); /* the RESPONSE taken back */
	live = vsock_pkt_live();
	decided = rx_kick_decisions();
	for (int i = 0; i < 3 * QSIZE; i++) {
		device_rx(VSOCK_OP_CREDIT_UPDATE, 5000, 1234, NULL, 0);
		assert_true(poll() > 0);
		assert_int_equal(virtq_free_slots(queues[RXQ]), 0);
	}
	assert_int_equal(vsock_pkt_live(), live);
	/* one decision per half ring of reposts, not one per packet */
	assert_true(rx_kick_decisions() - decided >= 5);
	assert_true(rx_kick_decisions() - decided <= 6);
	/* every buffer used before the guest looks: the reap decides */
	decided = rx_kick_decisions();
	for (int i = 0; i < QSIZE; i++)
		device_rx(VSOCK_OP_CREDIT_UPDATE, 5000, 1234, NULL, 0);
	assert_true(poll() > 0);
	assert_int_equal(virtq_free_slots(queues[RXQ]), 0);
	assert_true(rx_kick_decisions() > decided);
	vsock_close(c);
	stop();
}

static void test_control_buffer_reposted_split(void **s)
{
	control_buffer_reposted(VIRTQ_SPLIT);
}

static void test_control_buffer_reposted_packed(void **s)
{
	control_buffer_reposted(VIRTQ_PACKED);
}

static void test_echo_buffer_reposted_split(void **s)
{
	echo_buffer_reposted(VIRTQ_SPLIT);
}

static void test_echo_buffer_reposted_packed(void **s)
{
	echo_buffer_reposted(VIRTQ_PACKED);
}

static void test_rx_refill_batched_split(void **s)
{
	rx_refill_batched(VIRTQ_SPLIT);
}

static void test_rx_refill_batched_packed(void **s)
{
	rx_refill_batched(VIRTQ_PACKED);
}

/* Whatever the device wrote wrong is dropped; the buffer is posted again. */
static void bad_headers_dropped(enum virtq_layout l)
{
	struct virtio_vsock_hdr h, out;
	struct vsock_sock *c;
	uint8_t data[64] = { 1, 2, 3 };

	start(l);
	c = connect_from_host(1234, 5000);
	host_hdr(&h, VSOCK_OP_RW, 5000, 1234, 64);
	device_rx_raw(&h, data, VSOCK_HDR_LEN + 10); /* len beyond what was written */
	host_hdr(&h, VSOCK_OP_RW, 5000, 1234, 0);
	device_rx_raw(&h, NULL, 20); /* shorter than a header */
	host_hdr(&h, VSOCK_OP_RW, 5000, 1234, 3);
	h.dst_cid = 77;
	device_rx_raw(&h, data, VSOCK_HDR_LEN + 3); /* not our CID */
	host_hdr(&h, VSOCK_OP_RW, 5000, 1234, 3);
	h.type = 9;
	device_rx_raw(&h, data, VSOCK_HDR_LEN + 3);
	host_hdr(&h, VSOCK_OP_INVALID, 5000, 1234, 3);
	device_rx_raw(&h, data, VSOCK_HDR_LEN + 3);
	assert_true(poll() > 0);
	assert_int_equal(vsock_rx_queued(c), 0);
	assert_int_equal(vsock_state(c), VSOCK_CONNECTED);
	assert_int_equal(device_tx(&out, NULL, 0), 0); /* nothing answered */
	/* all five buffers came back: QSIZE posted again */
	assert_int_equal(ring_model_fetch_all(&models[RXQ]), QSIZE);
	vsock_close(c);
	stop();
}

static void test_bad_headers_split(void **s)
{
	bad_headers_dropped(VIRTQ_SPLIT);
}

static void test_bad_headers_packed(void **s)
{
	bad_headers_dropped(VIRTQ_PACKED);
}

/*
 * fastpath=0, or a full ring: packets wait in the driver's queue, which
 * schedules its context (no interrupt announces them, polled or not),
 * and a poll pass flushes them with one kick, in order; while some wait
 * for room the context stays scheduled and each pass moves more.
 */
static void tx_queue_flush(enum virtq_layout l, const char *fastpath, int vector)
{
	char err[128];
	struct virtio_vsock_hdr h;
	struct vsock_sock *c;
	uint8_t data[256], got[256];
	unsigned long before;
	int n = 0, misses = 0;

	start_with(l, vector);
	c = connect_from_host(1234, 5000);
	poll();
	assert_int_equal(config_set("fastpath", fastpath, err, sizeof(err)), 0);
	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	before = kicks[TXQ];
	/* more than the ring holds */
	for (int i = 0; i < QSIZE + 8; i++) {
		data[0] = (uint8_t)i;
		assert_int_equal(vsock_send(c, data, 200, false), 200);
	}
	assert_true(stub_scheduled(dev_ctx()));
	if (!strcmp(fastpath, "0")) {
		assert_int_equal(kicks[TXQ], before); /* all queued */
		poll();
		assert_int_equal(virtq_free_slots(queues[TXQ]), 0); /* the pass filled the ring */
		assert_true(kicks[TXQ] - before <= 1); /* at most one kick for the batch */
	}
	/* the device takes what is there; the rest follows after reclaim */
	while (n < QSIZE + 8) {
		int got_one = device_tx(&h, got, sizeof(got));

		if (!got_one) {
			/* the rest waits for room: looked at every pass, moved by the next */
			assert_true(stub_scheduled(dev_ctx()));
			assert_true(++misses < 2);
			poll();
			continue;
		}
		misses = 0;
		assert_int_equal(h.len, 200);
		assert_int_equal(got[0], (uint8_t)n);
		assert_memory_equal(got + 1, data + 1, 199);
		n++;
	}
	poll();
	assert_int_equal(dev_check(), POLL_IDLE);
	if (vector >= 0) /* nothing waits: the context completed */
		assert_false(stub_scheduled(dev_ctx()));
	vsock_close(c);
	stop();
}

static void test_tx_queue_split(void **s)
{
	tx_queue_flush(VIRTQ_SPLIT, "0", -1);
	tx_queue_flush(VIRTQ_SPLIT, "1", -1);
	tx_queue_flush(VIRTQ_SPLIT, "0", 40);
	tx_queue_flush(VIRTQ_SPLIT, "1", 40);
}

static void test_tx_queue_packed(void **s)
{
	tx_queue_flush(VIRTQ_PACKED, "0", -1);
	tx_queue_flush(VIRTQ_PACKED, "1", -1);
	tx_queue_flush(VIRTQ_PACKED, "0", 40);
	tx_queue_flush(VIRTQ_PACKED, "1", 40);
}

/*
 * The driver tells the socket layer a packet went straight into the ring
 * (send_pkt returns true), which then skips tx_full() until the next
 * send. Once the ring is full, packets queue and it must not say so: the
 * queue's bound (4096 packets) still stops the sender with -EAGAIN.
 */
static void test_tx_bound_with_fastpath(void **s)
{
	uint64_t full = vsock_counters()->tx_full;
	struct vsock_sock *c;
	uint8_t byte = 0;
	int sent = 0;

	start(VIRTQ_SPLIT);
	c = connect_from_host(1234, 5000);
	while (sent < 3 * 4096 && vsock_send(c, &byte, 1, false) == 1)
		sent++;
	assert_true(sent >= 4096 && sent <= 4096 + QSIZE);
	assert_int_equal(vsock_send(c, &byte, 1, false), -EAGAIN);
	assert_true(vsock_counters()->tx_full > full);
	vsock_close(c);
	stop();
}

/* txpoll=0 reclaims sent buffers on send too, not only in the poll loop. */
static void test_txpoll_off_reclaims_on_send(void **s)
{
	char err[128];
	struct virtio_vsock_hdr h;
	struct vsock_sock *c;
	uint8_t data[16] = { 0 };

	start(VIRTQ_SPLIT);
	c = connect_from_host(1234, 5000);
	assert_int_equal(config_set("txpoll", "0", err, sizeof(err)), 0);
	assert_int_equal(vsock_send(c, data, 16, false), 16);
	assert_int_equal(device_tx(&h, NULL, 16), 1);
	/* the completion is reaped by the next send, before any poll */
	assert_true(virtq_has_used(queues[TXQ]));
	assert_int_equal(vsock_send(c, data, 16, false), 16);
	assert_false(virtq_has_used(queues[TXQ]));
	assert_int_equal(device_tx(&h, NULL, 16), 1);
	poll();
	vsock_close(c);
	stop();
}

/* A counter of the driver's `stats json` section. */
static uint64_t driver_u64(const char *key)
{
	static struct json_doc doc;

	driver_json(&doc);
	return json_u64(&doc, 0, key);
}

/* 5.10.6.7: a transport reset ends connections and re-reads the CID. */
static void events(enum virtq_layout l)
{
	struct ring_model *m = &models[EVQ];
	uint32_t ev = 0, unknown = 42;
	struct vsock_sock *c;
	uint64_t seen;

	start(l);
	c = connect_from_host(1234, 5000);
	assert_int_equal(ring_model_fetch_all(m), 8);
	/* an unknown event, and a short one: counted, reposted, nothing else */
	assert_int_equal(model_buf_write(&m->held[0], &unknown, 4), 4);
	fake_pci_complete(EVQ, 0, 4);
	fake_pci_complete(EVQ, 0, 2);
	seen = driver_u64("events");
	poll();
	assert_int_equal(driver_u64("events") - seen, 2); /* the pass took both */
	assert_int_equal(vsock_state(c), VSOCK_CONNECTED);
	assert_int_equal(ring_model_fetch_all(m), 2);
	/* the reset: new CID; polled, the event is work the loop must look for */
	set_cid(9);
	assert_int_equal(model_buf_write(&m->held[0], &ev, 4), 4);
	fake_pci_complete(EVQ, 0, 4);
	assert_true(stub_scheduled(dev_ctx()));
	assert_int_equal(dev_check(), POLL_LOST);
	poll();
	assert_int_equal(driver_u64("transport_resets"), 1);
	assert_int_equal(vsock_local_cid(), 9);
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	assert_int_equal(vsock_error(c), -ECONNRESET);
	assert_int_equal(ring_model_fetch_all(m), 1); /* reposted */
	vsock_close(c);
	stop();
}

static void test_events_split(void **s)
{
	events(VIRTQ_SPLIT);
}

static void test_events_packed(void **s)
{
	events(VIRTQ_PACKED);
}

/*
 * RX and events with an interrupt: the device notifies for every entry
 * the pass did not see, and the notification schedules the driver's
 * context; an entry it did not notify for is a notification it owed (the
 * watchdog's POLL_OWED), and once it did notify, work left is the
 * guest's (POLL_LOST). Polled, nothing notifies: the context looks at
 * every pass, and an entry waiting is the guest's to find (POLL_LOST).
 */
static void pending_with_interrupts(enum virtq_layout l, int vector)
{
	struct ring_model *rx = &models[RXQ], *ev = &models[EVQ];
	struct virtio_vsock_hdr h;
	uint32_t unknown = 42;

	start_with(l, vector);
	assert_int_equal(vdev.queues[RXQ].vector, vector);
	assert_int_equal(vdev.queues[EVQ].vector, vector);
	assert_int_equal(vdev.queues[TXQ].vector, -1);
	poll(); /* the first look, at probe */
	assert_int_equal(stub_scheduled(dev_ctx()), vector < 0);
	assert_int_equal(dev_check(), POLL_IDLE);
	assert_int_equal(ring_model_fetch_all(ev), 8);
	for (int round = 0; round < 2; round++) {
		/* a request for a port nobody listens on, and an unknown event */
		host_hdr(&h, VSOCK_OP_REQUEST, 1234, 4321, 0);
		assert_int_equal(ring_model_fetch(rx), 1);
		assert_int_equal(model_buf_write(&rx->held[rx->n_held - 1], &h, VSOCK_HDR_LEN),
				 VSOCK_HDR_LEN);
		/* the device completes and does not notify yet: it owes the notification */
		assert_int_equal(ring_model_complete(rx, rx->n_held - 1, VSOCK_HDR_LEN),
				 vector >= 0);
		assert_int_equal(dev_check(), vector >= 0 ? POLL_OWED : POLL_LOST);
		/* it notifies after all: the guest was told, the work is the guest's now */
		if (vector >= 0)
			fake_pci_interrupt(RXQ);
		assert_int_equal(dev_check(), POLL_LOST);
		assert_int_equal(model_buf_write(&ev->held[0], &unknown, 4), 4);
		assert_int_equal(fake_pci_complete(EVQ, 0, 4), vector >= 0);
		assert_true(stub_scheduled(dev_ctx())); /* the interrupt, or polled: every pass */
		/* the pass takes both and re-arms: the next entries interrupt too */
		assert_true(poll() > 0);
		assert_int_equal(dev_check(), POLL_IDLE);
		assert_int_equal(stub_scheduled(dev_ctx()), vector < 0);
		assert_int_equal(ring_model_fetch_all(ev), 1); /* reposted */
	}
	stop();
}

static void test_pending_with_interrupts_split(void **s)
{
	pending_with_interrupts(VIRTQ_SPLIT, 40);
	pending_with_interrupts(VIRTQ_SPLIT, -1);
}

static void test_pending_with_interrupts_packed(void **s)
{
	pending_with_interrupts(VIRTQ_PACKED, 40);
	pending_with_interrupts(VIRTQ_PACKED, -1);
}

/*
 * Without a device the transport drops what is sent; a guest connect then
 * times out through the socket layer's poller (net/vsock/poller.c).
 */
static void test_no_device(void **s)
{
	struct vsock_sock *c;

	start(VIRTQ_SPLIT);
	stop();
	vsock_poller_init();
	assert_non_null(pass_ctx());
	/* an interrupt that was on its way: the pass finds no device, asks for nothing */
	poll_schedule(dev_ctx());
	assert_int_equal(poll(), 0);
	assert_false(stub_scheduled(dev_ctx()));
	assert_int_equal(dev_check(), POLL_IDLE);
	assert_int_equal(vsock_local_cid(), VSOCK_CID_ANY);
	stats_print();
	{
		static struct json_doc doc;
		bool dev = true;

		driver_json(&doc); /* {"device":false} and nothing else */
		assert_int_equal(doc.tok[0].count, 1);
		assert_true(json_get_bool(&doc, json_find(&doc, 0, "device"), &dev));
		assert_false(dev);
	}
	c = vsock_connect(VSOCK_CID_HOST, 99, VSOCK_TYPE_STREAM);
	assert_non_null(c);
	assert_int_equal(vsock_state(c), VSOCK_CONNECTING);
	/* the connect's timeout is the socket layer's timer (poll_schedule_at) */
	poll();
	assert_true(pass_ctx()->due_ns != UINT64_MAX);
	fake_now += 60ull * 1000000000ull;
	poll();
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	assert_int_equal(vsock_error(c), -ETIMEDOUT);
	vsock_close(c);
	assert_int_equal(vsock_pkt_live(), 0);
}

/*
 * A device that takes nothing (packed=on against a vhost without packed
 * rings): a connect waits, and a second later the driver names the device
 * and its queues' counters, once, not on every look after; the connect
 * still times out.
 */
static void silent_device_reported_once(enum virtq_layout l)
{
	struct vsock_sock *c;

	start(l);
	if (!pass_ctx())
		vsock_poller_init();
	printed[0] = '\0';
	c = vsock_connect(VSOCK_CID_HOST, 1234, VSOCK_TYPE_STREAM);
	assert_non_null(c);
	for (int second = 0; second < 5; second++) {
		poll(); /* the driver, and the socket layer's timers as they come */
		fake_now += 1000000000ull;
	}
	assert_int_equal(times_printed("virtio-vsock: device does not answer: rxq added 16 "
				       "completed 0, txq added 1 completed 0, evq added 8 "
				       "completed 0;"),
			 1);
	assert_int_equal(times_printed("device does not answer"), 1);
	fake_now += 10ull * 1000000000ull;
	poll();
	assert_int_equal(vsock_state(c), VSOCK_CLOSED);
	assert_int_equal(vsock_error(c), -ETIMEDOUT);
	vsock_close(c);
	stop();
}

static void test_silent_device_split(void **s)
{
	silent_device_reported_once(VIRTQ_SPLIT);
}

static void test_silent_device_packed(void **s)
{
	silent_device_reported_once(VIRTQ_PACKED);
}

/* The device takes the REQUEST and the peer never answers: not the device's fault. */
static void test_quiet_peer_not_reported(void **s)
{
	struct virtio_vsock_hdr h;
	struct vsock_sock *c;

	start(VIRTQ_SPLIT);
	if (!pass_ctx())
		vsock_poller_init();
	printed[0] = '\0';
	c = vsock_connect(VSOCK_CID_HOST, 1234, VSOCK_TYPE_STREAM);
	assert_non_null(c);
	assert_int_equal(device_tx(&h, NULL, 0), 1);
	assert_int_equal(h.op, VSOCK_OP_REQUEST);
	for (int second = 0; second < 5; second++) {
		poll(); /* the driver, and the socket layer's timers as they come */
		fake_now += 1000000000ull;
	}
	assert_int_equal(times_printed("device does not answer"), 0);
	vsock_close(c);
	assert_int_equal(device_tx(&h, NULL, 0), 1); /* the RST */
	poll();
	stop();
}

/* remove: what the device still holds, and the software queue, are freed. */
static void test_remove_with_packets_in_flight(void **s)
{
	char err[128];
	struct vsock_sock *c;
	uint8_t data[100] = { 0 };

	start(VIRTQ_PACKED);
	c = connect_from_host(1234, 5000);
	assert_int_equal(config_set("fastpath", "0", err, sizeof(err)), 0);
	assert_int_equal(vsock_send(c, data, 100, false), 100);
	assert_int_equal(config_set("fastpath", "1", err, sizeof(err)), 0);
	assert_true(vsock_pkt_live() > QSIZE);
	vsock_close(c);
	stop(); /* asserts no packet and no DMA block is left */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_split),
		cmocka_unit_test(test_probe_packed),
		cmocka_unit_test(test_probe_fails_without_queue),
		cmocka_unit_test(test_echo_split),
		cmocka_unit_test(test_echo_packed),
		cmocka_unit_test(test_rx_refill_batched_split),
		cmocka_unit_test(test_rx_refill_batched_packed),
		cmocka_unit_test(test_control_buffer_reposted_split),
		cmocka_unit_test(test_control_buffer_reposted_packed),
		cmocka_unit_test(test_echo_buffer_reposted_split),
		cmocka_unit_test(test_echo_buffer_reposted_packed),
		cmocka_unit_test(test_bad_headers_split),
		cmocka_unit_test(test_bad_headers_packed),
		cmocka_unit_test(test_tx_queue_split),
		cmocka_unit_test(test_tx_queue_packed),
		cmocka_unit_test(test_txpoll_off_reclaims_on_send),
		cmocka_unit_test(test_tx_bound_with_fastpath),
		cmocka_unit_test(test_events_split),
		cmocka_unit_test(test_events_packed),
		cmocka_unit_test(test_remove_with_packets_in_flight),
		cmocka_unit_test(test_pending_with_interrupts_split),
		cmocka_unit_test(test_pending_with_interrupts_packed),
		cmocka_unit_test(test_silent_device_split),
		cmocka_unit_test(test_silent_device_packed),
		cmocka_unit_test(test_quiet_peer_not_reported),
		cmocka_unit_test(test_no_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
