// SPDX-License-Identifier: MIT
/*
 * ICMP (RFC 792): answer echo requests to our address and recognise echo
 * replies for the `ping` command. Everything else is counted and dropped.
 */
#include <errno.h>
#include <string.h>

#include "kernel/percpu.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"
#include "net/proto.h"

#define ICMP_ECHO_REPLY 0
#define ICMP_ECHO_REQUEST 8

/*
 * CPU 0's alone: the wait of the `ping` command, which runs there. An
 * echo reply may come in on any queue pair, so on any CPU; another CPU
 * sends what it saw to CPU 0 as a message (kernel/xcpu.h), and only
 * CPU 0 ever reads or writes the wait.
 */
static struct icmp_wait *waiter;

void icmp_set_wait(struct icmp_wait *w)
{
	waiter = w;
}

/* On CPU 0: an echo reply from @src (id, seq, ICMP bytes) seen at @at_ns. */
static void echo_seen(uint32_t src, uint16_t id, uint16_t seq, uint32_t len, uint64_t at_ns)
{
	if (waiter && !waiter->answered && src == waiter->peer && id == waiter->id &&
	    seq == waiter->seq) {
		waiter->answered = true;
		waiter->answered_ns = at_ns;
		waiter->len = len;
	}
}

static void echo_seen_elsewhere(const struct spsc_msg *m, unsigned int cpu)
{
	echo_seen((uint32_t)m->arg[0], (uint16_t)m->arg[1], (uint16_t)m->arg[2],
		  (uint32_t)m->arg[3], m->arg[4]);
}

static void echo_reply_seen(uint32_t src, const uint8_t *pkt, uint32_t len)
{
	unsigned int cpu = percpu_read(index);
	struct spsc_msg m = { .fn = echo_seen_elsewhere,
			      .arg = { src, get_be16(pkt + 4), get_be16(pkt + 6), len, now_ns() } };

	if (!cpu)
		echo_seen(src, get_be16(pkt + 4), get_be16(pkt + 6), len, m.arg[4]);
	else
		xcpu_reply(cpu, &m); /* dropped (and counted there) if its ring is full */
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
		echo_reply_seen(src, pkt, len);
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
