/* SPDX-License-Identifier: MIT */
/*
 * Inside net/: the protocol entry points and wire helpers. Headers are read
 * and written byte by byte at fixed offsets (no packed structs), so frames
 * at any alignment are fine and byte order is explicit.
 */
#ifndef NET_PROTO_H
#define NET_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/net.h"

#define ETH_P_IP 0x0800
#define ETH_P_ARP 0x0806

#define IP_HLEN 20
#define IPPROTO_ICMP 1
#define IPPROTO_UDP 17
#define UDP_HLEN 8
#define ICMP_HLEN 8
#define IP_DEFAULT_TTL 64

#define ETH_OFF_DST 0
#define ETH_OFF_SRC 6
#define ETH_OFF_TYPE 12

static inline uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = (uint8_t)v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

extern const uint8_t eth_broadcast[ETH_ALEN];

/* RFC 1071 one's complement sum; fold and invert with csum_fold(). */
uint32_t csum_add(uint32_t sum, const void *data, size_t len);
uint16_t csum_fold(uint32_t sum);
/* The UDP/ICMP-style pseudo header sum for IPv4 (RFC 768). */
uint32_t csum_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len);

/* ethernet.c: fill the header of @frame (ETH_HLEN + @payload_len) and send. */
int eth_send(uint8_t *frame, const uint8_t *dst, uint16_t type, uint32_t payload_len);
void eth_build_header(uint8_t *frame, const uint8_t *dst, const uint8_t *src, uint16_t type);

/* arp.c */
void arp_input(struct net_dev *dev, const uint8_t *pkt, uint32_t len);
bool arp_lookup(uint32_t ip, uint8_t *mac);
void arp_update(uint32_t ip, const uint8_t *mac);
int arp_send_request(uint32_t ip);
/* Look up, else ask and poll the device until answered or @timeout_ns. */
int arp_resolve(uint32_t ip, uint8_t *mac, uint64_t timeout_ns);
void arp_flush(void);
void arp_show(void);

/* ipv4.c */
void ipv4_input(struct net_dev *dev, const uint8_t *frame, const uint8_t *pkt, uint32_t len);
/* The neighbour to send to for @dst: itself on our network, else the gateway; 0: none. */
uint32_t ipv4_next_hop(uint32_t dst);
/*
 * Fill the IPv4 header at @frame + ETH_HLEN for @payload_len bytes after it
 * and send the frame to @dst_mac.
 */
int ipv4_send(uint8_t *frame, const uint8_t *dst_mac, uint32_t dst, uint8_t proto,
	      uint32_t payload_len);
void ipv4_build_header(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t proto, uint32_t payload_len,
		       uint16_t id);

/* icmp.c */
void icmp_input(const uint8_t *frame, uint32_t src, uint32_t dst, const uint8_t *pkt, uint32_t len);
/* Send one echo request; 0, or a negative errno. */
int icmp_send_echo(uint32_t dst, uint16_t id, uint16_t seq, const void *data, uint32_t len);
/* Set by icmp_input when an echo reply for (@id, @seq) arrives. */
struct icmp_wait {
	uint32_t peer;
	uint16_t id, seq;
	bool answered;
	uint64_t answered_ns;
	uint32_t len;
};
void icmp_set_wait(struct icmp_wait *w);

/* udp.c */
/*
 * A bound port's receiver: @frame the whole Ethernet frame (for the
 * sender's MAC), @src the sender's address, @udp the UDP header and
 * @len bytes of header and payload, length and checksum already checked.
 */
typedef void (*udp_rx_fn)(const uint8_t *frame, uint32_t src, const uint8_t *udp, uint32_t len);
int udp_bind(uint16_t port, udp_rx_fn rx); /* 0, -EADDRINUSE, -ENOSPC, -EINVAL */
void udp_unbind(uint16_t port);
void udp_input(const uint8_t *frame, uint32_t src, uint32_t dst, const uint8_t *pkt, uint32_t len);
/* Fill the UDP header at @udp for @payload_len bytes after it, checksum included. */
void udp_build_header(uint8_t *udp, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
		      uint32_t payload_len);

#endif
