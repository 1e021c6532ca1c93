/* SPDX-License-Identifier: MIT */
/*
 * The network layer's only way in. A driver (virtio_net.c, or a fake device
 * in the unit tests) fills a struct net_dev with its MAC, its counters and
 * two ops, registers it, and hands every received frame to net_rx(). The
 * protocols (Ethernet, ARP, IPv4, ICMP, UDP) never call the driver except
 * through those ops, so they run unchanged on the host.
 */
#ifndef NET_NET_H
#define NET_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/config.h"
#include "kernel/percpu.h"

#define ETH_ALEN 6
#define ETH_HLEN 14
#define ETH_ZLEN 60 /* shortest frame without FCS; shorter ones are padded */
#define ETH_DATA_LEN 1500
#define ETH_FRAME_LEN (ETH_HLEN + ETH_DATA_LEN)

/*
 * One frame to send: the Ethernet header and payload, no FCS. A nonzero
 * tag (from net_frame_tag()) promises that every frame carrying it has the
 * same bytes, as a pktgen template sent many times does (Linux pktgen's
 * clone_skb), so a driver may send a copy it already holds instead of
 * copying again; 0 promises nothing.
 */
struct net_frame {
	const void *data;
	uint32_t len;
	uint32_t tag;
};

/* A tag no frame has carried before (never 0). */
uint32_t net_frame_tag(void);

/*
 * Counters the driver keeps; `net` shows them all by name. Every drop has
 * its own reason (DESIGN: counters over printfs).
 */
/* clang-format off */
#define NET_DEV_COUNTERS(X)                                                             \
	X(rx_packets) X(rx_bytes) X(tx_packets) X(tx_bytes) X(tx_kicks) X(rx_kicks)     \
	X(tx_interrupts) X(rx_interrupts) X(tx_reclaimed) X(tx_reclaim_in_xmit)         \
	X(tx_ring_full) X(tx_too_long) X(rx_drop_short) X(rx_drop_long)                 \
	X(rx_drop_num_buffers) X(rx_drop_bad_token) X(tx_bad_token)                     \
	X(rx_refill_fail) X(mq_ack_err) X(mq_ack_bad) X(mq_timeout)
/* clang-format on */

/* A cache line of its own each: two pairs' counters are two CPUs' writes. */
struct net_dev_stats {
#define NET_COUNTER_FIELD(name) uint64_t name;
	NET_DEV_COUNTERS(NET_COUNTER_FIELD)
#undef NET_COUNTER_FIELD
} __attribute__((aligned(64)));

/* Queue pairs a device may have (virtio-net: 2 * 3 + a control queue fill the transport's 8). */
#define NET_MAX_QUEUES 3

struct net_dev;

struct net_dev_ops {
	/*
	 * Queue up to @n frames for sending and notify the device once at
	 * the end (the burst is Linux's xmit_more). Returns how many were
	 * taken (frames the driver dropped and counted are taken); fewer than
	 * @n means the ring is full until the driver's poll reclaims.
	 */
	unsigned int (*xmit_burst)(struct net_dev *dev, const struct net_frame *frames,
				   unsigned int n);
	/*
	 * The same on transmit queue @q (below nqueues); optional: a device
	 * with one queue has only xmit_burst, which is queue 0.
	 */
	unsigned int (*xmit_queue)(struct net_dev *dev, unsigned int q,
				   const struct net_frame *frames, unsigned int n);
	/*
	 * The CPU whose loop owns queue pair @q (below queues_set_up): the
	 * driver's poll context for it, the one record of the owner. The
	 * driver receives there, from its own contexts, and hands frames up
	 * with net_rx(); sent buffers come back there too.
	 */
	unsigned int (*pair_cpu)(const struct net_dev *dev, unsigned int q);
	/* The link's state, read when shown (optional: NULL is up). */
	bool (*link_up)(struct net_dev *dev);
	/*
	 * The interrupts its receive and transmit queues took (optional):
	 * counted where they are taken, so no pair counter holds them.
	 */
	void (*interrupts)(const struct net_dev *dev, uint64_t *rx, uint64_t *tx);
	/* Driver details for `net` (optional). */
	void (*show)(struct net_dev *dev);
};

struct net_dev {
	const char *name;
	const struct net_dev_ops *ops;
	void *priv;
	uint8_t mac[ETH_ALEN];
	uint16_t mtu;
	/*
	 * The counters are split by writer, so no two CPUs ever write one:
	 * stats are the device's own (the control queue, written where the
	 * device is probed and polled), pair[q] those of queue pair q,
	 * written only by the CPU that owns the pair. Readers add them up
	 * (net_dev_stats_sum).
	 */
	struct net_dev_stats stats;
	struct net_dev_stats pair[NET_MAX_QUEUES];
	/* queue pairs in use (0 counts as 1), set up */
	uint16_t nqueues, queues_set_up;
};

/* The CPU that owns queue pair @q of @dev (net_dev_ops.pair_cpu; 0 without). */
static inline unsigned int net_pair_cpu(const struct net_dev *dev, unsigned int q)
{
	return dev->ops->pair_cpu ? dev->ops->pair_cpu(dev, q) : 0;
}

static inline bool net_link_up(struct net_dev *dev)
{
	return !dev->ops->link_up || dev->ops->link_up(dev);
}

/* The device's counters and every pair's, added up into @sum. */
static inline void net_dev_stats_sum(const struct net_dev *dev, struct net_dev_stats *sum)
{
	*sum = dev->stats;
	for (unsigned int q = 0; q < NET_MAX_QUEUES; q++) {
#define NET_COUNTER_ADD(name) sum->name += dev->pair[q].name;
		NET_DEV_COUNTERS(NET_COUNTER_ADD)
#undef NET_COUNTER_ADD
	}
	if (dev->ops->interrupts)
		dev->ops->interrupts(dev, &sum->rx_interrupts, &sum->tx_interrupts);
}

/* Send on transmit queue @q of @dev (queue 0 without xmit_queue). */
static inline unsigned int net_dev_xmit(struct net_dev *dev, unsigned int q,
					const struct net_frame *frames, unsigned int n)
{
	if (q && dev->ops->xmit_queue)
		return dev->ops->xmit_queue(dev, q, frames, n);
	return dev->ops->xmit_burst(dev, frames, n);
}

/* The protocol layer's own counters: malformed and unwanted input by reason. */
/* clang-format off */
#define NET_PROTO_COUNTERS(X)                                                           \
	X(eth_rx) X(eth_short) X(eth_not_for_us) X(eth_unknown_type) X(arp_rx)          \
	X(arp_bad) X(arp_replies_sent) X(arp_requests_sent) X(ip_rx) X(ip_short)        \
	X(ip_bad_version) X(ip_bad_hlen) X(ip_bad_len) X(ip_bad_csum) X(ip_fragment)    \
	X(ip_not_for_us) X(ip_unknown_proto) X(icmp_rx) X(icmp_short) X(icmp_bad_csum)  \
	X(icmp_echo_replies_sent) X(icmp_unknown_type) X(udp_rx) X(udp_short)           \
	X(udp_bad_len) X(udp_bad_csum) X(udp_no_port) X(tx_no_route) X(tx_no_arp)      \
	X(tx_dropped) X(tx_wrong_cpu) X(tx_pair_unused)
/* clang-format on */

struct net_proto_stats {
#define NET_COUNTER_FIELD(name) uint64_t name;
	NET_PROTO_COUNTERS(NET_COUNTER_FIELD)
#undef NET_COUNTER_FIELD
};

/*
 * Each CPU's share of the net layer (DEFINE_PER_CPU), written by that
 * CPU alone: the protocol counters of the frames it handled, and the
 * receive queue of the frame its net_rx() is handling, so what is sent
 * meanwhile (an echo, an ARP reply) leaves on the transmit queue of the
 * same pair and a flow stays on one pair, and one CPU, both ways.
 * Readers on other CPUs add the counters up (net_proto_stats_sum): an
 * aligned 64-bit load is whole on x86-64, only perhaps a moment old.
 */
struct net_cpu {
	struct net_proto_stats stats;
	/*
	 * The device this CPU works on, NULL once it stopped: set and cleared
	 * on the CPU itself (CPU 0: net_register, another CPU: its driver's
	 * requests), so a sender there (pktgen's) can tell that the device
	 * it was given is gone before it touches it again.
	 */
	struct net_dev *dev;
	uint16_t rx_queue;
	/* the lowest pair this CPU owns (sent outside net_rx: a ping), and how many */
	uint16_t home_queue;
	uint16_t pairs;
} __attribute__((aligned(64)));

DECLARE_PER_CPU(struct net_cpu, net_cpu_share);

static inline struct net_cpu *net_this_cpu(void)
{
	return this_cpu_ptr(&net_cpu_share);
}

/* CPU @cpu's share, read for sums (NULL: no such CPU). */
static inline struct net_cpu *net_cpu_of(unsigned int cpu)
{
	return percpu_of(cpu) ? per_cpu_ptr(&net_cpu_share, cpu) : NULL;
}

#define net_stat_inc(name) (net_this_cpu()->stats.name++)
#define net_stat_add(name, n) (net_this_cpu()->stats.name += (n))

/* Every CPU's protocol counters added up into @sum. */
void net_proto_stats_sum(struct net_proto_stats *sum);
/* All to zero (`net reset`): exact only while no other CPU is counting. */
void net_proto_stats_reset(void);

/* The driver, before it hands up frames from receive queue @q. */
static inline void net_set_rx_queue(unsigned int q)
{
	net_this_cpu()->rx_queue = (uint16_t)q;
}

static inline unsigned int net_rx_queue(void)
{
	return net_this_cpu()->rx_queue;
}

/* One device at a time: the first registered is used (on CPU 0). */
void net_register(struct net_dev *dev);
void net_unregister(struct net_dev *dev);
/* The device this CPU works on (NULL: none, or it went away). */
struct net_dev *net_device(void);

/* The driver's receive path: one whole frame, valid only during the call. */
void net_rx(struct net_dev *dev, const void *frame, uint32_t len);

/*
 * A tap that takes every received frame before the protocols see it (the
 * `netsink` RX benchmark counts and drops there). NULL gives the frames
 * back to the stack. The frame is valid only during the call. Set on
 * CPU 0, read by every CPU's receive path (a shared pointer, written and
 * read once each time).
 */
typedef void net_rx_tap_fn(struct net_dev *dev, const void *frame, uint32_t len);
void net_set_rx_tap(net_rx_tap_fn *tap);

/* Send frames through the registered device; returns frames taken. */
unsigned int net_xmit(const struct net_frame *frames, unsigned int n);

/* The prefix length of ip (net.c), for those who show it. */
extern struct config_key cfg_prefix;

/* Our static addressing (host byte order), from the config keys. */
uint32_t net_ip(void);
uint32_t net_netmask(void);
uint32_t net_gateway(void);

/* "a.b.c.d" into @buf (at least 16 bytes). */
const char *net_ip_str(uint32_t ip, char *buf);
/* "aa:bb:cc:dd:ee:ff" into @buf (at least 18 bytes). */
const char *net_mac_str(const uint8_t *mac, char *buf);
int net_parse_ip(const char *s, uint32_t *ip);
int net_parse_mac(const char *s, uint8_t *mac);

#endif
