// SPDX-License-Identifier: MIT
/*
 * The net layer's core: the one registered device, the poll hook, the
 * static addressing from the config keys, and checksum and text helpers
 * the protocol files share.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/config.h"
#include "kernel/poll.h"
#include "net/proto.h"

CONFIG_KEY(cfg_ip) = {
	.name = "ip",
	.help = "net: our IPv4 address",
	.type = CONFIG_IPV4,
	.max = 0xffffffff,
	.def = 0x0a00020f, /* 10.0.2.15 */
};

CONFIG_KEY(cfg_prefix) = {
	.name = "prefix",
	.help = "net: prefix length of ip (24 is netmask 255.255.255.0)",
	.type = CONFIG_UINT,
	.min = 1,
	.max = 32,
	.def = 24,
};

CONFIG_KEY(cfg_gw) = {
	.name = "gw",
	.help = "net: default gateway (0.0.0.0: none, only the local network)",
	.type = CONFIG_IPV4,
	.max = 0xffffffff,
	.def = 0x0a000202, /* 10.0.2.2 */
};

DEFINE_PER_CPU(struct net_cpu, net_cpu_share);

/*
 * The registered device, CPU 0's; every CPU uses the one its share
 * names (set on that CPU: here for CPU 0, by the driver's requests on
 * the others), so none reads another CPU's word for it.
 */
static struct net_dev *the_dev;

void net_register(struct net_dev *dev)
{
	if (!the_dev)
		the_dev = dev;
	net_this_cpu()->dev = the_dev;
}

void net_unregister(struct net_dev *dev)
{
	if (the_dev == dev)
		the_dev = NULL;
	net_this_cpu()->dev = the_dev;
}

struct net_dev *net_device(void)
{
	return net_this_cpu()->dev;
}

uint32_t net_frame_tag(void)
{
	static uint32_t last;

	if (!++last)
		last = 1;
	return last;
}

unsigned int net_xmit(const struct net_frame *frames, unsigned int n)
{
	struct net_dev *dev = net_device();
	unsigned int sent;

	if (!dev) {
		net_stat_add(tx_dropped, n);
		return 0;
	}
	sent = net_dev_xmit(dev, net_rx_queue(), frames, n);
	net_stat_add(tx_dropped, n - sent);
	return sent;
}

void net_proto_stats_sum(struct net_proto_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++) {
		const struct net_cpu *nc = net_cpu_of(c);

		if (!nc)
			continue;
#define NET_COUNTER_ADD(name) sum->name += nc->stats.name;
		NET_PROTO_COUNTERS(NET_COUNTER_ADD)
#undef NET_COUNTER_ADD
	}
}

void net_proto_stats_reset(void)
{
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++)
		if (net_cpu_of(c))
			memset(&net_cpu_of(c)->stats, 0, sizeof(net_cpu_of(c)->stats));
}

uint32_t net_ip(void)
{
	return (uint32_t)config_get(&cfg_ip);
}

uint32_t net_netmask(void)
{
	unsigned int prefix = (unsigned int)config_get(&cfg_prefix);

	return prefix >= 32 ? 0xffffffffu : ~(0xffffffffu >> prefix);
}

uint32_t net_gateway(void)
{
	return (uint32_t)config_get(&cfg_gw);
}

/* ---- checksums (RFC 1071) ---- */

uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t s = sum;

	while (len >= 2) {
		s += (uint32_t)(p[0] << 8 | p[1]);
		p += 2;
		len -= 2;
	}
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 32)
		s = (s & 0xffffffff) + (s >> 32);
	/* keep headroom for the caller's next add */
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint32_t)s;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint32_t csum_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
	uint32_t s = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;

	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* ---- text ---- */

const char *net_ip_str(uint32_t ip, char *buf)
{
	snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
	return buf;
}

const char *net_mac_str(const uint8_t *mac, char *buf)
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
	return buf;
}

int net_parse_ip(const char *s, uint32_t *ip)
{
	uint32_t v = 0;

	for (int part = 0; part < 4; part++) {
		unsigned int x = 0, digits = 0;

		while (*s >= '0' && *s <= '9') {
			x = x * 10 + (unsigned int)(*s++ - '0');
			if (++digits > 3 || x > 255)
				return -EINVAL;
		}
		if (!digits || *s != (part == 3 ? '\0' : '.'))
			return -EINVAL;
		if (part < 3)
			s++;
		v = v << 8 | x;
	}
	*ip = v;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int net_parse_mac(const char *s, uint8_t *mac)
{
	for (int i = 0; i < ETH_ALEN; i++) {
		int hi = hex_digit(s[0]), lo = hex_digit(s[1]);

		if (hi < 0 || lo < 0 || s[2] != (i == ETH_ALEN - 1 ? '\0' : ':'))
			return -EINVAL;
		mac[i] = (uint8_t)(hi << 4 | lo);
		s += i == ETH_ALEN - 1 ? 2 : 3;
	}
	return 0;
}
