// SPDX-License-Identifier: MIT
/*
 * UDP (RFC 768) and the echo service (RFC 862) on udp_echo_port: every
 * datagram to that port goes back to its sender byte for byte.
 */
#include <string.h>

#include "kernel/config.h"
#include "net/proto.h"

CONFIG_KEY(cfg_udp_echo_port) = {
	.name = "udp_echo_port",
	.help = "net: UDP echo service port (0: off)",
	.type = CONFIG_UINT,
	.max = 65535,
	.def = 7,
};

void udp_build_header(uint8_t *udp, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
		      uint32_t payload_len)
{
	uint16_t len = (uint16_t)(UDP_HLEN + payload_len);
	uint16_t sum;

	put_be16(udp, sport);
	put_be16(udp + 2, dport);
	put_be16(udp + 4, len);
	put_be16(udp + 6, 0);
	sum = csum_fold(csum_add(csum_pseudo(src, dst, IPPROTO_UDP, len), udp, len));
	/* 0 means "no checksum"; a computed 0 is sent as all ones (RFC 768). */
	put_be16(udp + 6, sum ? sum : 0xffff);
}

static void udp_echo(const uint8_t *frame, uint32_t src, const uint8_t *pkt, uint32_t len)
{
	uint8_t out[ETH_FRAME_LEN];
	uint8_t *udp = out + ETH_HLEN + IP_HLEN;
	uint32_t payload = len - UDP_HLEN;

	if (len > sizeof(out) - ETH_HLEN - IP_HLEN) {
		net_stats.tx_dropped++;
		return;
	}
	memcpy(udp + UDP_HLEN, pkt + UDP_HLEN, payload);
	udp_build_header(udp, net_ip(), src, get_be16(pkt + 2), get_be16(pkt), payload);
	if (!ipv4_send(out, frame + ETH_OFF_SRC, src, IPPROTO_UDP, len))
		net_stats.udp_echoed++;
}

void udp_input(const uint8_t *frame, uint32_t src, uint32_t dst, const uint8_t *pkt, uint32_t len)
{
	uint16_t ulen, sum, port = (uint16_t)config_get(&cfg_udp_echo_port);

	net_stats.udp_rx++;
	if (len < UDP_HLEN) {
		net_stats.udp_short++;
		return;
	}
	ulen = get_be16(pkt + 4);
	if (ulen < UDP_HLEN || ulen > len) {
		net_stats.udp_bad_len++;
		return;
	}
	len = ulen; /* the IP datagram may be longer than the UDP one */
	sum = get_be16(pkt + 6);
	if (sum && csum_fold(csum_add(csum_pseudo(src, dst, IPPROTO_UDP, ulen), pkt, ulen))) {
		net_stats.udp_bad_csum++;
		return;
	}
	if (!port || get_be16(pkt + 2) != port || dst != net_ip()) {
		net_stats.udp_no_port++;
		return;
	}
	udp_echo(frame, src, pkt, len);
}
