// SPDX-License-Identifier: MIT
/*
 * The UDP echo service (RFC 862) on udp_echo_port: every datagram to that
 * port goes back to its sender byte for byte.
 */
#include <stdio.h>
#include <string.h>

#include "app/app.h"
#include "kernel/config.h"
#include "net/proto.h"

CONFIG_KEY(cfg_udp_echo_port) = {
	.name = "udp_echo_port",
	.help = "net: UDP echo service port (0: off)",
	.type = CONFIG_UINT,
	.max = 65535,
	.def = 7,
};

static uint16_t bound_port;

/* Each CPU counts the echoes its loop sent, in its own per-CPU copy. */
static DEFINE_PER_CPU(uint64_t, echoed);

static void udp_echo(const uint8_t *frame, uint32_t src, const uint8_t *pkt, uint32_t len)
{
	uint8_t out[ETH_FRAME_LEN];
	uint8_t *udp = out + ETH_HLEN + IP_HLEN;
	uint32_t payload = len - UDP_HLEN;

	if (len > sizeof(out) - ETH_HLEN - IP_HLEN) {
		net_stat_inc(tx_dropped);
		return;
	}
	memcpy(udp + UDP_HLEN, pkt + UDP_HLEN, payload);
	udp_build_header(udp, net_ip(), src, get_be16(pkt + 2), get_be16(pkt), payload);
	if (!ipv4_send(out, frame + ETH_OFF_SRC, src, IPPROTO_UDP, len))
		(*this_cpu_ptr(&echoed))++;
}

/* Follow the key: leave the old port, take the new one (0: off). */
static void port_changed(struct config_key *key)
{
	uint16_t port = (uint16_t)config_get(&cfg_udp_echo_port);

	udp_unbind(bound_port);
	bound_port = 0;
	if (port && !udp_bind(port, udp_echo))
		bound_port = port;
	else if (port)
		printf("udp: echo cannot bind port %u\n", port);
}

uint64_t udp_echo_count(void)
{
	uint64_t sum = 0;

	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++)
		sum += udp_echo_count_on(c);
	return sum;
}

uint64_t udp_echo_count_on(unsigned int cpu)
{
	return percpu_of(cpu) ? *per_cpu_ptr(&echoed, cpu) : 0;
}

void udp_echo_reset(void)
{
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++)
		if (percpu_of(c))
			*per_cpu_ptr(&echoed, c) = 0;
}

void udp_echo_init(void)
{
	static struct config_hook hook = { .fn = port_changed };

	config_on_change(&cfg_udp_echo_port, &hook);
	port_changed(&cfg_udp_echo_port);
}
