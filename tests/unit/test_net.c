// SPDX-License-Identifier: MIT
/*
 * net/ on the host: the real protocol code against a fake device that
 * records what is sent and feeds frames to net_rx(). Frames are built here
 * byte by byte, independently of net/, and the replies are checked field
 * by field; malformed input must bump exactly its counter and send nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "app/app.h"
#include "app/json.h"
#include "app/pktgen.h"
#include "kernel/config.h"
#include "kernel/console.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/stats.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"
#include "net/net.h"
#include "net/proto.h"
#include "stub_kernel.h"

/* ---- kernel stubs ---- */

static uint64_t fake_ns;

uint64_t now_ns(void)
{
	return fake_ns += 1000; /* time moves on every look */
}

static const struct shell_cmd *stats_cmd; /* kernel/stats.c's, to run it */

void shell_register(const struct shell_cmd *cmd)
{
	if (!strcmp(cmd->name, "stats"))
		stats_cmd = cmd;
}

/* What kernel/stats.c wrote to the console (`stats json` writes there). */
static char console_out[STATS_JSON_MAX + 64];
static size_t console_len;

void console_write(const char *buf, size_t len)
{
	assert_true(console_len + len < sizeof(console_out));
	memcpy(console_out + console_len, buf, len);
	console_len += len;
	console_out[console_len] = '\0';
}

int shell_error(const char *fmt, ...)
{
	return -1;
}

/* A second CPU, for pktgen's senders: its loop makes a pass whenever CPU 0 would halt. */
static struct percpu ap_cpu;

static void ap_pass_while_idle(uint64_t wake_by)
{
	stub_cpu_enter(&ap_cpu);
	poll_once();
	stub_cpu_enter(&percpu_boot);
}

/* ---- the fake device ---- */

#define MAX_SENT 4096

static uint8_t sent[MAX_SENT][ETH_FRAME_LEN];
static uint32_t sent_len[MAX_SENT];
static unsigned int n_sent;
static unsigned int room = MAX_SENT; /* frames the "ring" takes before full */
static unsigned int bursts, polls;
static bool stuck; /* poll reclaims nothing */

/* a frame the device "receives" on the next poll (for arp_resolve) */
static uint8_t pending_rx[ETH_FRAME_LEN];
static uint32_t pending_rx_len;
static uint32_t answer_len; /* pending_rx comes in once a frame is sent (device_answers) */

static struct net_dev fake;
static struct poll_ctx fake_ctx;

/* Frames each CPU sent on each queue (queue 0 through xmit_burst). */
static uint64_t sent_by[2][NET_MAX_QUEUES];

static unsigned int fake_xmit(struct net_dev *dev, const struct net_frame *f, unsigned int n)
{
	unsigned int i;

	bursts++;
	for (i = 0; i < n && room; i++, room--) {
		assert_true(f[i].len <= ETH_FRAME_LEN);
		assert_true(n_sent < MAX_SENT);
		memcpy(sent[n_sent], f[i].data, f[i].len);
		sent_len[n_sent++] = f[i].len;
		dev->stats.tx_packets++;
	}
	if (i)
		dev->stats.tx_kicks++;
	if (i < n) /* full: sent buffers come back in the device's poll */
		poll_schedule(&fake_ctx);
	if (i && answer_len) { /* what was sent gets its answer */
		pending_rx_len = answer_len;
		answer_len = 0;
		poll_schedule(&fake_ctx);
	}
	assert_true(this_cpu()->index < 2);
	sent_by[this_cpu()->index][0] += i;
	return i;
}

/*
 * The device's poll context, CPU 0's: sent buffers back ("reclaim", work
 * as in virtio_net.c), then the frame waiting, up to net_rx().
 */
static unsigned int fake_poll(struct poll_ctx *ctx, unsigned int budget)
{
	unsigned int work = 0;

	polls++;
	if (!stuck && room < 64) {
		room += 64;
		work = 1;
	}
	if (pending_rx_len) {
		uint32_t len = pending_rx_len;

		pending_rx_len = 0;
		net_rx(&fake, pending_rx, len);
		return 1;
	}
	return work;
}

static struct poll_ctx fake_ctx = { .name = "fake", .poll = fake_poll };

/* A frame in the "ring", and its interrupt: the device's context is scheduled. */
static void device_receives(uint32_t len)
{
	pending_rx_len = len;
	poll_schedule(&fake_ctx);
}

/* The frame in pending_rx comes in once the guest has sent one (an answer). */
static void device_answers(uint32_t len)
{
	answer_len = len;
}

/* The CPU whose loop owns each pair (as a driver's contexts say). */
static unsigned int fake_pair_owner[NET_MAX_QUEUES];

static unsigned int fake_pair_cpu(const struct net_dev *dev, unsigned int q)
{
	return fake_pair_owner[q];
}

static unsigned int fake_xmit_queue(struct net_dev *dev, unsigned int q, const struct net_frame *f,
				    unsigned int n)
{
	unsigned int got = fake_xmit(dev, f, n);

	/* fake_xmit counted it as queue 0's */
	assert_true(q < NET_MAX_QUEUES);
	sent_by[this_cpu()->index][0] -= got;
	sent_by[this_cpu()->index][q] += got;
	return got;
}

static const struct net_dev_ops fake_ops = {
	.xmit_burst = fake_xmit,
	.xmit_queue = fake_xmit_queue,
	.pair_cpu = fake_pair_cpu,
};

static struct net_dev fake = {
	.name = "fake",
	.ops = &fake_ops,
	.mac = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 },
	.mtu = 1500,
};

/*
 * The console's context: a command that waits (`arp`, `pktgen`) runs
 * inside it, as the shell runs commands, and its wait runs the loop
 * around it.
 */
static int (*command_fn)(const void *arg);
static const void *command_arg;
static int command_ret;

static unsigned int console_poll(struct poll_ctx *ctx, unsigned int budget)
{
	int (*fn)(const void *arg) = command_fn;

	command_fn = NULL; /* once */
	if (fn)
		command_ret = fn(command_arg);
	return 0;
}

static struct poll_ctx console_ctx = { .name = "console", .poll = console_poll };

static int run_command(int (*fn)(const void *arg), const void *arg)
{
	command_fn = fn;
	command_arg = arg;
	command_ret = -1000;
	poll_schedule(&console_ctx);
	poll_once();
	assert_int_not_equal(command_ret, -1000);
	return command_ret;
}

struct arp_cmd {
	uint32_t ip;
	uint8_t *mac;
	uint64_t timeout_ns;
};

static int arp_cmd(const void *arg)
{
	const struct arp_cmd *c = arg;

	return arp_resolve(c->ip, c->mac, c->timeout_ns);
}

static int arp_resolve_cmd(uint32_t ip, uint8_t *mac, uint64_t timeout_ns)
{
	struct arp_cmd c = { ip, mac, timeout_ns };

	return run_command(arp_cmd, &c);
}

struct pktgen_cmd {
	const struct pktgen_params *p;
	struct pktgen_result *r;
};

static int pktgen_cmd(const void *arg)
{
	const struct pktgen_cmd *c = arg;

	return pktgen_run(c->p, c->r);
}

static int pktgen_run_cmd(const struct pktgen_params *p, struct pktgen_result *r)
{
	struct pktgen_cmd c = { p, r };

	return run_command(pktgen_cmd, &c);
}

static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
#define OUR_IP 0x0a00020f /* 10.0.2.15 */
#define PEER_IP 0x0a000202 /* 10.0.2.2 */

static int setup(void **state)
{
	char err[128];

	config_reset();
	assert_int_equal(config_set("ip", "10.0.2.15", err, sizeof(err)), 0);
	assert_int_equal(config_set("gw", "10.0.2.1", err, sizeof(err)), 0);
	net_proto_stats_reset();
	memset(&fake.stats, 0, sizeof(fake.stats));
	if (!fake_ctx.cpu) /* the device's context: waits (ARP, pktgen) run the real loop */
		assert_int_equal(poll_ctx_add(&fake_ctx), 0);
	if (!console_ctx.cpu)
		assert_int_equal(poll_ctx_add(&console_ctx), 0);
	udp_echo_init(); /* binds udp_echo_port as config_reset() left it */
	net_unregister(net_device());
	net_register(&fake);
	arp_flush();
	n_sent = 0;
	room = MAX_SENT;
	bursts = polls = 0;
	pending_rx_len = 0;
	answer_len = 0;
	stuck = false;
	/* what an earlier test left scheduled runs now: the loop starts idle */
	for (int i = 0; i < 4 && poll_scheduled(); i++)
		poll_once();
	assert_false(poll_scheduled());
	polls = 0;
	return 0;
}

/* ---- frame builders (independent of net/) ---- */

static uint16_t sum16(const uint8_t *p, size_t len, uint32_t s)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void w16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void w32(uint8_t *p, uint32_t v)
{
	w16(p, v >> 16);
	w16(p + 2, v & 0xffff);
}

static uint16_t r16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t r32(const uint8_t *p)
{
	return (uint32_t)r16(p) << 16 | r16(p + 2);
}

static uint32_t build_eth(uint8_t *f, const uint8_t *dst, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, peer_mac, 6);
	w16(f + 12, type);
	return 14;
}

/* IPv4 header at f+14 for @plen bytes of payload; returns frame length. */
static uint32_t build_ip(uint8_t *f, uint32_t src, uint32_t dst, uint8_t proto, uint32_t plen)
{
	uint8_t *ip = f + 14;

	build_eth(f, fake.mac, 0x0800);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	w16(ip + 2, (uint16_t)(20 + plen));
	w16(ip + 4, 77);
	ip[8] = 64;
	ip[9] = proto;
	w32(ip + 12, src);
	w32(ip + 16, dst);
	w16(ip + 10, sum16(ip, 20, 0));
	return 14 + 20 + plen;
}

static uint16_t udp_sum(uint32_t src, uint32_t dst, const uint8_t *udp, uint16_t len)
{
	uint32_t s = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + 17 + len;

	return sum16(udp, len, s);
}

static uint32_t build_udp(uint8_t *f, uint16_t sport, uint16_t dport, const void *data,
			  uint16_t len)
{
	uint8_t *udp = f + 34;
	uint16_t c;

	w16(udp, sport);
	w16(udp + 2, dport);
	w16(udp + 4, (uint16_t)(8 + len));
	w16(udp + 6, 0);
	memcpy(udp + 8, data, len);
	c = udp_sum(PEER_IP, OUR_IP, udp, (uint16_t)(8 + len));
	w16(udp + 6, c ? c : 0xffff);
	return build_ip(f, PEER_IP, OUR_IP, 17, 8u + len);
}

static uint32_t build_icmp_echo(uint8_t *f, uint8_t type, uint16_t id, uint16_t seq,
				const void *data, uint16_t len)
{
	uint8_t *icmp = f + 34;

	icmp[0] = type;
	icmp[1] = 0;
	w16(icmp + 2, 0);
	w16(icmp + 4, id);
	w16(icmp + 6, seq);
	memcpy(icmp + 8, data, len);
	w16(icmp + 2, sum16(icmp, 8u + len, 0));
	return build_ip(f, PEER_IP, OUR_IP, 1, 8u + len);
}

static uint32_t build_arp(uint8_t *f, uint16_t op, uint32_t target)
{
	uint8_t *a = f + 14;

	build_eth(f, (const uint8_t *)"\xff\xff\xff\xff\xff\xff", 0x0806);
	w16(a, 1);
	w16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	w16(a + 6, op);
	memcpy(a + 8, peer_mac, 6);
	w32(a + 14, PEER_IP);
	memset(a + 18, 0, 6);
	w32(a + 24, target);
	return 14 + 28;
}

/* The protocol counters as `net` shows them: every CPU's added up. */
static struct net_proto_stats proto_now(void)
{
	struct net_proto_stats sum;

	net_proto_stats_sum(&sum);
	return sum;
}

/* Every counter must be zero except those named; checks the "exactly one" rule. */
static void assert_only(const char *names)
{
#define CHECK(name)                                                      \
	if (!strstr(names, " " #name " ") && proto_now().name) {         \
		fprintf(stderr, "unexpected counter %s = %llu\n", #name, \
			(unsigned long long)proto_now().name);           \
		fail();                                                  \
	}
	NET_PROTO_COUNTERS(CHECK)
#undef CHECK
}

/* ---- tests ---- */

static void test_arp_request_answered(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_arp(f, 1, OUR_IP);
	const uint8_t *r, *a;
	uint8_t mac[6];

	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 1);
	r = sent[0];
	a = r + 14;
	assert_int_equal(sent_len[0], 60); /* padded to the minimum */
	assert_memory_equal(r, peer_mac, 6);
	assert_memory_equal(r + 6, fake.mac, 6);
	assert_int_equal(r16(r + 12), 0x0806);
	assert_int_equal(r16(a + 6), 2);
	assert_memory_equal(a + 8, fake.mac, 6);
	assert_int_equal(r32(a + 14), OUR_IP);
	assert_memory_equal(a + 18, peer_mac, 6);
	assert_int_equal(r32(a + 24), PEER_IP);
	/* the asker is cached */
	assert_true(arp_lookup(PEER_IP, mac));
	assert_memory_equal(mac, peer_mac, 6);
	assert_int_equal(proto_now().arp_replies_sent, 1);
	assert_only(" eth_rx arp_rx arp_replies_sent ");
}

static void test_arp_for_someone_else_ignored(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_arp(f, 1, 0x0a000299);

	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 0);
	assert_only(" eth_rx arp_rx ");
}

static void test_arp_malformed(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_arp(f, 1, OUR_IP);

	net_rx(&fake, f, len - 1); /* short */
	f[14 + 4] = 8; /* hlen */
	net_rx(&fake, f, len);
	build_arp(f, 3, OUR_IP); /* op */
	net_rx(&fake, f, len);
	build_arp(f, 1, OUR_IP);
	f[14 + 8] |= 1; /* multicast sender */
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 0);
	assert_int_equal(proto_now().arp_bad, 4);
	assert_only(" eth_rx arp_rx arp_bad ");
}

static void test_arp_cache_replaces_oldest(void **state)
{
	uint8_t mac[6] = { 2, 0, 0, 0, 0, 0 }, out[6];

	for (uint32_t i = 1; i <= 20; i++) {
		mac[5] = (uint8_t)i;
		arp_update(0x0a000200 + i, mac);
	}
	assert_false(arp_lookup(0x0a000201, out)); /* the first ones went */
	assert_true(arp_lookup(0x0a000214, out));
	assert_int_equal(out[5], 20);
	mac[0] = 1; /* multicast is never cached */
	arp_update(0x0a000299, mac);
	assert_false(arp_lookup(0x0a000299, out));
}

static void test_icmp_echo_reply(void **state)
{
	uint8_t f[ETH_FRAME_LEN], data[1000];
	uint32_t len;
	const uint8_t *ip, *icmp;

	for (int i = 0; i < (int)sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	len = build_icmp_echo(f, 8, 0x1234, 9, data, sizeof(data));
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 1);
	assert_int_equal(sent_len[0], len);
	ip = sent[0] + 14;
	icmp = ip + 20;
	assert_memory_equal(sent[0], peer_mac, 6);
	assert_int_equal(sum16(ip, 20, 0), 0);
	assert_int_equal(r32(ip + 12), OUR_IP);
	assert_int_equal(r32(ip + 16), PEER_IP);
	assert_int_equal(ip[9], 1);
	assert_int_equal(icmp[0], 0);
	assert_int_equal(r16(icmp + 4), 0x1234);
	assert_int_equal(r16(icmp + 6), 9);
	assert_int_equal(sum16(icmp, 8 + sizeof(data), 0), 0);
	assert_memory_equal(icmp + 8, data, sizeof(data));
	assert_only(" eth_rx ip_rx icmp_rx icmp_echo_replies_sent ");
}

static void test_icmp_malformed(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len;

	len = build_icmp_echo(f, 8, 1, 1, "abcd", 4);
	f[34 + 8] ^= 1; /* data changed, checksum not */
	net_rx(&fake, f, len);
	build_ip(f, PEER_IP, OUR_IP, 1, 4); /* shorter than an ICMP header */
	net_rx(&fake, f, 14 + 24);
	len = build_icmp_echo(f, 13, 1, 1, "abcd", 4); /* timestamp: not supported */
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 0);
	assert_int_equal(proto_now().icmp_bad_csum, 1);
	assert_int_equal(proto_now().icmp_short, 1);
	assert_int_equal(proto_now().icmp_unknown_type, 1);
	assert_only(" eth_rx ip_rx icmp_rx icmp_bad_csum icmp_short icmp_unknown_type ");
}

static void test_udp_echo(void **state)
{
	static const uint16_t sizes[] = { 0, 1, 18, 1472 };
	uint8_t f[ETH_FRAME_LEN], data[1472];
	uint64_t echoed = udp_echo_count();

	for (int i = 0; i < (int)sizeof(data); i++)
		data[i] = (uint8_t)(i ^ 0x5a);
	for (unsigned int k = 0; k < 4; k++) {
		uint32_t len = build_udp(f, 5555, 7, data, sizes[k]);
		const uint8_t *ip, *udp;

		n_sent = 0;
		net_rx(&fake, f, len);
		assert_int_equal(n_sent, 1);
		assert_int_equal(sent_len[0], len < 60 ? 60 : len);
		ip = sent[0] + 14;
		udp = ip + 20;
		assert_int_equal(sum16(ip, 20, 0), 0);
		assert_int_equal(r16(ip + 2), 28 + sizes[k]);
		assert_int_equal(r32(ip + 12), OUR_IP);
		assert_int_equal(r32(ip + 16), PEER_IP);
		assert_int_equal(r16(udp), 7);
		assert_int_equal(r16(udp + 2), 5555);
		assert_int_equal(r16(udp + 4), 8 + sizes[k]);
		/* checksum over the pseudo header verifies to zero */
		{
			uint32_t s = (OUR_IP >> 16) + (OUR_IP & 0xffff) + (PEER_IP >> 16) +
				     (PEER_IP & 0xffff) + 17 + 8u + sizes[k];
			assert_int_equal(sum16(udp, 8u + sizes[k], s), 0);
		}
		assert_memory_equal(udp + 8, data, sizes[k]);
	}
	assert_int_equal(udp_echo_count() - echoed, 4);
}

static unsigned int bound_rx_calls;

static void bound_rx(const uint8_t *frame, uint32_t src, const uint8_t *udp, uint32_t len)
{
	assert_int_equal(src, PEER_IP);
	assert_int_equal(len, 8 + 2);
	assert_memory_equal(udp + 8, "hi", 2);
	bound_rx_calls++;
}

static void test_udp_bind(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_udp(f, 5555, 4000, "hi", 2);

	bound_rx_calls = 0;
	assert_int_equal(udp_bind(4000, bound_rx), 0);
	assert_int_equal(udp_bind(4000, bound_rx), -EADDRINUSE);
	assert_int_equal(udp_bind(7, bound_rx), -EADDRINUSE); /* the echo service has it */
	assert_int_equal(udp_bind(0, bound_rx), -EINVAL);
	net_rx(&fake, f, len);
	assert_int_equal(bound_rx_calls, 1);
	udp_unbind(4000);
	net_rx(&fake, f, len);
	assert_int_equal(bound_rx_calls, 1);
	assert_int_equal(proto_now().udp_no_port, 1);
}

static void test_udp_echo_port_config(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	char err[128];
	uint32_t len = build_udp(f, 5555, 7, "x", 1);

	assert_int_equal(config_set("udp_echo_port", "0", err, sizeof(err)), 0);
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 0);
	assert_int_equal(config_set("udp_echo_port", "7777", err, sizeof(err)), 0);
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 0);
	len = build_udp(f, 5555, 7777, "x", 1);
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 1);
	assert_int_equal(proto_now().udp_no_port, 2);
}

static void test_udp_zero_checksum_accepted(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_udp(f, 1, 7, "abc", 3);

	w16(f + 34 + 6, 0); /* "no checksum" (RFC 768) */
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 1);
}

static void test_udp_malformed(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len;

	len = build_udp(f, 1, 7, "abcdef", 6);
	f[34 + 9] ^= 0xff; /* payload changed: bad checksum */
	net_rx(&fake, f, len);
	len = build_udp(f, 1, 7, "abcdef", 6);
	w16(f + 34 + 4, 100); /* UDP length beyond the datagram */
	net_rx(&fake, f, len);
	w16(f + 34 + 4, 4); /* UDP length below its header */
	net_rx(&fake, f, len);
	build_ip(f, PEER_IP, OUR_IP, 17, 4); /* shorter than a UDP header */
	net_rx(&fake, f, 14 + 24);
	assert_int_equal(n_sent, 0);
	assert_int_equal(proto_now().udp_bad_csum, 1);
	assert_int_equal(proto_now().udp_bad_len, 2);
	assert_int_equal(proto_now().udp_short, 1);
	assert_only(" eth_rx ip_rx udp_rx udp_bad_csum udp_bad_len udp_short ");
}

static void test_udp_shorter_than_ip_payload(void **state)
{
	/* the UDP length rules: trailing bytes inside the IP datagram are not echoed */
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_udp(f, 1, 7, "abcdef", 6);
	uint8_t *udp = f + 34;
	uint16_t c;

	w16(udp + 4, 8 + 3);
	w16(udp + 6, 0);
	c = udp_sum(PEER_IP, OUR_IP, udp, 11);
	w16(udp + 6, c ? c : 0xffff);
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 1);
	assert_int_equal(r16(sent[0] + 34 + 4), 11);
	assert_memory_equal(sent[0] + 42, "abc", 3);
}

static void test_ip_malformed(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len;

	len = build_udp(f, 1, 7, "abc", 3);
	f[14] = 0x65; /* version 6 */
	net_rx(&fake, f, len);
	len = build_udp(f, 1, 7, "abc", 3);
	f[14] = 0x44; /* header length 16 */
	net_rx(&fake, f, len);
	len = build_udp(f, 1, 7, "abc", 3);
	f[14] = 0x4f; /* header length 60 > datagram */
	net_rx(&fake, f, 14 + 40);
	len = build_udp(f, 1, 7, "abc", 3);
	net_rx(&fake, f, 14 + 19); /* shorter than a header */
	len = build_udp(f, 1, 7, "abc", 3);
	net_rx(&fake, f, len - 1); /* total length beyond the frame */
	len = build_udp(f, 1, 7, "abc", 3);
	f[14 + 8] = 1; /* TTL changed, checksum not */
	net_rx(&fake, f, len);
	len = build_udp(f, 1, 7, "abc", 3);
	w16(f + 14 + 6, 0x2000); /* more fragments */
	w16(f + 14 + 10, 0);
	w16(f + 14 + 10, sum16(f + 14, 20, 0));
	net_rx(&fake, f, len);
	build_ip(f, PEER_IP, 0x0a000263, 17, 11); /* not ours */
	net_rx(&fake, f, len);
	build_ip(f, PEER_IP, OUR_IP, 6, 11); /* TCP */
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 0);
	assert_int_equal(proto_now().ip_bad_version, 1);
	assert_int_equal(proto_now().ip_bad_hlen, 2);
	assert_int_equal(proto_now().ip_short, 1);
	assert_int_equal(proto_now().ip_bad_len, 1);
	assert_int_equal(proto_now().ip_bad_csum, 1);
	assert_int_equal(proto_now().ip_fragment, 1);
	assert_int_equal(proto_now().ip_not_for_us, 1);
	assert_int_equal(proto_now().ip_unknown_proto, 1);
}

static void test_eth_filtering(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_udp(f, 1, 7, "abc", 3);

	net_rx(&fake, f, 13);
	f[0] ^= 2; /* someone else's MAC */
	net_rx(&fake, f, len);
	f[0] ^= 2;
	w16(f + 12, 0x86dd); /* IPv6 */
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 0);
	assert_int_equal(proto_now().eth_short, 1);
	assert_int_equal(proto_now().eth_not_for_us, 1);
	assert_int_equal(proto_now().eth_unknown_type, 1);
	assert_only(" eth_rx eth_short eth_not_for_us eth_unknown_type ");
}

static void test_padded_frame_accepted(void **state)
{
	/* 60-byte minimum: a small datagram arrives with padding after it */
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_udp(f, 1, 7, "a", 1);

	memset(f + len, 0xee, 60 - len);
	net_rx(&fake, f, 60);
	assert_int_equal(n_sent, 1);
	assert_int_equal(r16(sent[0] + 14 + 2), 29);
}

static void test_no_device_drops(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_udp(f, 1, 7, "a", 1);

	net_unregister(&fake);
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 0);
	assert_int_equal(proto_now().tx_dropped, 1);
	assert_null(net_device()); /* this CPU sends through nothing */
}

static void test_ring_full_counted(void **state)
{
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len = build_udp(f, 1, 7, "a", 1);
	uint64_t echoed = udp_echo_count();

	room = 0;
	net_rx(&fake, f, len);
	assert_int_equal(n_sent, 0);
	assert_int_equal(proto_now().tx_dropped, 1);
	assert_int_equal(udp_echo_count(), echoed);
}

static void test_next_hop(void **state)
{
	char err[128];

	assert_int_equal(ipv4_next_hop(0x0a000263), 0x0a000263);
	assert_int_equal(ipv4_next_hop(0x08080808), 0x0a000201);
	assert_int_equal(config_set("gw", "0.0.0.0", err, sizeof(err)), 0);
	assert_int_equal(ipv4_next_hop(0x08080808), 0);
	assert_int_equal(config_set("prefix", "8", err, sizeof(err)), 0);
	assert_int_equal(ipv4_next_hop(0x0a636363), 0x0a636363);
	assert_int_equal(net_netmask(), 0xff000000);
	assert_int_equal(config_set("prefix", "32", err, sizeof(err)), 0);
	assert_int_equal(net_netmask(), 0xffffffff);
}

/*
 * A frame in the ring: its interrupt schedules the device's context, so
 * the loop does not halt (idle.c checks the scheduled word) until a pass
 * has taken it.
 */
static void test_pending_frame_keeps_loop_awake(void **state)
{
	assert_false(poll_scheduled());
	device_receives(build_udp(pending_rx, 5555, 7, "x", 1));
	assert_true(poll_scheduled());
	assert_int_equal(poll_once(), 1); /* the loop's pass takes it */
	assert_false(poll_scheduled());
	assert_int_equal(n_sent, 1); /* and the echo service answered */
}

static void test_arp_resolve_polls(void **state)
{
	uint8_t mac[6];
	uint8_t *a = pending_rx + 14;

	/* the "device" answers the request */
	build_eth(pending_rx, fake.mac, 0x0806);
	w16(a, 1);
	w16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	w16(a + 6, 2);
	memcpy(a + 8, peer_mac, 6);
	w32(a + 14, PEER_IP);
	memcpy(a + 18, fake.mac, 6);
	w32(a + 24, OUR_IP);
	device_answers(42);
	assert_int_equal(arp_resolve_cmd(PEER_IP, mac, 1000000000ULL), 0);
	assert_memory_equal(mac, peer_mac, 6);
	assert_int_equal(n_sent, 1); /* the request */
	assert_memory_equal(sent[0], "\xff\xff\xff\xff\xff\xff", 6);
	assert_int_equal(r16(sent[0] + 14 + 6), 1);
	assert_int_equal(r32(sent[0] + 14 + 24), PEER_IP);
	/* nobody answers for .99: times out after a few requests */
	assert_int_not_equal(arp_resolve_cmd(0x0a000263, mac, 2000000000ULL), 0);
	assert_true(proto_now().arp_requests_sent >= 3);
}

static void test_ping_reply_matched(void **state)
{
	struct icmp_wait w = { .peer = PEER_IP, .id = 7, .seq = 3 };
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len;

	arp_update(PEER_IP, peer_mac);
	assert_int_equal(icmp_send_echo(PEER_IP, 7, 3, "ping", 4), 0);
	assert_int_equal(n_sent, 1);
	assert_int_equal(sent[0][34], 8);
	assert_int_equal(sum16(sent[0] + 34, 12, 0), 0);
	icmp_set_wait(&w);
	len = build_icmp_echo(f, 0, 7, 2, "ping", 4); /* wrong seq */
	net_rx(&fake, f, len);
	assert_false(w.answered);
	len = build_icmp_echo(f, 0, 7, 3, "ping", 4);
	net_rx(&fake, f, len);
	assert_true(w.answered);
	assert_int_equal(w.len, 12);
	icmp_set_wait(NULL);
	/* no ARP entry: refused, not sent */
	assert_int_not_equal(icmp_send_echo(0x0a000263, 7, 4, "x", 1), 0);
	assert_int_equal(proto_now().tx_no_arp, 1);
}

/*
 * An echo reply may come in on any pair, so on any CPU: seen on CPU 1 it
 * goes to the wait of `ping`, CPU 0's alone, as a reply (xcpu_reply),
 * and counts as answered once CPU 0's loop ran it.
 */
static void test_ping_reply_seen_on_another_cpu(void **state)
{
	struct icmp_wait w = { .peer = PEER_IP, .id = 9, .seq = 1 };
	unsigned int replies = stub_xcpu_replies;
	uint8_t f[ETH_FRAME_LEN];

	stub_cpu_start(&ap_cpu, 1);
	per_cpu_ptr(&net_cpu_share, 1)->dev = &fake;
	icmp_set_wait(&w);
	stub_cpu_enter(&ap_cpu);
	net_rx(&fake, f, build_icmp_echo(f, 0, 9, 1, "ping", 4));
	stub_cpu_enter(&percpu_boot);
	assert_int_equal(per_cpu_ptr(&net_cpu_share, 1)->stats.icmp_rx, 1);
	assert_int_equal(stub_xcpu_replies - replies, 1);
	assert_false(w.answered); /* CPU 1 left the wait alone */
	xcpu_drain();
	assert_true(w.answered);
	assert_int_equal(w.len, 12);
	/* another id: CPU 0 runs the reply and matches nothing */
	w.answered = false;
	stub_cpu_enter(&ap_cpu);
	net_rx(&fake, f, build_icmp_echo(f, 0, 8, 1, "ping", 4));
	stub_cpu_enter(&percpu_boot);
	xcpu_drain();
	assert_false(w.answered);
	icmp_set_wait(NULL);
	per_cpu_ptr(&net_cpu_share, 1)->dev = NULL;
	stub_cpu_stop(1);
}

static void test_pktgen_frame(void **state)
{
	struct pktgen_params p = { .count = 1, .size = 64, .burst = 1, .dst = PEER_IP, .port = 9 };
	uint8_t f[ETH_FRAME_LEN];
	uint32_t len;

	memcpy(p.dst_mac, peer_mac, 6);
	len = pktgen_build(f, &p, fake.mac);
	assert_int_equal(len, 64);
	assert_memory_equal(f, peer_mac, 6);
	assert_int_equal(sum16(f + 14, 20, 0), 0);
	assert_int_equal(r16(f + 14 + 2), 50);
	assert_int_equal(r16(f + 36), 9);
	assert_int_equal(r16(f + 38), 30);
	{
		uint32_t s = (OUR_IP >> 16) + (OUR_IP & 0xffff) + (PEER_IP >> 16) +
			     (PEER_IP & 0xffff) + 17 + 30;
		assert_int_equal(sum16(f + 34, 30, s), 0);
	}
	assert_int_equal(r32(f + 42), PKTGEN_MAGIC);
	p.size = 10; /* clamped to the minimum */
	assert_int_equal(pktgen_build(f, &p, fake.mac), 60);
	p.size = 9000;
	assert_int_equal(pktgen_build(f, &p, fake.mac), 1514);
}

static void test_pktgen_bursts_and_ring_full(void **state)
{
	struct pktgen_params p = {
		.count = 1000, .size = 64, .burst = 256, .dst = PEER_IP, .port = 9
	};
	struct pktgen_result r;

	memcpy(p.dst_mac, peer_mac, 6);
	room = 100; /* the "ring" fills: pktgen polls to reclaim and goes on */
	assert_int_equal(pktgen_run_cmd(&p, &r), 0);
	assert_int_equal(r.sent, 1000);
	assert_int_equal(n_sent, 1000);
	assert_int_equal(r.bytes, 64000);
	assert_true(r.ring_full > 0);
	assert_int_equal(r.kicks, fake.stats.tx_kicks);
	assert_true(polls >= bursts - 1);
	for (unsigned int i = 1; i < n_sent; i++)
		assert_memory_equal(sent[i], sent[0], 64);
	/* a device that never reclaims: pktgen gives up instead of hanging */
	setup(NULL);
	room = 5;
	stuck = true;
	p.count = 10;
	assert_int_not_equal(pktgen_run_cmd(&p, &r), 0);
	assert_int_equal(r.sent, 5);
	stuck = false;
	p.burst = 0;
	assert_int_not_equal(pktgen_run_cmd(&p, &r), 0);
}

/*
 * Two pairs, the second CPU 1's: pktgen queues=2 splits the count, CPU 0
 * sends queue 0's share from its wait, CPU 1 queue 1's from the poller a
 * request started there, and neither sends on the other's queue.
 */
static void test_pktgen_a_sender_per_cpu(void **state)
{
	struct pktgen_params p = {
		.count = 1001, .size = 64, .burst = 64, .dst = PEER_IP, .port = 9, .queues = 2
	};
	struct pktgen_result r;

	stub_cpu_start(&ap_cpu, 1);
	stub_idle_hook = ap_pass_while_idle;
	fake.nqueues = 2;
	fake_pair_owner[1] = 1;
	per_cpu_ptr(&net_cpu_share, 1)->dev = &fake; /* as the driver's request there sets it */
	memset(sent_by, 0, sizeof(sent_by));
	memcpy(p.dst_mac, peer_mac, 6);
	room = 300; /* both fill the "ring" and wait for reclaims */
	assert_int_equal(pktgen_run_cmd(&p, &r), 0);
	assert_int_equal(r.sent, 1001);
	assert_int_equal(r.sent_queue[0], 501);
	assert_int_equal(r.sent_queue[1], 500);
	assert_int_equal(sent_by[0][0], 501);
	assert_int_equal(sent_by[0][1], 0);
	assert_int_equal(sent_by[1][1], 500);
	assert_int_equal(sent_by[1][0], 0);
	assert_int_equal(r.cpus_taking_part, 2);
	assert_int_equal(r.cpu_sent[0] + r.cpu_sent[1], 1001);
	assert_int_equal(pktgen_busy_cpu(), 0); /* CPU 1 stopped */
	/* the device gone from CPU 1 (the driver stopped it there): it sends nothing */
	per_cpu_ptr(&net_cpu_share, 1)->dev = NULL;
	memset(sent_by, 0, sizeof(sent_by));
	assert_int_not_equal(pktgen_run_cmd(&p, &r), 0);
	assert_int_equal(r.sent_queue[0], 501);
	assert_int_equal(r.sent_queue[1], 0);
	assert_int_equal(sent_by[1][1], 0);
	fake.nqueues = 0;
	fake_pair_owner[1] = 0;
	stub_idle_hook = NULL;
	stub_cpu_stop(1);
}

/* ---- `stats json` (kernel/stats.c with app/net_shell.c's "net") ---- */

static void fake_section_json(struct json_writer *w)
{
	json_put_u64(w, "answer", 42);
	json_open(w, "nested", '{');
	json_put_u64(w, "big", UINT64_MAX);
	json_close(w, '}');
}

static void fake_section_print(void)
{
}

static void stats_json_setup(void)
{
	static bool done;

	if (!done) {
		stats_init();
		net_shell_init(); /* registers "net", json only */
		stats_register("fake", fake_section_print, fake_section_json);
		done = true;
	}
	assert_non_null(stats_cmd);
}

/* Run `stats json [SECTION]`; parse the one line after the marker into @doc. */
static void run_stats_json(struct json_doc *doc, const char *section)
{
	char *argv[] = { "stats", "json", (char *)section, NULL };
	const char *obj;

	console_len = 0;
	console_out[0] = '\0';
	assert_int_equal(stats_cmd->run(section ? 3 : 2, argv), 0);
	assert_true(!strncmp(console_out, STATS_JSON_MARKER, strlen(STATS_JSON_MARKER)));
	obj = console_out + strlen(STATS_JSON_MARKER);
	/* one line: the object, then the only newline */
	assert_ptr_equal(strchr(console_out, '\n'), console_out + console_len - 1);
	assert_int_equal(json_parse(doc, obj, strlen(obj) - 1), 0);
}

static uint64_t json_u64_at(const struct json_doc *doc, const char *section, const char *key)
{
	int sec = json_find(doc, 0, section);
	uint64_t v;

	assert_true(sec > 0);
	assert_true(json_get_u64(doc, json_find(doc, sec, key), &v));
	return v;
}

static void test_stats_json(void **state)
{
	static struct json_doc doc;
	uint8_t f[ETH_FRAME_LEN];
	uint64_t echoed, udp_rx, tx;
	bool dev;
	int sec;

	stats_json_setup();
	run_stats_json(&doc, NULL);
	assert_true(json_find(&doc, 0, "net") > 0);
	assert_true(
		json_get_bool(&doc, json_find(&doc, json_find(&doc, 0, "net"), "device"), &dev));
	assert_true(dev);
	echoed = json_u64_at(&doc, "net", "udp_echoed");
	udp_rx = json_u64_at(&doc, "net", "udp_rx");
	tx = json_u64_at(&doc, "net", "tx_packets");
	assert_int_equal(echoed, udp_echo_count());
	assert_int_equal(udp_rx, proto_now().udp_rx);
	assert_int_equal(json_u64_at(&doc, "fake", "answer"), 42);
	sec = json_find(&doc, json_find(&doc, 0, "fake"), "nested");
	{
		uint64_t big;

		assert_true(json_get_u64(&doc, json_find(&doc, sec, "big"), &big));
		assert_true(big == UINT64_MAX);
	}

	/* three datagrams to the echo port: each counter moves by exactly 3 */
	for (int i = 0; i < 3; i++)
		net_rx(&fake, f, build_udp(f, 5555, 7, (const uint8_t *)"abc", 3));
	run_stats_json(&doc, NULL);
	assert_int_equal(json_u64_at(&doc, "net", "udp_echoed") - echoed, 3);
	assert_int_equal(json_u64_at(&doc, "net", "udp_rx") - udp_rx, 3);
	assert_int_equal(json_u64_at(&doc, "net", "tx_packets") - tx, 3);

	/* one section: only it */
	run_stats_json(&doc, "fake");
	assert_int_equal(doc.tok[0].count, 1);
	assert_int_equal(json_u64_at(&doc, "fake", "answer"), 42);
}

static void test_stats_json_errors(void **state)
{
	char small[80], *bad[] = { "stats", "json", "nosuch", NULL };
	char *extra[] = { "stats", "json", "net", "more", NULL };

	stats_json_setup();
	/* too small a buffer: an error, never a cut object */
	assert_int_equal(stats_json(small, sizeof(small), NULL), -1);
	assert_true(stats_json(small, sizeof(small), "fake") > 0);
	console_len = 0;
	assert_int_not_equal(stats_cmd->run(3, bad), 0);
	assert_int_not_equal(stats_cmd->run(4, extra), 0);
	assert_int_equal(console_len, 0); /* nothing on the console but the error */
}

static void test_text_helpers(void **state)
{
	uint32_t ip;
	uint8_t mac[6];
	char buf[18];

	assert_int_equal(net_parse_ip("192.168.1.254", &ip), 0);
	assert_int_equal(ip, 0xc0a801fe);
	assert_string_equal(net_ip_str(ip, buf), "192.168.1.254");
	assert_int_not_equal(net_parse_ip("1.2.3", &ip), 0);
	assert_int_not_equal(net_parse_ip("1.2.3.256", &ip), 0);
	assert_int_not_equal(net_parse_ip("1.2.3.4.", &ip), 0);
	assert_int_not_equal(net_parse_ip("", &ip), 0);
	assert_int_equal(net_parse_mac("02:aB:00:10:ff:09", mac), 0);
	assert_string_equal(net_mac_str(mac, buf), "02:ab:00:10:ff:09");
	assert_int_not_equal(net_parse_mac("02:ab:00:10:ff", mac), 0);
	assert_int_not_equal(net_parse_mac("02:ab:00:10:ff:0g", mac), 0);
	assert_int_not_equal(net_parse_mac("02:ab:00:10:ff:090", mac), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_arp_request_answered, setup),
		cmocka_unit_test_setup(test_arp_for_someone_else_ignored, setup),
		cmocka_unit_test_setup(test_arp_malformed, setup),
		cmocka_unit_test_setup(test_arp_cache_replaces_oldest, setup),
		cmocka_unit_test_setup(test_icmp_echo_reply, setup),
		cmocka_unit_test_setup(test_icmp_malformed, setup),
		cmocka_unit_test_setup(test_udp_echo, setup),
		cmocka_unit_test_setup(test_udp_echo_port_config, setup),
		cmocka_unit_test_setup(test_udp_bind, setup),
		cmocka_unit_test_setup(test_udp_zero_checksum_accepted, setup),
		cmocka_unit_test_setup(test_udp_malformed, setup),
		cmocka_unit_test_setup(test_udp_shorter_than_ip_payload, setup),
		cmocka_unit_test_setup(test_ip_malformed, setup),
		cmocka_unit_test_setup(test_eth_filtering, setup),
		cmocka_unit_test_setup(test_padded_frame_accepted, setup),
		cmocka_unit_test_setup(test_no_device_drops, setup),
		cmocka_unit_test_setup(test_ring_full_counted, setup),
		cmocka_unit_test_setup(test_next_hop, setup),
		cmocka_unit_test_setup(test_pending_frame_keeps_loop_awake, setup),
		cmocka_unit_test_setup(test_arp_resolve_polls, setup),
		cmocka_unit_test_setup(test_ping_reply_matched, setup),
		cmocka_unit_test_setup(test_ping_reply_seen_on_another_cpu, setup),
		cmocka_unit_test_setup(test_pktgen_frame, setup),
		cmocka_unit_test_setup(test_pktgen_bursts_and_ring_full, setup),
		cmocka_unit_test_setup(test_pktgen_a_sender_per_cpu, setup),
		cmocka_unit_test_setup(test_text_helpers, setup),
		cmocka_unit_test_setup(test_stats_json, setup),
		cmocka_unit_test_setup(test_stats_json_errors, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
