// SPDX-License-Identifier: MIT
/*
 * drivers/virtio/virtio_net.c on the host, both ring layouts, against the
 * device-side ring model (ring_model.c) standing in for the device: RX
 * refill, mergeable buffers, everything the device writes treated as
 * untrusted (header length, num_buffers, lengths), TX bursts with one kick,
 * and where sent buffers are reclaimed for txpoll=1 and txpoll=0. Each
 * queue pair is a poll context of the real loop (kernel/poll.c) on its
 * CPU, the BSP's or a second one's; the transport is fake_virtio_pci.c,
 * and net/ is stubbed here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/virtio_net.h"
#include "drivers/virtio/virtio_pci.h"
#include "fake_virtio_pci.h"
#include "kernel/config.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "net/net.h"
#include "ring_model.h"
#include "stub_kernel.h"

#define QSIZE 16
#define NQ 5 /* two pairs and the control queue */

/* ---- the device: its queues and its config space ---- */

static struct virtq **const queues = fake_pci_queues;
static struct ring_model *const models = fake_pci_models;
static unsigned long *const kicks = fake_pci_kicks;
static uint16_t cfg_status = 1; /* VIRTIO_NET_S_LINK_UP */
static uint16_t cfg_max_pairs = 2;

/* 5.1.4: mac, status, max_virtqueue_pairs */
static void write_config(void)
{
	static const uint8_t mac[6] = { 0x52, 0x54, 0, 0xaa, 0xbb, 0xcc };

	memcpy(fake_pci_config, mac, sizeof(mac));
	memcpy(fake_pci_config + 6, &cfg_status, 2);
	memcpy(fake_pci_config + 8, &cfg_max_pairs, 2);
}

/* ---- CPUs: the BSP and, when a test says so, a second one ---- */

static struct percpu ap_cpu;

/* A pass of the AP's loop, as it would make one: the work it did. */
static unsigned int ap_pass(void)
{
	unsigned int work;

	stub_cpu_enter(&ap_cpu);
	work = poll_once();
	stub_cpu_enter(&percpu_boot);
	return work;
}

static uint64_t clock_ns;

uint64_t now_ns(void)
{
	return clock_ns += 1000;
}

/* ---- net/ stubs ---- */

DEFINE_PER_CPU(struct net_cpu, net_cpu_share);

static struct net_dev *registered;
static uint8_t got[8][2048];
static uint32_t got_len[8];
static uint16_t got_queue[8];
static unsigned int got_cpu[8];
static unsigned int n_got;

void net_register(struct net_dev *dev)
{
	registered = dev;
}

uint32_t net_frame_tag(void)
{
	static uint32_t last;

	return ++last;
}

void net_unregister(struct net_dev *dev)
{
	if (registered == dev)
		registered = NULL;
}

void net_rx(struct net_dev *dev, const void *frame, uint32_t len)
{
	assert_ptr_equal(dev, registered);
	assert_true(n_got < 8 && len <= sizeof(got[0]));
	memcpy(got[n_got], frame, len);
	got_queue[n_got] = (uint16_t)net_rx_queue();
	got_cpu[n_got] = this_cpu()->index;
	got_len[n_got++] = len;
}

const char *net_mac_str(const uint8_t *mac, char *buf)
{
	return strcpy(buf, "mac");
}

/* ---- fixture ---- */

#define F_MAC (1ULL << 5)
#define F_MRG (1ULL << 15)
#define F_STATUS (1ULL << 16)

static struct virtio_device vdev;
static long dma_live_before;

/* The device probed: its pairs in their CPUs' loops, nothing handed over yet. */
static void probe_queues(enum virtq_layout l, uint64_t features, const char *rxbuf,
			 const char *net_queues)
{
	char err[128];

	config_reset();
	if (net_queues)
		assert_int_equal(config_set("net_queues", net_queues, err, sizeof(err)), 0);
	dma_live_before = stub_dma_live;
	if (rxbuf)
		assert_int_equal(config_set("net_rxbuf", rxbuf, err, sizeof(err)), 0);
	stub_cpu_enter(&percpu_boot); /* probe runs on CPU 0: the rings are its own */
	fake_pci_reset();
	fake_pci_layout = l;
	fake_pci_qsize = QSIZE;
	write_config();
	memset(&vdev, 0, sizeof(vdev));
	n_got = 0;
	vdev.type = VIRTIO_ID_NET;
	vdev.num_queues = NQ;
	vdev.features = VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) | features |
			(l == VIRTQ_PACKED ? VIRTIO_BIT(VIRTIO_F_RING_PACKED) : 0);
	if (!fake_pci_driver)
		virtio_net_init();
	assert_non_null(fake_pci_driver);
	assert_int_equal(fake_pci_driver->probe(&vdev), 0);
	assert_non_null(registered);
	/* device side: notify for every new buffer, like QEMU with EVENT_IDX */
	for (int i = 0; i < NQ; i++)
		if (queues[i])
			ring_model_set_kick_mode(&models[i], MODEL_KICK_ALWAYS);
}

/*
 * Probed, then DRIVER_OK: CPU 0's first pass hands the pairs over and
 * schedules them (3.1.1: their first poll kicks their receive queues).
 */
static void start_queues(enum virtq_layout l, uint64_t features, const char *rxbuf,
			 const char *net_queues)
{
	probe_queues(l, features, rxbuf, net_queues);
	assert_int_equal(poll_once(), 0);
	for (int q = 0; q < NQ; q++)
		if (vdev.queues[q].ctx)
			assert_true(stub_scheduled(vdev.queues[q].ctx));
}

static void start(enum virtq_layout l, uint64_t features, const char *rxbuf)
{
	start_queues(l, features, rxbuf, NULL);
}

static void stop(void)
{
	fake_pci_driver->remove(&vdev);
	assert_null(registered);
	for (int i = 0; i < NQ; i++)
		if (queues[i])
			assert_int_equal(models[i].errors, 0);
	fake_pci_destroy_queues();
	assert_int_equal(stub_dma_live, dma_live_before);
	/* every context the device had is out of every loop */
	assert_int_equal(poll_ctx_bits(), 0);
	assert_int_equal(ap_cpu.poll.used, 0);
}

/* The device's totals as `net` shows them: its own and every pair's. */
static const struct net_dev_stats *stats(void)
{
	static struct net_dev_stats sum;

	net_dev_stats_sum(registered, &sum);
	return &sum;
}

/* A pass of CPU 0's loop: its pairs and the device's own context. */
static unsigned int poll(void)
{
	return poll_once();
}

/*
 * The device receives a frame: the header, then @len bytes, filling as many
 * buffers of @bufsize as that takes; the header claims @claim buffers.
 */
static void device_rx_on(struct ring_model *m, const uint8_t *frame, uint32_t len, uint16_t claim,
			 uint32_t bufsize)
{
	uint8_t hdr[VIRTIO_NET_HDR_LEN] = { 0 };
	uint32_t off = 0, nbuf = (VIRTIO_NET_HDR_LEN + len + bufsize - 1) / bufsize;

	hdr[10] = (uint8_t)claim;
	hdr[11] = (uint8_t)(claim >> 8);
	for (uint32_t i = 0; i < nbuf; i++) {
		uint8_t buf[4096];
		uint32_t n = 0, room = bufsize;

		assert_int_equal(ring_model_fetch(m), 1);
		assert_true(m->held[m->n_held - 1].in_len >= bufsize);
		if (i == 0) {
			memcpy(buf, hdr, sizeof(hdr));
			n = sizeof(hdr);
		}
		while (n < room && off < len)
			buf[n++] = frame[off++];
		assert_int_equal(model_buf_write(&m->held[m->n_held - 1], buf, n), n);
		fake_pci_complete((unsigned int)(m - models), m->n_held - 1, n);
	}
}

static void device_rx(const uint8_t *frame, uint32_t len, uint16_t claim, uint32_t bufsize)
{
	device_rx_on(&models[0], frame, len, claim, bufsize);
}

static void make_frame(uint8_t *f, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		f[i] = (uint8_t)(seed + i * 13);
}

/* ---- tests ---- */

static void probe_fills_rx_and_reads_config(enum virtq_layout l)
{
	start(l, F_MAC | F_MRG | F_STATUS, NULL);
	assert_memory_equal(registered->mac, "\x52\x54\x00\xaa\xbb\xcc", 6);
	assert_true(net_link_up(registered));
	/* all RX buffers added, none notified before DRIVER_OK (3.1.1) */
	assert_int_equal(kicks[0], 0);
	assert_int_equal(ring_model_fetch_all(&models[0]), QSIZE);
	for (unsigned int i = 0; i < models[0].n_held; i++) {
		assert_int_equal(models[0].held[i].in_len, 2048);
		assert_int_equal(models[0].held[i].out_len, 0);
	}
	poll(); /* after DRIVER_OK: the pair's first poll, the pending kick */
	assert_int_equal(kicks[0], 1);
	stop();
}

static void test_probe_split(void **s)
{
	probe_fills_rx_and_reads_config(VIRTQ_SPLIT);
}

static void test_probe_packed(void **s)
{
	probe_fills_rx_and_reads_config(VIRTQ_PACKED);
}

static void test_no_mac_feature_makes_local_mac(void **s)
{
	cfg_status = 0;
	start(VIRTQ_SPLIT, F_STATUS, NULL);
	assert_int_equal(registered->mac[0], 0x02); /* locally administered, unicast */
	assert_false(net_link_up(registered));
	stop();
	cfg_status = 1;
	start(VIRTQ_SPLIT, 0, NULL);
	assert_true(net_link_up(registered)); /* no STATUS: assume up (5.1.4) */
	stop();
}

static void rx_single_and_merged(enum virtq_layout l)
{
	uint8_t f[1514];

	start(l, F_MAC | F_MRG, "128");
	make_frame(f, sizeof(f), 1);
	device_rx(f, 60, 1, 128);
	device_rx(f, 1514, 12, 128); /* 12 + 1514 bytes over 12 buffers */
	device_rx(f + 1, 116, 1, 128); /* exactly fills one buffer */
	poll();
	assert_int_equal(n_got, 3);
	assert_int_equal(got_len[0], 60);
	assert_memory_equal(got[0], f, 60);
	assert_int_equal(got_len[1], 1514);
	assert_memory_equal(got[1], f, 1514);
	assert_int_equal(got_len[2], 116);
	assert_memory_equal(got[2], f + 1, 116);
	assert_int_equal(stats()->rx_packets, 3);
	assert_int_equal(stats()->rx_bytes, 60 + 1514 + 116);
	/* every buffer went back to the device */
	assert_int_equal(ring_model_fetch_all(&models[0]), QSIZE);
	stop();
}

static void test_rx_split(void **s)
{
	rx_single_and_merged(VIRTQ_SPLIT);
}

static void test_rx_packed(void **s)
{
	rx_single_and_merged(VIRTQ_PACKED);
}

static void test_rx_without_mrg_ignores_num_buffers(void **s)
{
	uint8_t f[1514];

	/* net_rxbuf=128 is raised to 1530 without MRG_RXBUF (5.1.6.3.1) */
	start(VIRTQ_SPLIT, F_MAC, "128");
	make_frame(f, sizeof(f), 2);
	device_rx(f, 1514, 0, 1530); /* num_buffers 0: not looked at without MRG */
	poll();
	assert_int_equal(n_got, 1);
	assert_memory_equal(got[0], f, 1514);
	stop();
}

static void rx_untrusted(enum virtq_layout l)
{
	uint8_t f[1600];
	struct ring_model *m = &models[0];

	start(l, F_MAC | F_MRG, "128");
	make_frame(f, sizeof(f), 3);
	/* shorter than the header */
	assert_int_equal(ring_model_fetch(m), 1);
	ring_model_complete(m, 0, 5);
	/* num_buffers 0 */
	device_rx(f, 60, 0, 128);
	/* num_buffers more than the ring holds */
	device_rx(f, 100, QSIZE + 1, 128);
	/* a frame longer than Ethernet: gathered, then dropped as a whole */
	device_rx(f, 1600, 13, 128);
	poll(); /* the buffers go back to the device */
	/* a single buffer claiming more than we offered: the ring drops it */
	assert_int_equal(ring_model_fetch(m), 1);
	ring_model_complete(m, 0, 4096);
	/* a good frame after all that still arrives intact */
	device_rx(f, 300, 3, 128);
	poll();
	poll();
	/* the oversized completion comes back with len 0: too short */
	assert_int_equal(stats()->rx_drop_short, 2);
	assert_int_equal(stats()->rx_drop_num_buffers, 2);
	assert_int_equal(stats()->rx_drop_long, 1);
	assert_int_equal(n_got, 1);
	assert_int_equal(got_len[0], 300);
	assert_memory_equal(got[0], f, 300);
	{
		struct virtq_stats st;

		virtq_get_stats(queues[0], &st);
		assert_int_equal(st.bad_completions, 1);
	}
	stop();
}

/* One 2 KiB buffer holding a frame longer than Ethernet: dropped, counted. */
static void test_rx_single_buffer_too_long(void **s)
{
	uint8_t f[1600];

	start(VIRTQ_SPLIT, F_MAC | F_MRG, NULL);
	make_frame(f, sizeof(f), 4);
	device_rx(f, 1519, 1, 2048);
	device_rx(f, 1518, 1, 2048);
	poll();
	assert_int_equal(stats()->rx_drop_long, 1);
	assert_int_equal(n_got, 1);
	assert_int_equal(got_len[0], 1518);
	assert_memory_equal(got[0], f, 1518);
	stop();
}

static void test_rx_untrusted_split(void **s)
{
	rx_untrusted(VIRTQ_SPLIT);
}

static void test_rx_untrusted_packed(void **s)
{
	rx_untrusted(VIRTQ_PACKED);
}

static void tx_burst(enum virtq_layout l, int txpoll)
{
	char err[64];
	uint8_t f[64 * 20];
	struct net_frame frames[20];
	struct ring_model *m = &models[1];
	unsigned int n;

	start(l, F_MAC | F_MRG, NULL);
	assert_int_equal(config_set("txpoll", txpoll ? "1" : "0", err, sizeof(err)), 0);
	for (int i = 0; i < 20; i++) {
		make_frame(f + 64 * i, 64, (uint8_t)i);
		frames[i] = (struct net_frame){ .data = f + 64 * i, .len = 64 };
	}
	/* a burst of 10: one notification */
	n = registered->ops->xmit_burst(registered, frames, 10);
	assert_int_equal(n, 10);
	assert_int_equal(kicks[1], 1);
	assert_int_equal(stats()->tx_kicks, 1);
	assert_int_equal(ring_model_fetch_all(m), 10);
	for (unsigned int i = 0; i < 10; i++) {
		uint8_t buf[128];
		static const uint8_t zero[VIRTIO_NET_HDR_LEN];

		assert_int_equal(m->held[i].in_len, 0);
		assert_int_equal(model_buf_read(&m->held[i], buf, sizeof(buf)), 12 + 64);
		assert_memory_equal(buf, zero, VIRTIO_NET_HDR_LEN);
		assert_memory_equal(buf + 12, f + 64 * i, 64);
	}
	/* the device completes them; the next burst finds the ring has 6 slots */
	while (m->n_held)
		ring_model_complete(m, 0, 0);
	n = registered->ops->xmit_burst(registered, frames, 20);
	if (txpoll) {
		/* txpoll=1: nothing reclaimed on the transmit path */
		assert_int_equal(n, 6);
		assert_int_equal(stats()->tx_reclaim_in_xmit, 0);
		assert_int_equal(stats()->tx_ring_full, 1);
		/* reclaiming is work: a sender waiting for room must not sleep */
		assert_int_equal(poll(), 1);
		assert_int_equal(stats()->tx_reclaimed, 10);
		assert_int_equal(poll(), 0);
		n += registered->ops->xmit_burst(registered, frames + n, 20 - n);
		assert_int_equal(n, 16);
	} else {
		assert_int_equal(n, 16);
		assert_int_equal(stats()->tx_reclaim_in_xmit, 10);
	}
	assert_int_equal(stats()->tx_packets, 26);
	/* oversized and runt frames are dropped, not sent, not retried */
	frames[0].len = 2048;
	frames[1].len = 10;
	assert_int_equal(registered->ops->xmit_burst(registered, frames, 2), 2);
	assert_int_equal(stats()->tx_too_long, 2);
	assert_int_equal(stats()->tx_packets, 26);
	stop();
}

static void test_tx_split_txpoll(void **s)
{
	tx_burst(VIRTQ_SPLIT, 1);
}

static void test_tx_split_txpoll0(void **s)
{
	tx_burst(VIRTQ_SPLIT, 0);
}

static void test_tx_packed_txpoll(void **s)
{
	tx_burst(VIRTQ_PACKED, 1);
}

static void test_tx_packed_txpoll0(void **s)
{
	tx_burst(VIRTQ_PACKED, 0);
}

/* What the device holds in TX buffer @i: its frame bytes equal @want. */
static void tx_held_is(struct ring_model *m, unsigned int i, const uint8_t *want, uint32_t len)
{
	uint8_t buf[128];

	assert_int_equal(model_buf_read(&m->held[i], buf, sizeof(buf)), 12 + len);
	assert_memory_equal(buf + 12, want, len);
}

/*
 * A tagged frame is copied into a slot once: sent again with its tag it is
 * not copied (seen here by breaking the tag's promise), a new tag or
 * another length is copied, and an untagged frame always is.
 */
static void tx_tagged(enum virtq_layout l)
{
	char err[64];
	uint8_t a[64], b[64];
	struct net_frame fr[QSIZE];
	struct ring_model *m = &models[1];
	uint32_t tag = net_frame_tag();

	start(l, F_MAC | F_MRG, NULL);
	assert_int_equal(config_set("txpoll", "0", err, sizeof(err)), 0);
	make_frame(a, 64, 1);
	make_frame(b, 64, 2);
	for (int i = 0; i < QSIZE; i++)
		fr[i] = (struct net_frame){ a, 64, tag };
	assert_int_equal(registered->ops->xmit_burst(registered, fr, QSIZE), QSIZE);
	assert_int_equal(ring_model_fetch_all(m), QSIZE);
	for (unsigned int i = 0; i < QSIZE; i++)
		tx_held_is(m, i, a, 64);
	while (m->n_held)
		ring_model_complete(m, 0, 0);
	/* same tag, other bytes (a broken promise): the slots keep a */
	for (int i = 0; i < QSIZE; i++)
		fr[i].data = b;
	assert_int_equal(registered->ops->xmit_burst(registered, fr, QSIZE), QSIZE);
	assert_int_equal(ring_model_fetch_all(m), QSIZE);
	for (unsigned int i = 0; i < QSIZE; i++)
		tx_held_is(m, i, a, 64);
	while (m->n_held)
		ring_model_complete(m, 0, 0);
	/* a new tag, an untagged frame, another length: copied */
	fr[0] = (struct net_frame){ b, 64, net_frame_tag() };
	fr[1] = (struct net_frame){ b, 64, 0 };
	fr[2] = (struct net_frame){ b, 60, tag };
	assert_int_equal(registered->ops->xmit_burst(registered, fr, 3), 3);
	assert_int_equal(ring_model_fetch_all(m), 3);
	tx_held_is(m, 0, b, 64);
	tx_held_is(m, 1, b, 64);
	tx_held_is(m, 2, b, 60);
	assert_int_equal(stats()->tx_packets, 2 * QSIZE + 3);
	assert_int_equal(stats()->tx_bytes, 64 * (2 * QSIZE + 2) + 60);
	stop();
}

static void test_tx_tagged_split(void **s)
{
	tx_tagged(VIRTQ_SPLIT);
}

static void test_tx_tagged_packed(void **s)
{
	tx_tagged(VIRTQ_PACKED);
}

/*
 * A hostile device on TX: a completion with an id out of range and one
 * for a buffer not in flight are counted in tx_bad_token and dropped; the
 * slots they stood for are lost, the others come back once and the queue
 * goes on sending.
 */
static void tx_hostile(enum virtq_layout l)
{
	uint8_t f[64];
	struct net_frame fr[4];
	struct ring_model *m = &models[1];
	uint32_t tag = net_frame_tag();
	uint16_t first;

	start(l, F_MAC, NULL);
	make_frame(f, 64, 7);
	for (int i = 0; i < 4; i++)
		fr[i] = (struct net_frame){ f, 64, tag };
	assert_int_equal(registered->ops->xmit_burst(registered, fr, 4), 4);
	assert_int_equal(ring_model_fetch_all(m), 4);
	first = m->held[0].id;
	ring_model_complete(m, 0, 0);
	ring_model_drop(m, 0);
	ring_model_use_raw(m, 5000, 0, 1);
	ring_model_publish(m);
	poll();
	assert_int_equal(stats()->tx_reclaimed, 1);
	assert_int_equal(stats()->tx_bad_token, 1);
	/* the slot reclaimed above, named again while it is not in flight */
	ring_model_drop(m, 0);
	ring_model_use_raw(m, first, 0, 1);
	ring_model_complete(m, 0, 0);
	poll();
	assert_int_equal(stats()->tx_bad_token, 2);
	assert_int_equal(stats()->tx_reclaimed, 2);
	/* 16 slots, 2 lost: 14 go out, every one whole */
	for (int i = 0; i < 4; i++) {
		unsigned int n = registered->ops->xmit_burst(registered, fr, 4);

		assert_int_equal(n, i < 3 ? 4 : 2);
	}
	assert_int_equal(ring_model_fetch_all(m), 14);
	for (unsigned int i = 0; i < m->n_held; i++)
		tx_held_is(m, i, f, 64);
	stop();
}

static void test_tx_hostile_split(void **s)
{
	tx_hostile(VIRTQ_SPLIT);
}

static void test_tx_hostile_packed(void **s)
{
	tx_hostile(VIRTQ_PACKED);
}

/*
 * A probe that fails half way (the transmit queue cannot be set up): the
 * device is quiesced before the pair goes (its vectors name the pair's
 * context), nothing is left in the loop and nothing leaks.
 */
static void test_probe_failure_quiesces_first(void **s)
{
	unsigned int quiesced = fake_pci_quiesced;

	config_reset();
	stub_cpu_enter(&percpu_boot);
	fake_pci_reset();
	fake_pci_layout = VIRTQ_SPLIT;
	fake_pci_qsize = QSIZE;
	write_config();
	memset(&vdev, 0, sizeof(vdev));
	vdev.type = VIRTIO_ID_NET;
	vdev.num_queues = NQ;
	vdev.features = VIRTIO_BIT(VIRTIO_F_VERSION_1);
	if (!fake_pci_driver)
		virtio_net_init();
	dma_live_before = stub_dma_live;
	fake_pci_fail_index = 1;
	assert_int_equal(fake_pci_driver->probe(&vdev), -1);
	fake_pci_fail_index = -1;
	assert_int_equal(fake_pci_quiesced, quiesced + 1);
	assert_null(registered);
	assert_int_equal(poll_ctx_bits(), 0);
	fake_pci_destroy_queues();
	assert_int_equal(stub_dma_live, dma_live_before);
}

/* An empty frame matches no slot, not even one never filled: a runt, dropped. */
static void test_tx_empty_frame_dropped(void **s)
{
	uint8_t f[64] = { 0 };
	struct net_frame fr[2] = { { f, 0, 0 }, { f, 0, net_frame_tag() } };

	start(VIRTQ_PACKED, F_MAC, NULL);
	assert_int_equal(registered->ops->xmit_burst(registered, fr, 2), 2);
	assert_int_equal(stats()->tx_too_long, 2);
	assert_int_equal(stats()->tx_packets, 0);
	assert_int_equal(ring_model_fetch_all(&models[1]), 0);
	stop();
}

/*
 * With MSI-X: both queues of a pair interrupt on the pair's context (the
 * control queue, looked at by time, on none). A pass that took what
 * there was completes: nothing is scheduled until the next interrupt,
 * which the ring counts and which schedules the pair for its frame.
 * TX completions interrupt only with txpoll=0.
 */
static void test_interrupts_schedule_the_pair(void **s)
{
	char err[64];
	struct net_frame fr;
	struct virtq_stats st;
	uint8_t f[64];

	fake_pci_vector = 40;
	start(VIRTQ_SPLIT, F_MAC, NULL);
	fake_pci_vector = -1;
	assert_non_null(vdev.queues[0].ctx);
	assert_ptr_equal(vdev.queues[0].ctx, vdev.queues[1].ctx);
	assert_int_equal(vdev.queues[0].vector, 40);
	assert_int_equal(vdev.queues[1].vector, 40);
	poll(); /* the handover, and the pair's first look */
	assert_int_equal(kicks[0], 1);
	poll();
	assert_false(poll_scheduled());
	make_frame(f, sizeof(f), 9);
	device_rx(f, sizeof(f), 1, 2048);
	assert_true(stub_scheduled(vdev.queues[0].ctx));
	assert_int_equal(poll(), 1);
	assert_int_equal(n_got, 1);
	assert_memory_equal(got[0], f, sizeof(f));
	assert_false(poll_scheduled());
	virtq_get_stats(queues[0], &st);
	assert_int_equal(st.interrupts, 1);

	/* txpoll=1: a sent frame coming back interrupts nobody; txpoll=0 it does */
	fr = (struct net_frame){ f, sizeof(f), 0 };
	assert_int_equal(registered->ops->xmit_burst(registered, &fr, 1), 1);
	assert_int_equal(ring_model_fetch_all(&models[1]), 1);
	assert_false(fake_pci_complete(1, 0, 0));
	assert_false(poll_scheduled());
	assert_int_equal(config_set("txpoll", "0", err, sizeof(err)), 0);
	assert_int_equal(registered->ops->xmit_burst(registered, &fr, 1), 1);
	assert_int_equal(ring_model_fetch_all(&models[1]), 1);
	assert_true(fake_pci_complete(1, 0, 0));
	assert_true(stub_scheduled(vdev.queues[1].ctx));
	poll();
	virtq_get_stats(queues[1], &st);
	assert_int_equal(st.interrupts, 1);
	assert_int_equal(stats()->tx_reclaimed, 2);
	stop();
}

static void test_tx_kick_suppressed_when_device_says_so(void **s)
{
	uint8_t f[64] = { 0 };
	struct net_frame fr = { .data = f, .len = 64 };

	start(VIRTQ_SPLIT, F_MAC, NULL);
	ring_model_set_kick_mode(&models[1], MODEL_KICK_NEVER);
	assert_int_equal(registered->ops->xmit_burst(registered, &fr, 1), 1);
	assert_int_equal(kicks[1], 0);
	assert_int_equal(stats()->tx_kicks, 0);
	stop();
}

/* ---- multiqueue (5.1.6.5.5) ---- */

#define F_CTRL_VQ (1ULL << 17)
#define F_MQ (1ULL << 22)
#define CTRL_Q 4 /* 2 * max_virtqueue_pairs */

/* The device takes the control command: its bytes, then @ack written (@len). */
static void device_ctrl(const uint8_t *want, uint8_t ack, uint32_t len)
{
	struct ring_model *m = &models[CTRL_Q];
	uint8_t cmd[8];

	assert_int_equal(ring_model_fetch(m), 1);
	assert_int_equal(m->held[0].out_len, 4);
	assert_int_equal(m->held[0].in_len, 1);
	assert_int_equal(model_buf_read(&m->held[0], cmd, sizeof(cmd)), 4);
	assert_memory_equal(cmd, want, 4);
	if (len)
		assert_int_equal(model_buf_write(&m->held[0], &ack, 1), 1);
	ring_model_complete(m, 0, len);
}

static const uint8_t pairs_set_2[4] = { 4, 0, 2, 0 };

/*
 * The control queue interrupts nobody: the device's context looks for
 * the ack by its timer (poll_schedule_at), which this pass waits for.
 */
static void ack_pass(void)
{
	uint64_t due = poll_next_due();

	assert_true(due != UINT64_MAX);
	if (clock_ns < due)
		clock_ns = due;
	poll();
}

static void test_mq_two_pairs(void **s)
{
	struct net_frame fr;
	uint8_t f[64];

	cfg_max_pairs = 2;
	start_queues(VIRTQ_SPLIT, F_MAC | F_MQ | F_CTRL_VQ, NULL, "2");
	assert_non_null(queues[2]);
	assert_non_null(queues[3]);
	assert_non_null(queues[CTRL_Q]);
	/* only the first pair until the device acks */
	assert_int_equal(registered->nqueues, 1);
	assert_int_equal(registered->queues_set_up, 2);
	/* the first pass sent the command */
	device_ctrl(pairs_set_2, 0, 1);
	ack_pass();
	assert_int_equal(registered->nqueues, 2);
	/* a frame on receiveq2 goes up as queue 1's */
	make_frame(f, sizeof(f), 3);
	device_rx_on(&models[2], f, sizeof(f), 1, 2048);
	poll();
	assert_int_equal(n_got, 1);
	assert_int_equal(got_queue[0], 1);
	assert_int_equal(registered->pair[1].rx_packets, 1);
	assert_int_equal(registered->pair[0].rx_packets, 0);
	assert_int_equal(net_rx_queue(), 0);
	/* sending on queue 1 fills transmitq2 only */
	fr = (struct net_frame){ f, sizeof(f), 0 };
	assert_int_equal(net_dev_xmit(registered, 1, &fr, 1), 1);
	assert_int_equal(ring_model_fetch_all(&models[3]), 1);
	assert_int_equal(ring_model_fetch_all(&models[1]), 0);
	assert_int_equal(registered->pair[1].tx_packets, 1);
	ring_model_complete(&models[3], 0, 0);
	poll();
	assert_int_equal(stats()->mq_ack_err + stats()->mq_ack_bad + stats()->mq_timeout, 0);
	stop();
}

/* CPU @cpu's share of net/ (DEFINE_PER_CPU). */
static struct net_cpu *share(unsigned int cpu)
{
	return per_cpu_ptr(&net_cpu_share, cpu);
}

/*
 * Two CPUs, net_pair_cpu=spread: pair 1 belongs to CPU 1. Its context
 * joins CPU 1's loop at probe (a request there), its rings are handed to
 * CPU 1 after DRIVER_OK, by CPU 0's first pass; its frames go up from
 * CPU 1's loop, not CPU 0's; CPU 0 may not send on it; remove() takes
 * it out of CPU 1's loop before the pairs are freed.
 */
static void test_mq_pair_owned_by_cpu1(void **s)
{
	struct net_frame fr;
	uint8_t f[64];

	stub_cpu_start(&ap_cpu, 1);
	memset(share(0), 0, sizeof(*share(0)));
	memset(share(1), 0, sizeof(*share(1)));
	cfg_max_pairs = 2;
	probe_queues(VIRTQ_SPLIT, F_MAC | F_MQ | F_CTRL_VQ, NULL, "2");
	assert_ptr_equal(vdev.queues[0].ctx->cpu, &percpu_boot);
	assert_ptr_equal(vdev.queues[1].ctx->cpu, &percpu_boot);
	assert_ptr_equal(vdev.queues[2].ctx->cpu, &ap_cpu);
	assert_ptr_equal(vdev.queues[3].ctx, vdev.queues[2].ctx);
	assert_int_equal(fake_pci_irq_cpu[2], 1); /* net_irq=own */
	assert_int_equal(net_pair_cpu(registered, 1), 1);
	assert_int_equal(net_pair_cpu(registered, 0), 0);
	assert_ptr_equal(share(1)->dev, registered); /* CPU 1 works on the device */
	assert_int_equal(share(1)->home_queue, 1);
	assert_true(stub_xcpu_requests > 0); /* the pair was added there by a request */
	/* CPU 1 starts polling after DRIVER_OK (3.1.1): until then its rings are CPU 0's */
	assert_int_equal(ap_cpu.poll.used, vdev.queues[2].ctx->bit);
	assert_ptr_equal(queues[2]->owner, &percpu_boot);
	assert_int_equal(ap_pass(), 0);
	assert_int_equal(kicks[2], 0);
	poll(); /* the handover: pair 1's rings to CPU 1, its context scheduled there */
	assert_ptr_equal(queues[2]->owner, &ap_cpu);
	assert_ptr_equal(queues[3]->owner, &ap_cpu);
	assert_true(stub_scheduled(vdev.queues[2].ctx));
	ap_pass();
	assert_int_equal(kicks[2], 1); /* its first poll kicks its receive queue */
	device_ctrl(pairs_set_2, 0, 1);
	ack_pass();
	assert_int_equal(registered->nqueues, 2);

	make_frame(f, sizeof(f), 5);
	device_rx_on(&models[2], f, sizeof(f), 1, 2048);
	poll(); /* CPU 0: not its pair */
	assert_int_equal(n_got, 0);
	assert_int_equal(ap_pass(), 1);
	assert_int_equal(n_got, 1);
	assert_int_equal(got_queue[0], 1);
	assert_int_equal(got_cpu[0], 1);
	assert_memory_equal(got[0], f, sizeof(f));
	assert_int_equal(registered->pair[1].rx_packets, 1);

	/* CPU 0 sending on CPU 1's pair: dropped (taken), counted on CPU 0, never on the ring */
	fr = (struct net_frame){ f, sizeof(f), 0 };
	assert_int_equal(net_dev_xmit(registered, 1, &fr, 1), 1);
	assert_int_equal(share(0)->stats.tx_wrong_cpu, 1);
	assert_int_equal(share(1)->stats.tx_wrong_cpu, 0);
	assert_int_equal(registered->pair[1].tx_packets, 0);
	assert_int_equal(ring_model_fetch_all(&models[3]), 0);
	/* CPU 1 sends on it */
	stub_cpu_enter(&ap_cpu);
	assert_int_equal(net_dev_xmit(registered, 1, &fr, 1), 1);
	stub_cpu_enter(&percpu_boot);
	assert_int_equal(ring_model_fetch_all(&models[3]), 1);
	ring_model_complete(&models[3], 0, 0);
	assert_int_equal(ap_pass(), 1); /* the reclaim */
	assert_int_equal(registered->pair[1].tx_reclaimed, 1);

	stop(); /* frees the pairs: only after CPU 1 let go of its pair */
	assert_null(share(1)->dev);
	stub_cpu_stop(1);
}

/* An ack that is not VIRTIO_NET_OK, or none: one pair, counted, still running. */
static void mq_refused(uint8_t ack, uint32_t len, bool answer, uint64_t *(*counter)(void))
{
	uint64_t wrong = share(0)->stats.tx_wrong_cpu;
	uint64_t unused = share(0)->stats.tx_pair_unused;
	struct net_frame fr;
	uint8_t f[64];

	cfg_max_pairs = 2;
	start_queues(VIRTQ_PACKED, F_MAC | F_MQ | F_CTRL_VQ, NULL, "2");
	poll();
	if (answer) {
		device_ctrl(pairs_set_2, ack, len);
	} else {
		assert_int_equal(ring_model_fetch_all(&models[CTRL_Q]), 1);
		clock_ns += 3000000000ULL;
	}
	ack_pass();
	assert_int_equal(registered->nqueues, 1);
	assert_int_equal(*counter(), 1);
	/* queue 1 is not in use: its frames are dropped and counted, on neither pair */
	make_frame(f, sizeof(f), 5);
	fr = (struct net_frame){ f, sizeof(f), 0 };
	assert_int_equal(net_dev_xmit(registered, 1, &fr, 1), 1);
	assert_int_equal(share(0)->stats.tx_pair_unused - unused, 1);
	assert_int_equal(share(0)->stats.tx_wrong_cpu, wrong);
	assert_int_equal(ring_model_fetch_all(&models[1]), 0);
	assert_int_equal(ring_model_fetch_all(&models[3]), 0);
	/* the first pair still sends */
	assert_int_equal(net_dev_xmit(registered, 0, &fr, 1), 1);
	assert_int_equal(ring_model_fetch_all(&models[1]), 1);
	ring_model_complete(&models[1], 0, 0);
	if (!answer) /* the command the device kept is given back now: it is ignored */
		ring_model_drop(&models[CTRL_Q], 0);
	stop();
}

static uint64_t *ack_err(void)
{
	return &registered->stats.mq_ack_err; /* the device's own, not a pair's */
}

static uint64_t *ack_bad(void)
{
	return &registered->stats.mq_ack_bad;
}

static uint64_t *timeout(void)
{
	return &registered->stats.mq_timeout;
}

static void test_mq_ack_err(void **s)
{
	mq_refused(1, 1, true, ack_err);
}

static void test_mq_ack_garbage(void **s)
{
	mq_refused(7, 1, true, ack_bad);
}

static void test_mq_ack_nothing_written(void **s)
{
	mq_refused(0, 0, true, ack_bad);
}

static void test_mq_no_answer(void **s)
{
	mq_refused(0, 0, false, timeout);
}

static void test_mq_not_offered_or_bad_max(void **s)
{
	/* no MQ: one pair, no control queue */
	cfg_max_pairs = 2;
	start_queues(VIRTQ_SPLIT, F_MAC, NULL, "2");
	assert_null(queues[2]);
	assert_null(queues[CTRL_Q]);
	assert_int_equal(registered->queues_set_up, 1);
	stop();
	/* max_virtqueue_pairs 0 is outside 1..0x8000 */
	cfg_max_pairs = 0;
	start_queues(VIRTQ_SPLIT, F_MAC | F_MQ | F_CTRL_VQ, NULL, "2");
	assert_null(queues[2]);
	assert_int_equal(registered->queues_set_up, 1);
	poll();
	assert_int_equal(registered->nqueues, 1);
	stop();
	/* more than the transport's table holds a control queue for */
	cfg_max_pairs = 8;
	start_queues(VIRTQ_SPLIT, F_MAC | F_MQ | F_CTRL_VQ, NULL, "2");
	assert_null(queues[2]);
	assert_int_equal(registered->queues_set_up, 1);
	stop();
	cfg_max_pairs = 2;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_split),
		cmocka_unit_test(test_probe_packed),
		cmocka_unit_test(test_no_mac_feature_makes_local_mac),
		cmocka_unit_test(test_rx_split),
		cmocka_unit_test(test_rx_packed),
		cmocka_unit_test(test_rx_without_mrg_ignores_num_buffers),
		cmocka_unit_test(test_rx_untrusted_split),
		cmocka_unit_test(test_rx_single_buffer_too_long),
		cmocka_unit_test(test_rx_untrusted_packed),
		cmocka_unit_test(test_tx_split_txpoll),
		cmocka_unit_test(test_tx_split_txpoll0),
		cmocka_unit_test(test_tx_packed_txpoll),
		cmocka_unit_test(test_tx_packed_txpoll0),
		cmocka_unit_test(test_tx_tagged_split),
		cmocka_unit_test(test_tx_tagged_packed),
		cmocka_unit_test(test_tx_hostile_split),
		cmocka_unit_test(test_tx_hostile_packed),
		cmocka_unit_test(test_tx_empty_frame_dropped),
		cmocka_unit_test(test_probe_failure_quiesces_first),
		cmocka_unit_test(test_interrupts_schedule_the_pair),
		cmocka_unit_test(test_tx_kick_suppressed_when_device_says_so),
		cmocka_unit_test(test_mq_two_pairs),
		cmocka_unit_test(test_mq_pair_owned_by_cpu1),
		cmocka_unit_test(test_mq_ack_err),
		cmocka_unit_test(test_mq_ack_garbage),
		cmocka_unit_test(test_mq_ack_nothing_written),
		cmocka_unit_test(test_mq_no_answer),
		cmocka_unit_test(test_mq_not_offered_or_bad_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
