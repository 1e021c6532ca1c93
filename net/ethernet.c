// SPDX-License-Identifier: MIT
/*
 * Ethernet II (no VLANs, no 802.3 length frames): check the destination,
 * dispatch by EtherType; and the send side that fills the header and pads
 * short frames to the 60-byte minimum.
 */
#include <string.h>

#include "net/proto.h"

const uint8_t eth_broadcast[ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* Shared: written on CPU 0 (netsink), read by every CPU's receive path. */
static net_rx_tap_fn *rx_tap;

void net_set_rx_tap(net_rx_tap_fn *tap)
{
	__atomic_store_n(&rx_tap, tap, __ATOMIC_RELEASE);
}

void net_rx(struct net_dev *dev, const void *data, uint32_t len)
{
	const uint8_t *frame = data;
	net_rx_tap_fn *tap = __atomic_load_n(&rx_tap, __ATOMIC_ACQUIRE);

	if (tap) {
		tap(dev, data, len);
		return;
	}
	net_stat_inc(eth_rx);
	if (len < ETH_HLEN) {
		net_stat_inc(eth_short);
		return;
	}
	/* No promiscuous mode: ours or broadcast only (multicast unused). */
	if (memcmp(frame + ETH_OFF_DST, dev->mac, ETH_ALEN) &&
	    memcmp(frame + ETH_OFF_DST, eth_broadcast, ETH_ALEN)) {
		net_stat_inc(eth_not_for_us);
		return;
	}
	switch (get_be16(frame + ETH_OFF_TYPE)) {
	case ETH_P_ARP:
		arp_input(dev, frame + ETH_HLEN, len - ETH_HLEN);
		break;
	case ETH_P_IP:
		ipv4_input(dev, frame, frame + ETH_HLEN, len - ETH_HLEN);
		break;
	default:
		net_stat_inc(eth_unknown_type);
	}
}

void eth_build_header(uint8_t *frame, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memcpy(frame + ETH_OFF_DST, dst, ETH_ALEN);
	memcpy(frame + ETH_OFF_SRC, src, ETH_ALEN);
	put_be16(frame + ETH_OFF_TYPE, type);
}

/* @frame has room for ETH_ZLEN bytes at least (callers use ETH_FRAME_LEN). */
int eth_send(uint8_t *frame, const uint8_t *dst, uint16_t type, uint32_t payload_len)
{
	struct net_dev *dev = net_device();
	struct net_frame f = { .data = frame, .len = ETH_HLEN + payload_len };

	if (!dev || f.len > ETH_FRAME_LEN) {
		net_stat_inc(tx_dropped);
		return -1;
	}
	eth_build_header(frame, dst, dev->mac, type);
	if (f.len < ETH_ZLEN) {
		memset(frame + f.len, 0, ETH_ZLEN - f.len);
		f.len = ETH_ZLEN;
	}
	return net_xmit(&f, 1) == 1 ? 0 : -1;
}
