// SPDX-License-Identifier: MIT
/*
 * ICMP (RFC 792): answer echo requests to our address and recognise echo
 * replies for the `ping` command. Everything else is counted and dropped.
 */
#include <errno.h>
#include <string.h>

#include "kernel/time.h"
#include "net/proto.h"

#define ICMP_ECHO_REPLY 0
#define ICMP_ECHO_REQUEST 8

static struct icmp_wait *waiter;

void icmp_set_wait(struct icmp_wait *w)
{
	waiter = w;
}

static void echo_reply(const uint8_t *frame, uint32_t src, const uint8_t *pkt, uint32_t len)
{
	uint8_t out[ETH_FRAME_LEN];
	uint8_t *icmp = out + ETH_HLEN + IP_HLEN;

	if (len > sizeof(out) - ETH_HLEN - IP_HLEN) {
		net_stat_inc(tx_dropped);
		return;
	}
	/* Same id, sequence and data; only the type and checksum change. */
	memcpy(icmp, pkt, len);
	icmp[0] = ICMP_ECHO_REPLY;
	icmp[1] = 0;
	put_be16(icmp + 2, 0);
	put_be16(icmp + 2, csum_fold(csum_add(0, icmp, len)));
	/* Answer the MAC the request came from: no ARP round trip needed. */
	if (!ipv4_send(out, frame + ETH_OFF_SRC, src, IPPROTO_ICMP, len))
		net_stat_inc(icmp_echo_replies_sent);
}

void icmp_input(const uint8_t *frame, uint32_t src, uint32_t dst, const uint8_t *pkt, uint32_t len)
{
	net_stat_inc(icmp_rx);
	if (len < ICMP_HLEN) {
		net_stat_inc(icmp_short);
		return;
	}
	if (csum_fold(csum_add(0, pkt, len))) {
		net_stat_inc(icmp_bad_csum);
		return;
	}
	switch (pkt[0]) {
	case ICMP_ECHO_REQUEST:
		/* Only unicast to us: broadcast pings are an amplifier. */
		if (dst == net_ip() && pkt[1] == 0)
			echo_reply(frame, src, pkt, len);
		else
			net_stat_inc(icmp_unknown_type);
		break;
	case ICMP_ECHO_REPLY:
		if (waiter && !waiter->answered && src == waiter->peer &&
		    get_be16(pkt + 4) == waiter->id && get_be16(pkt + 6) == waiter->seq) {
			waiter->answered = true;
			waiter->answered_ns = now_ns();
			waiter->len = len;
		}
		break;
	default:
		net_stat_inc(icmp_unknown_type);
	}
}

int icmp_send_echo(uint32_t dst, uint16_t id, uint16_t seq, const void *data, uint32_t len)
{
	uint8_t frame[ETH_FRAME_LEN];
	uint8_t *icmp = frame + ETH_HLEN + IP_HLEN;
	uint8_t mac[ETH_ALEN];
	uint32_t hop = ipv4_next_hop(dst);

	if (len > ETH_DATA_LEN - IP_HLEN - ICMP_HLEN)
		return -EMSGSIZE;
	if (!hop) {
		net_stat_inc(tx_no_route);
		return -ENETUNREACH;
	}
	if (!arp_lookup(hop, mac)) {
		net_stat_inc(tx_no_arp);
		return -EHOSTUNREACH;
	}
	icmp[0] = ICMP_ECHO_REQUEST;
	icmp[1] = 0;
	put_be16(icmp + 2, 0);
	put_be16(icmp + 4, id);
	put_be16(icmp + 6, seq);
	memcpy(icmp + ICMP_HLEN, data, len);
	put_be16(icmp + 2, csum_fold(csum_add(0, icmp, ICMP_HLEN + len)));
	return ipv4_send(frame, mac, dst, IPPROTO_ICMP, ICMP_HLEN + len) ? -ENOBUFS : 0;
}
