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
	 * taken; fewer than @n means the ring is full until net_poll()
	 * reclaims sent buffers.
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
	 * Reclaim sent buffers and pass up to @budget received frames to
	 * net_rx(). Returns the frames received.
	 */
	unsigned int (*poll)(struct net_dev *dev, unsigned int budget);
	/*
	 * Would poll() find work? Called with interrupts off before idle=halt
	 * sleeps (optional: NULL never keeps the CPU awake).
	 */
	bool (*pending)(struct net_dev *dev);
	/* Driver details for `net` (optional). */
	void (*show)(struct net_dev *dev);
};

struct net_dev {
	const char *name;
	const struct net_dev_ops *ops;
	void *priv;
	uint8_t mac[ETH_ALEN];
	bool link_up;
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
	/* the CPU whose loop owns each pair set up: the only one that touches it */
	uint16_t pair_cpu[NET_MAX_QUEUES];
};

/* The device's counters and every pair's, added up into @sum. */
static inline void net_dev_stats_sum(const struct net_dev *dev, struct net_dev_stats *sum)
{
	*sum = dev->stats;
	for (unsigned int q = 0; q < NET_MAX_QUEUES; q++) {
#define NET_COUNTER_ADD(name) sum->name += dev->pair[q].name;
		NET_DEV_COUNTERS(NET_COUNTER_ADD)
#undef NET_COUNTER_ADD
	}
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
	X(tx_dropped) X(tx_wrong_cpu)
/* clang-format on */

struct net_proto_stats {
#define NET_COUNTER_FIELD(name) uint64_t name;
	NET_PROTO_COUNTERS(NET_COUNTER_FIELD)
#undef NET_COUNTER_FIELD
};

/* CPUs the net layer keeps a share for (SMP_MAX_CPUS, checked where both are seen). */
#define NET_MAX_CPUS 64

/*
 * Each CPU's share of the net layer, written by that CPU alone: the
 * protocol counters of the frames it handled, and the receive queue of
 * the frame its net_rx() is handling, so what is sent meanwhile (an
 * echo, an ARP reply) leaves on the transmit queue of the same pair and
 * a flow stays on one pair, and one CPU, both ways. Readers on other
 * CPUs add the counters up (net_proto_stats_sum): an aligned 64-bit
 * load is whole on x86-64, only perhaps a moment old.
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
} __attribute__((aligned(64)));

extern struct net_cpu net_cpus[NET_MAX_CPUS];

static inline struct net_cpu *net_this_cpu(void)
{
	return &net_cpus[percpu_read(index)];
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

/* Puts the net layer into the poll loop; call before drivers probe. */
void net_init(void);
/* One device at a time: the first registered is used. */
void net_register(struct net_dev *dev);
void net_unregister(struct net_dev *dev);
struct net_dev *net_device(void);

/* The driver's receive path: one whole frame, valid only during the call. */
void net_rx(struct net_dev *dev, const void *frame, uint32_t len);

/*
 * A tap that takes every received frame before the protocols see it (the
 * `netsink` RX benchmark counts and drops there). NULL gives the frames
 * back to the stack. The frame is valid only during the call.
 */
typedef void net_rx_tap_fn(struct net_dev *dev, const void *frame, uint32_t len);
void net_set_rx_tap(net_rx_tap_fn *tap);

/* From the poll loop: receive, reclaim sent buffers; frames received. */
unsigned int net_poll(void);

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
