// SPDX-License-Identifier: MIT
/*
 * pktgen: `pktgen count=N size=64 burst=256 dst=IP[,MAC] queues=Q`. With
 * Q > 1 each transmit queue sends its own flow (source port 9 + queue),
 * the count shared among them, a burst each in turn. Each burst goes
 * to the driver in one xmit_burst call (one kick at most); between bursts
 * the device is polled as the poll loop would, which is where sent buffers
 * are reclaimed when txpoll=1 (as virtio-net frees them only in NAPI).
 * Prints packets, Mpps and kicks per packet; the clock stops when the last
 * frame is queued.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/pktgen.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/time.h"
#include "net/proto.h"

#define PKTGEN_STALL_NS 5000000000ULL
#define PKTGEN_ARP_NS 3000000000ULL
#define PKTGEN_SRC_PORT 9

/*
 * Queue q's flow: source port PKTGEN_SRC_PORT + q, so a receiver tells
 * the queues apart (and a device that hashes flows keeps each on one).
 */
static uint32_t build_flow(uint8_t *frame, const struct pktgen_params *p, const uint8_t *src_mac,
			   unsigned int q)
{
	uint32_t len = p->size < ETH_ZLEN ? ETH_ZLEN : p->size;
	uint32_t payload;
	uint8_t *ip = frame + ETH_HLEN, *udp = ip + IP_HLEN, *data = udp + UDP_HLEN;

	if (len > ETH_FRAME_LEN)
		len = ETH_FRAME_LEN;
	payload = len - ETH_HLEN - IP_HLEN - UDP_HLEN;
	memset(data, 0, payload);
	/* pktgen's header: magic, then a sequence number (0: one flow, one frame) */
	put_be32(data, PKTGEN_MAGIC);
	eth_build_header(frame, p->dst_mac, src_mac, ETH_P_IP);
	ipv4_build_header(ip, net_ip(), p->dst, IPPROTO_UDP, UDP_HLEN + payload, 0);
	udp_build_header(udp, net_ip(), p->dst, (uint16_t)(PKTGEN_SRC_PORT + q), p->port, payload);
	return len;
}

uint32_t pktgen_build(uint8_t *frame, const struct pktgen_params *p, const uint8_t *src_mac)
{
	return build_flow(frame, p, src_mac, 0);
}

static unsigned int pktgen_queues(const struct net_dev *dev)
{
	return dev->nqueues ? dev->nqueues : 1;
}

static uint64_t tx_kicks(const struct net_dev *dev)
{
	struct net_dev_stats sum;

	net_dev_stats_sum(dev, &sum);
	return sum.tx_kicks;
}

struct pktgen_run {
	const struct pktgen_params *p;
	struct pktgen_result *r;
	struct net_dev *dev;
	const struct net_frame (*frames)[PKTGEN_MAX_BURST]; /* one template per queue */
	unsigned int queues;
	uint64_t progress;
};

/*
 * One burst per queue; the poll loop between bursts reclaims sent buffers (the
 * txpoll=1 path) and keeps RX and every other service going.
 */
static enum poll_step pktgen_burst(void *arg)
{
	struct pktgen_run *run = arg;
	bool moved = false;

	for (unsigned int q = 0; q < run->queues; q++) {
		uint64_t left = run->p->count - run->r->sent;
		unsigned int n = left < run->p->burst ? (unsigned int)left : run->p->burst;
		unsigned int got;

		if (!left)
			return POLL_DONE;
		got = net_dev_xmit(run->dev, q, run->frames[q], n);
		run->r->sent += got;
		run->r->sent_queue[q] += got;
		if (got < n)
			run->r->ring_full++;
		moved |= got != 0;
	}
	if (moved) {
		run->progress = now_ns();
		return POLL_PROGRESS;
	}
	/*
	 * The ring is full: let the loop sleep until the device has taken
	 * something (a pass that reclaims counts as work) instead of spinning
	 * on a full ring, which cost about 1,000 instructions per frame.
	 */
	return now_ns() - run->progress > PKTGEN_STALL_NS ? POLL_DONE : POLL_AGAIN;
}

int pktgen_run(const struct pktgen_params *p, struct pktgen_result *r)
{
	static struct net_frame frames[NET_MAX_QUEUES][PKTGEN_MAX_BURST];
	static uint8_t frame[NET_MAX_QUEUES][ETH_FRAME_LEN];
	struct pktgen_run run = { .p = p, .r = r, .frames = frames };
	uint64_t kicks0, start;
	uint32_t len = 0, tag;

	memset(r, 0, sizeof(*r));
	run.dev = net_device();
	if (!run.dev)
		return -ENODEV;
	run.queues = p->queues ? p->queues : 1;
	if (!p->burst || p->burst > PKTGEN_MAX_BURST || run.queues > pktgen_queues(run.dev))
		return -EINVAL;
	/* one template per queue for the whole run: the driver need not copy it again */
	for (unsigned int q = 0; q < run.queues; q++) {
		len = build_flow(frame[q], p, run.dev->mac, q);
		tag = net_frame_tag();
		for (uint32_t i = 0; i < p->burst; i++)
			frames[q][i] = (struct net_frame){ frame[q], len, tag };
	}

	/* Start with an empty ring, as a fresh pktgen thread would. */
	run.dev->ops->poll(run.dev, 0);
	kicks0 = tx_kicks(run.dev);
	start = run.progress = now_ns();
	poll_wait(pktgen_burst, &run, UINT64_MAX);
	r->ns = now_ns() - start;
	r->kicks = tx_kicks(run.dev) - kicks0;
	r->bytes = r->sent * len;
	return r->sent == p->count ? 0 : -ETIMEDOUT;
}

static void print_queues(const struct pktgen_result *r, unsigned int queues)
{
	if (queues < 2)
		return;
	printf("pktgen: per queue");
	for (unsigned int q = 0; q < queues; q++)
		printf(" %u=%llu", q, (unsigned long long)r->sent_queue[q]);
	printf("\n");
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	return config_parse_uint(s, out) || *out < min || *out > max ? -EINVAL : 0;
}

static int parse_dst(char *s, struct pktgen_params *p)
{
	char *comma = strchr(s, ',');

	if (comma) {
		*comma = '\0';
		if (net_parse_mac(comma + 1, p->dst_mac))
			return -EINVAL;
		p->have_mac = true;
	}
	return net_parse_ip(s, &p->dst);
}

static int cmd_pktgen(int argc, char **argv)
{
	struct pktgen_params p = { .count = 100000, .size = 64, .burst = 256, .port = PKTGEN_PORT };
	struct pktgen_result r;
	bool have_dst = false;
	uint64_t v;
	double secs;
	int ret;

	for (int i = 1; i < argc; i++) {
		char *a = argv[i];

		if (!strncmp(a, "count=", 6) && !parse_u64(a + 6, 1, 1ULL << 40, &v))
			p.count = v;
		else if (!strncmp(a, "size=", 5) && !parse_u64(a + 5, ETH_ZLEN, ETH_FRAME_LEN, &v))
			p.size = (uint32_t)v;
		else if (!strncmp(a, "burst=", 6) && !parse_u64(a + 6, 1, PKTGEN_MAX_BURST, &v))
			p.burst = (uint32_t)v;
		else if (!strncmp(a, "port=", 5) && !parse_u64(a + 5, 1, 65535, &v))
			p.port = (uint16_t)v;
		else if (!strncmp(a, "queues=", 7) && !parse_u64(a + 7, 1, NET_MAX_QUEUES, &v))
			p.queues = (uint32_t)v;
		else if (!strncmp(a, "dst=", 4) && !parse_dst(a + 4, &p))
			have_dst = true;
		else
			return shell_error("pktgen: bad argument '%s' (count=1.. size=%d..%d "
					   "burst=1..%d dst=IP[,MAC] port=N queues=1..%d)",
					   a, ETH_ZLEN, ETH_FRAME_LEN, PKTGEN_MAX_BURST,
					   NET_MAX_QUEUES);
	}
	if (!have_dst)
		return shell_error("usage: pktgen dst=IP[,MAC] [count=N] [size=64] [burst=256]");
	if (!net_device())
		return shell_error("pktgen: no network device");
	if (p.queues > pktgen_queues(net_device()))
		return shell_error("pktgen: queues=%u but %u queue pairs are in use", p.queues,
				   pktgen_queues(net_device()));
	if (!p.have_mac) {
		uint32_t hop = ipv4_next_hop(p.dst);

		if (!hop || arp_resolve(hop, p.dst_mac, PKTGEN_ARP_NS))
			return shell_error("pktgen: cannot resolve the MAC of the next hop");
	}
	ret = pktgen_run(&p, &r);
	secs = r.ns / 1e9;
	printf("pktgen: %llu packets %u bytes in %.3f s: %.4f Mpps %.4f Gb/s\n",
	       (unsigned long long)r.sent, p.size < ETH_ZLEN ? ETH_ZLEN : p.size, secs,
	       secs > 0 ? r.sent / secs / 1e6 : 0.0, secs > 0 ? r.bytes * 8 / secs / 1e9 : 0.0);
	printf("pktgen: kicks %llu (%.4f per packet), ring full %llu times, burst %u\n",
	       (unsigned long long)r.kicks, r.sent ? (double)r.kicks / r.sent : 0.0,
	       (unsigned long long)r.ring_full, p.burst);
	print_queues(&r, p.queues);
	if (ret)
		return shell_error("pktgen: stalled after %llu of %llu packets",
				   (unsigned long long)r.sent, (unsigned long long)p.count);
	return 0;
}

static const struct shell_cmd pktgen_cmd = {
	.name = "pktgen",
	.usage = "dst=IP[,MAC] [count=N] [size=64] [burst=256] [port=9] [queues=1]",
	.help = "send one UDP flow per TX queue in bursts (pktgen_sample03), print Mpps",
	.run = cmd_pktgen,
};

void pktgen_init(void)
{
	shell_register(&pktgen_cmd);
}
