// SPDX-License-Identifier: MIT
/*
 * ARP for IPv4 over Ethernet (RFC 826): answer requests for our address,
 * keep a small cache of neighbours, and resolve an address for ping and
 * pktgen by asking and polling the device until the answer arrives.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/poll.h"
#include "kernel/time.h"
#include "net/proto.h"

#define ARP_LEN 28
#define ARP_HTYPE_ETHER 1
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2
#define ARP_CACHE_SIZE 16
#define ARP_RETRY_NS 500000000ULL

struct arp_entry {
	uint32_t ip; /* 0: unused */
	uint8_t mac[ETH_ALEN];
	uint64_t stamp; /* last update, to replace the oldest */
};

static struct arp_entry cache[ARP_CACHE_SIZE];
static uint64_t cache_clock;

void arp_flush(void)
{
	memset(cache, 0, sizeof(cache));
}

bool arp_lookup(uint32_t ip, uint8_t *mac)
{
	for (int i = 0; i < ARP_CACHE_SIZE; i++) {
		if (cache[i].ip && cache[i].ip == ip) {
			memcpy(mac, cache[i].mac, ETH_ALEN);
			return true;
		}
	}
	return false;
}

void arp_update(uint32_t ip, const uint8_t *mac)
{
	struct arp_entry *e = NULL;

	if (!ip || ip == 0xffffffffu || (mac[0] & 1))
		return; /* never cache broadcast or multicast */
	for (int i = 0; i < ARP_CACHE_SIZE && !e; i++)
		if (cache[i].ip == ip)
			e = &cache[i];
	for (int i = 0; i < ARP_CACHE_SIZE && !e; i++)
		if (!cache[i].ip)
			e = &cache[i];
	if (!e) {
		e = &cache[0];
		for (int i = 1; i < ARP_CACHE_SIZE; i++)
			if (cache[i].stamp < e->stamp)
				e = &cache[i];
	}
	e->ip = ip;
	memcpy(e->mac, mac, ETH_ALEN);
	e->stamp = ++cache_clock;
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

	net_stats.arp_rx++;
	if (len < ARP_LEN || get_be16(pkt) != ARP_HTYPE_ETHER || get_be16(pkt + 2) != ETH_P_IP ||
	    pkt[4] != ETH_ALEN || pkt[5] != 4) {
		net_stats.arp_bad++;
		return;
	}
	op = get_be16(pkt + 6);
	sender_ip = get_be32(pkt + 14);
	target_ip = get_be32(pkt + 24);
	if ((op != ARP_OP_REQUEST && op != ARP_OP_REPLY) || (pkt[8] & 1)) {
		net_stats.arp_bad++;
		return;
	}
	if (target_ip != net_ip())
		return; /* someone else's conversation: not an error */
	/* RFC 826: the sender of a packet to us is worth remembering. */
	arp_update(sender_ip, pkt + 8);
	if (op == ARP_OP_REQUEST && !arp_send(ARP_OP_REPLY, pkt + 8, pkt + 8, sender_ip))
		net_stats.arp_replies_sent++;
}

int arp_send_request(uint32_t ip)
{
	static const uint8_t unknown[ETH_ALEN];
	int ret = arp_send(ARP_OP_REQUEST, eth_broadcast, unknown, ip);

	if (!ret)
		net_stats.arp_requests_sent++;
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
	int n = 0;

	for (int i = 0; i < ARP_CACHE_SIZE; i++) {
		if (!cache[i].ip)
			continue;
		printf("  arp %s at %s\n", net_ip_str(cache[i].ip, ip),
		       net_mac_str(cache[i].mac, mac));
		n++;
	}
	if (!n)
		printf("  arp cache empty\n");
}
