// SPDX-License-Identifier: MIT
/*
 * IPv4 (RFC 791), the small part a benchmark peer needs: validate the
 * header (version, length, checksum), take datagrams for our address (or
 * broadcast), no fragments and no forwarding, and dispatch to ICMP or UDP.
 */
#include <string.h>

#include "net/proto.h"

#define IP_FLAG_MF 0x2000
#define IP_FRAG_OFF_MASK 0x1fff

void ipv4_input(struct net_dev *dev, const uint8_t *frame, const uint8_t *pkt, uint32_t len)
{
	uint32_t hlen, total, src, dst, bcast;

	net_stat_inc(ip_rx);
	if (len < IP_HLEN) {
		net_stat_inc(ip_short);
		return;
	}
	if (pkt[0] >> 4 != 4) {
		net_stat_inc(ip_bad_version);
		return;
	}
	hlen = (pkt[0] & 15) * 4u;
	if (hlen < IP_HLEN || hlen > len) {
		net_stat_inc(ip_bad_hlen);
		return;
	}
	/* Frames may carry padding after the datagram, never less than it. */
	total = get_be16(pkt + 2);
	if (total < hlen || total > len) {
		net_stat_inc(ip_bad_len);
		return;
	}
	if (csum_fold(csum_add(0, pkt, hlen))) {
		net_stat_inc(ip_bad_csum);
		return;
	}
	if (get_be16(pkt + 6) & (IP_FLAG_MF | IP_FRAG_OFF_MASK)) {
		net_stat_inc(ip_fragment); /* no reassembly: nothing here sends them */
		return;
	}
	src = get_be32(pkt + 12);
	dst = get_be32(pkt + 16);
	bcast = net_ip() | ~net_netmask();
	if (dst != net_ip() && dst != 0xffffffffu && dst != bcast) {
		net_stat_inc(ip_not_for_us);
		return;
	}
	switch (pkt[9]) {
	case IPPROTO_ICMP:
		icmp_input(frame, src, dst, pkt + hlen, total - hlen);
		break;
	case IPPROTO_UDP:
		udp_input(frame, src, dst, pkt + hlen, total - hlen);
		break;
	default:
		net_stat_inc(ip_unknown_proto);
	}
}

uint32_t ipv4_next_hop(uint32_t dst)
{
	uint32_t mask = net_netmask();

	if ((dst & mask) == (net_ip() & mask) || dst == 0xffffffffu)
		return dst;
	return net_gateway();
}

void ipv4_build_header(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t proto, uint32_t payload_len,
		       uint16_t id)
{
	ip[0] = 0x45;
	ip[1] = 0;
	put_be16(ip + 2, (uint16_t)(IP_HLEN + payload_len));
	put_be16(ip + 4, id);
	put_be16(ip + 6, 0x4000); /* DF: we never fragment */
	ip[8] = IP_DEFAULT_TTL;
	ip[9] = proto;
	put_be16(ip + 10, 0);
	put_be32(ip + 12, src);
	put_be32(ip + 16, dst);
	put_be16(ip + 10, csum_fold(csum_add(0, ip, IP_HLEN)));
}

/*
 * Each CPU numbers what it sends itself. With DF set the identification
 * names no fragments (RFC 6864: atomic datagrams), so numbers two CPUs
 * share do no harm.
 */
static DEFINE_PER_CPU(uint16_t, ip_id);

int ipv4_send(uint8_t *frame, const uint8_t *dst_mac, uint32_t dst, uint8_t proto,
	      uint32_t payload_len)
{
	uint16_t *id = this_cpu_ptr(&ip_id);

	if (payload_len > ETH_DATA_LEN - IP_HLEN) {
		net_stat_inc(tx_dropped);
		return -1;
	}
	ipv4_build_header(frame + ETH_HLEN, net_ip(), dst, proto, payload_len, (*id)++);
	return eth_send(frame, dst_mac, ETH_P_IP, IP_HLEN + payload_len);
}
