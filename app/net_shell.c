// SPDX-License-Identifier: MIT
/*
 * The `net` and `ping` shell commands, and net_shell_init() which
 * registers them (and pktgen's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/pktgen.h"
#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/stats.h"
#include "kernel/time.h"
#include "net/proto.h"

#define PING_TIMEOUT_NS 2000000000ULL
#define PING_INTERVAL_NS 200000000ULL
#define PING_ID 0x7273 /* "rs" */

/* CPU @c handled frames (CPU 0 is always shown). */
static bool cpu_counted(unsigned int c)
{
	return !c || (net_cpu_of(c) && net_cpu_of(c)->stats.eth_rx);
}

/* "cpus": the frames each CPU's loop handled and the echoes it sent. */
static void put_cpus(struct json_writer *w)
{
	json_open(w, "cpus", '[');
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++) {
		if (!cpu_counted(c))
			continue;
		json_open(w, NULL, '{');
		json_put_u64(w, "cpu", c);
		json_put_u64(w, "eth_rx", net_cpu_of(c)->stats.eth_rx);
		json_put_u64(w, "udp_echoed", udp_echo_count_on(c));
		json_close(w, '}');
	}
	json_close(w, ']');
}

static void show_counters(void)
{
	struct net_dev *dev = net_device();
	struct net_proto_stats proto;

	if (dev) {
		struct net_dev_stats sum;

		net_dev_stats_sum(dev, &sum);
#define SHOW(name) printf("  %-24s %llu\n", #name, (unsigned long long)sum.name);
		NET_DEV_COUNTERS(SHOW)
#undef SHOW
	}
	net_proto_stats_sum(&proto);
#define SHOW(name) printf("  %-24s %llu\n", #name, (unsigned long long)proto.name);
	NET_PROTO_COUNTERS(SHOW)
#undef SHOW
	printf("  %-24s %llu\n", "udp_echoed", (unsigned long long)udp_echo_count());
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++)
		if (cpu_counted(c))
			printf("  cpu %u: eth_rx %llu udp_echoed %llu\n", c,
			       (unsigned long long)net_cpu_of(c)->stats.eth_rx,
			       (unsigned long long)udp_echo_count_on(c));
}

/* "queues_in_use", and "queues": each pair set up, in order, its counters. */
static void put_queues(struct json_writer *w, const struct net_dev *dev)
{
	unsigned int n = dev->queues_set_up ? dev->queues_set_up : 1;

	json_put_u64(w, "queues_in_use", dev->nqueues ? dev->nqueues : 1);
	json_open(w, "queues", '[');
	for (unsigned int q = 0; q < n && q < NET_MAX_QUEUES; q++) {
		const struct net_dev_stats *st = &dev->pair[q];

		json_open(w, NULL, '{');
		json_put_u64(w, "cpu", net_pair_cpu(dev, q));
		json_put_u64(w, "rx_packets", st->rx_packets);
		json_put_u64(w, "rx_bytes", st->rx_bytes);
		json_put_u64(w, "tx_packets", st->tx_packets);
		json_put_u64(w, "tx_bytes", st->tx_bytes);
		json_close(w, '}');
	}
	json_close(w, ']');
}

/*
 * `stats json`'s "net" (the text is `net`'s): "device" (false: no
 * virtio-net, and no device counters), the device's counters and its
 * queue pairs (put_queues), the protocols' and udp_echoed, each under its
 * name in `net`.
 */
static void net_stats_json(struct json_writer *w)
{
	struct net_dev *dev = net_device();
	struct net_proto_stats proto;

	json_put_bool(w, "device", dev != NULL);
	if (dev) {
		struct net_dev_stats sum;

		net_dev_stats_sum(dev, &sum);
#define PUT(name) json_put_u64(w, #name, sum.name);
		NET_DEV_COUNTERS(PUT)
#undef PUT
		put_queues(w, dev);
	}
	net_proto_stats_sum(&proto);
#define PUT(name) json_put_u64(w, #name, proto.name);
	NET_PROTO_COUNTERS(PUT)
#undef PUT
	json_put_u64(w, "udp_echoed", udp_echo_count());
	put_cpus(w);
}

static int cmd_net(int argc, char **argv)
{
	struct net_dev *dev = net_device();
	char ip[16], gw[16], mac[18];

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "arp") && strcmp(argv[1], "reset")))
		return shell_error("usage: net [arp|reset]");
	if (argc == 2 && !strcmp(argv[1], "reset")) {
		net_proto_stats_reset();
		udp_echo_reset();
		if (dev) {
			memset(&dev->stats, 0, sizeof(dev->stats));
			memset(dev->pair, 0, sizeof(dev->pair));
		}
		return 0;
	}
	if (argc == 2) {
		arp_show();
		return 0;
	}
	if (!dev)
		printf("net: no device\n");
	else
		printf("net: %s mac %s link %s mtu %u\n", dev->name, net_mac_str(dev->mac, mac),
		       net_link_up(dev) ? "up" : "down", dev->mtu);
	printf("ip: %s/%u gw %s udp_echo_port %u\n", net_ip_str(net_ip(), ip),
	       (unsigned int)config_get(&cfg_prefix), net_ip_str(net_gateway(), gw),
	       (unsigned int)config_get(&cfg_udp_echo_port));
	if (dev && dev->ops->show)
		dev->ops->show(dev);
	show_counters();
	return 0;
}

static enum poll_step echo_answered(void *arg)
{
	const struct icmp_wait *w = arg;

	return w->answered ? POLL_DONE : POLL_AGAIN;
}

static int ping_one(uint32_t dst, uint16_t seq, uint32_t size, const uint8_t *data)
{
	struct icmp_wait w = { .peer = dst, .id = PING_ID, .seq = seq };
	uint64_t start;
	char ip[16];
	int ret;

	icmp_set_wait(&w);
	start = now_ns();
	ret = icmp_send_echo(dst, PING_ID, seq, data, size);
	if (!ret)
		poll_wait(echo_answered, &w, start + PING_TIMEOUT_NS);
	icmp_set_wait(NULL);
	if (ret) {
		printf("ping: seq %u: send failed (%d)\n", seq, ret);
		return 0;
	}
	if (!w.answered) {
		printf("ping: seq %u: no reply from %s in 2 s\n", seq, net_ip_str(dst, ip));
		return 0;
	}
	printf("%u bytes from %s: icmp_seq=%u time=%.3f ms\n", w.len, net_ip_str(dst, ip), seq,
	       (w.answered_ns - start) / 1e6);
	return 1;
}

static int cmd_ping(int argc, char **argv)
{
	static uint8_t data[ETH_DATA_LEN];
	unsigned long count = 3, size = 56;
	uint32_t dst, hop;
	uint8_t mac[ETH_ALEN];
	unsigned int got = 0;
	uint64_t v;

	if (argc < 2)
		return shell_error("usage: ping IP [count=N] [size=BYTES]");
	if (net_parse_ip(argv[1], &dst))
		return shell_error("ping: bad address '%s'", argv[1]);
	for (int i = 2; i < argc; i++) {
		if (!strncmp(argv[i], "count=", 6)) {
			if (config_parse_uint(argv[i] + 6, &v) || !v || v > 1000000)
				return shell_error("ping: count must be 1..1000000");
			count = v;
		} else if (!strncmp(argv[i], "size=", 5)) {
			if (config_parse_uint(argv[i] + 5, &v) || v > ETH_DATA_LEN - 28)
				return shell_error("ping: size must be 0..%d", ETH_DATA_LEN - 28);
			size = v;
		} else {
			return shell_error("ping: unknown argument '%s'", argv[i]);
		}
	}
	if (!net_device())
		return shell_error("ping: no network device");
	hop = ipv4_next_hop(dst);
	if (!hop)
		return shell_error("ping: no route to %s (set gw=...)", argv[1]);
	if (arp_resolve(hop, mac, PING_TIMEOUT_NS))
		return shell_error("ping: no ARP reply for the next hop");
	for (uint32_t i = 0; i < size; i++)
		data[i] = (uint8_t)i;
	for (unsigned long seq = 1; seq <= count; seq++) {
		uint64_t next = now_ns() + PING_INTERVAL_NS;

		got += ping_one(dst, (uint16_t)seq, (uint32_t)size, data);
		if (seq < count)
			poll_sleep_until(next);
	}
	printf("ping: %lu sent, %u received\n", count, got);
	if (!got)
		return shell_error("ping: no replies from %s", argv[1]);
	return 0;
}

static const struct shell_cmd net_cmd = {
	.name = "net",
	.usage = "[arp|reset]",
	.help = "network device, addressing and counters",
	.run = cmd_net,
};

static const struct shell_cmd ping_cmd = {
	.name = "ping",
	.usage = "IP [count=N] [size=BYTES]",
	.help = "ICMP echo to a peer, prints round-trip times",
	.run = cmd_ping,
};

void net_shell_init(void)
{
	shell_register(&net_cmd);
	shell_register(&ping_cmd);
	stats_register("net", NULL, net_stats_json);
	pktgen_init();
}
