// SPDX-License-Identifier: MIT
/*
 * ARP for IPv4 over Ethernet (RFC 826): answer requests for our address,
 * keep a small cache of neighbours per CPU, and resolve an address for
 * ping and pktgen by asking and polling the device until the answer
 * arrives.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/barrier.h"
#include "kernel/io.h"
#include "kernel/poll.h"
#include "kernel/time.h"
#include "net/proto.h"

#define ARP_LEN 28
#define ARP_HTYPE_ETHER 1
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2
#define ARP_CACHE_SIZE 16
#define ARP_RETRY_NS 500000000ULL

/*
 * One cache per CPU, written only by that CPU: what it learned from the
 * ARP frames its own queues brought. A lookup searches its own CPU's
 * cache, then the others' (the answer to a request may come in on any
 * queue pair, so on any CPU). A reader on another CPU takes an entry as
 * a seqcount reader does: the sequence is odd while the owner writes it,
 * and a copy taken while it changed is taken again. The owner never
 * waits for a reader, so no CPU ever waits for another.
 */
struct arp_entry {
	volatile uint32_t seq; /* odd: being written */
	uint32_t ip; /* 0: unused */
	uint8_t mac[ETH_ALEN];
	uint64_t stamp; /* last update, to replace the oldest */
};

struct arp_cache {
	struct arp_entry e[ARP_CACHE_SIZE];
	uint64_t clock;
	uint64_t flushed; /* the flush generation it was last emptied for */
} __attribute__((aligned(64)));

static DEFINE_PER_CPU(struct arp_cache, arp_cache);
/* Shared: bumped by CPU 0 (arp_flush), read by every CPU. */
static volatile uint64_t flush_gen;

static void write_entry(struct arp_entry *e, uint32_t ip, const uint8_t *mac, uint64_t stamp);

/*
 * The running CPU's cache, emptied first if a flush came since it was
 * last used: entry by entry, as any write, so a reader on another CPU
 * never takes a half-cleared one.
 */
static struct arp_cache *own_cache(void)
{
	static const uint8_t none[ETH_ALEN];
	struct arp_cache *c = this_cpu_ptr(&arp_cache);
	uint64_t gen = flush_gen;

	if (c->flushed != gen) {
		for (int i = 0; i < ARP_CACHE_SIZE; i++)
			if (c->e[i].ip)
				write_entry(&c->e[i], 0, none, 0);
		c->flushed = gen;
	}
	return c;
}

/*
 * Every CPU's cache empties the next time it is used: a flush is a new
 * generation, not a write into caches other CPUs own.
 */
void arp_flush(void)
{
	__atomic_fetch_add(&flush_gen, 1, __ATOMIC_RELEASE);
	own_cache();
}

/* CPU @cpu's cache, read as the seqcount reader below does (NULL: none). */
static const struct arp_cache *cache_of(unsigned int cpu)
{
	return percpu_of(cpu) ? per_cpu_ptr(&arp_cache, cpu) : NULL;
}

/*
 * Entry @e copied whole, false if it holds nothing for @ip: from another
 * CPU's cache it is taken again if its owner changed it meanwhile (from
 * the own cache the sequence is always even and one pass does).
 */
static bool read_entry(const struct arp_entry *e, uint32_t ip, uint8_t *mac)
{
	uint32_t seq;
	bool hit;

	do {
		while ((seq = e->seq) & 1)
			cpu_relax();
		barrier(); /* x86: loads are not reordered */
		hit = e->ip && e->ip == ip;
		if (hit)
			memcpy(mac, e->mac, ETH_ALEN);
		barrier();
	} while (e->seq != seq);
	return hit;
}

static bool lookup_in(const struct arp_cache *c, uint32_t ip, uint8_t *mac)
{
	if (c->flushed != flush_gen)
		return false; /* emptied in spirit: its owner has not used it since */
	for (int i = 0; i < ARP_CACHE_SIZE; i++)
		if (read_entry(&c->e[i], ip, mac))
			return true;
	return false;
}

bool arp_lookup(uint32_t ip, uint8_t *mac)
{
	struct arp_cache *own = own_cache();

	if (lookup_in(own, ip, mac))
		return true;
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++)
		if (cache_of(c) && cache_of(c) != own && lookup_in(cache_of(c), ip, mac))
			return true;
	return false;
}

/* Write @e on its owner's CPU, odd sequence around it for the readers elsewhere. */
static void write_entry(struct arp_entry *e, uint32_t ip, const uint8_t *mac, uint64_t stamp)
{
	e->seq++;
	barrier(); /* x86: stores are not reordered */
	e->ip = ip;
	memcpy(e->mac, mac, ETH_ALEN);
	e->stamp = stamp;
	barrier();
	e->seq++;
}

void arp_update(uint32_t ip, const uint8_t *mac)
{
	struct arp_cache *c;
	struct arp_entry *e = NULL;

	if (!ip || ip == 0xffffffffu || (mac[0] & 1))
		return; /* never cache broadcast or multicast */
	c = own_cache();
	for (int i = 0; i < ARP_CACHE_SIZE && !e; i++)
		if (c->e[i].ip == ip)
			e = &c->e[i];
	for (int i = 0; i < ARP_CACHE_SIZE && !e; i++)
		if (!c->e[i].ip)
			e = &c->e[i];
	if (!e) {
		e = &c->e[0];
		for (int i = 1; i < ARP_CACHE_SIZE; i++)
			if (c->e[i].stamp < e->stamp)
				e = &c->e[i];
	}
	write_entry(e, ip, mac, ++c->clock);
}

static int arp_send(uint16_t op, const uint8_t *dst_mac, const uint8_t *target_mac,
		    uint32_t target_ip)
{
	struct net_dev *dev = net_device();
	uint8_t frame[ETH_ZLEN];
	uint8_t *p = frame + ETH_HLEN;

	if (!dev)
		return -ENODEV;
	put_be16(p, ARP_HTYPE_ETHER);
	put_be16(p + 2, ETH_P_IP);
	p[4] = ETH_ALEN;
	p[5] = 4;
	put_be16(p + 6, op);
	memcpy(p + 8, dev->mac, ETH_ALEN);
	put_be32(p + 14, net_ip());
	memcpy(p + 18, target_mac, ETH_ALEN);
	put_be32(p + 24, target_ip);
	return eth_send(frame, dst_mac, ETH_P_ARP, ARP_LEN);
}

void arp_input(struct net_dev *dev, const uint8_t *pkt, uint32_t len)
{
	uint32_t sender_ip, target_ip;
	uint16_t op;

	net_stat_inc(arp_rx);
	if (len < ARP_LEN || get_be16(pkt) != ARP_HTYPE_ETHER || get_be16(pkt + 2) != ETH_P_IP ||
	    pkt[4] != ETH_ALEN || pkt[5] != 4) {
		net_stat_inc(arp_bad);
		return;
	}
	op = get_be16(pkt + 6);
	sender_ip = get_be32(pkt + 14);
	target_ip = get_be32(pkt + 24);
	if ((op != ARP_OP_REQUEST && op != ARP_OP_REPLY) || (pkt[8] & 1)) {
		net_stat_inc(arp_bad);
		return;
	}
	if (target_ip != net_ip())
		return; /* someone else's conversation: not an error */
	/* RFC 826: the sender of a packet to us is worth remembering. */
	arp_update(sender_ip, pkt + 8);
	if (op == ARP_OP_REQUEST && !arp_send(ARP_OP_REPLY, pkt + 8, pkt + 8, sender_ip))
		net_stat_inc(arp_replies_sent);
}

int arp_send_request(uint32_t ip)
{
	static const uint8_t unknown[ETH_ALEN];
	int ret = arp_send(ARP_OP_REQUEST, eth_broadcast, unknown, ip);

	if (!ret)
		net_stat_inc(arp_requests_sent);
	return ret;
}

struct arp_wait {
	uint32_t ip;
	uint8_t *mac;
	uint64_t next_request;
};

/* Ask again every ARP_RETRY_NS until the answer is in the cache. */
static enum poll_step arp_answered(void *arg)
{
	struct arp_wait *w = arg;
	uint64_t now;

	if (arp_lookup(w->ip, w->mac))
		return POLL_DONE;
	now = now_ns();
	if (now >= w->next_request) {
		arp_send_request(w->ip);
		w->next_request = now + ARP_RETRY_NS;
	}
	return POLL_AGAIN;
}

int arp_resolve(uint32_t ip, uint8_t *mac, uint64_t timeout_ns)
{
	struct arp_wait w = { .ip = ip, .mac = mac };

	return poll_wait(arp_answered, &w, now_ns() + timeout_ns) ? 0 : -ETIMEDOUT;
}

void arp_show(void)
{
	char ip[16], mac[18];
	uint8_t m[ETH_ALEN];
	int n = 0;

	own_cache();
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++) {
		const struct arp_cache *cache = cache_of(c);

		if (!cache || cache->flushed != flush_gen)
			continue; /* none, or emptied in spirit (lookup_in) */
		for (int i = 0; i < ARP_CACHE_SIZE; i++) {
			uint32_t addr = cache->e[i].ip;

			if (!addr || !read_entry(&cache->e[i], addr, m))
				continue;
			printf("  arp %s at %s (cpu %u)\n", net_ip_str(addr, ip),
			       net_mac_str(m, mac), c);
			n++;
		}
	}
	if (!n)
		printf("  arp cache empty\n");
}
