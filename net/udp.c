// SPDX-License-Identifier: MIT
/*
 * UDP (RFC 768): checks, then hands each datagram to the service bound to
 * its port (a small table: the appliance runs a handful of services).
 */
#include <errno.h>
#include <string.h>

#include "net/proto.h"

#define UDP_MAX_BINDINGS 8

struct udp_binding {
	uint16_t port; /* 0: free */
	udp_rx_fn rx;
};

static struct udp_binding bindings[UDP_MAX_BINDINGS];

int udp_bind(uint16_t port, udp_rx_fn rx)
{
	struct udp_binding *free_slot = NULL;

	if (!port || !rx)
		return -EINVAL;
	for (int i = 0; i < UDP_MAX_BINDINGS; i++) {
		if (bindings[i].port == port)
			return -EADDRINUSE;
		if (!bindings[i].port && !free_slot)
			free_slot = &bindings[i];
	}
	if (!free_slot)
		return -ENOSPC;
	free_slot->port = port;
	free_slot->rx = rx;
	return 0;
}

void udp_unbind(uint16_t port)
{
	for (int i = 0; i < UDP_MAX_BINDINGS; i++)
		if (port && bindings[i].port == port)
			bindings[i].port = 0;
}

static udp_rx_fn bound(uint16_t port)
{
	for (int i = 0; i < UDP_MAX_BINDINGS; i++)
		if (port && bindings[i].port == port)
			return bindings[i].rx;
	return NULL;
}

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

void udp_input(const uint8_t *frame, uint32_t src, uint32_t dst, const uint8_t *pkt, uint32_t len)
{
	uint16_t ulen, sum;
	udp_rx_fn rx;

	net_stat_inc(udp_rx);
	if (len < UDP_HLEN) {
		net_stat_inc(udp_short);
		return;
	}
	ulen = get_be16(pkt + 4);
	if (ulen < UDP_HLEN || ulen > len) {
		net_stat_inc(udp_bad_len);
		return;
	}
	len = ulen; /* the IP datagram may be longer than the UDP one */
	sum = get_be16(pkt + 6);
	if (sum && csum_fold(csum_add(csum_pseudo(src, dst, IPPROTO_UDP, ulen), pkt, ulen))) {
		net_stat_inc(udp_bad_csum);
		return;
	}
	rx = bound(get_be16(pkt + 2));
	if (!rx || dst != net_ip()) {
		net_stat_inc(udp_no_port);
		return;
	}
	rx(frame, src, pkt, len);
}
