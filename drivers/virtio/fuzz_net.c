// SPDX-License-Identifier: MIT
/*
 * The fuzzer's virtio-net steps (virtio 1.2 5.1.6.2): a virtio-net header
 * and a frame in one TX descriptor, every header field in turn, frames
 * of 0 bytes to 64 KiB + 1 KiB and of several kinds; and virtio-net's
 * TX queue for the ring steps (fuzz_ring.c), whose fixed layout takes
 * one descriptor per buffer (a chain of more goes through an indirect
 * table).
 *
 * ringside negotiates no offload, so by 5.1.6.2.1 every header field is 0
 * on TX: any flag, GSO type, length or offset is a lie, and num_buffers
 * other than 0 is one too. A well-formed step has an all-zero header and
 * a frame of an Ethernet header up to 1514 bytes; the device may drop
 * the rest, but must go on.
 *
 *   nh  flags bits 0-2, gso_type 3-5, hdr_len 6-8, gso_size 9-11,
 *       csum_start 12-14, csum_offset 15-17, num_buffers 18-20; the
 *       frame's length bits 21-24 and kind 25-27 (TCP, UDP, IPv6, ARP,
 *       an IP length or header length that lies, a VLAN tag, random
 *       bytes); 1, 2, 8 or 32 of them (bits 28-29)
 */
#include <errno.h>
#include <string.h>

#include "drivers/virtio/fuzz.h"
#include "drivers/virtio/hostile.h"
#include "drivers/virtio/virtio_net.h"
#include "net/net.h"

#define LONG_FRAME HOSTILE_NET_LONG

/* 5.1.6 */
#define HDR_F_NEEDS_CSUM 1
#define HDR_F_DATA_VALID 2
#define HDR_F_RSC_INFO 4
#define GSO_TCPV4 1
#define GSO_UDP 3
#define GSO_TCPV6 4
#define GSO_UDP_L4 5
#define GSO_ECN 0x80

static void put16_be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A frame of @len bytes of kind @kind (nh's bits 25-27) at @f. */
static void build_frame(uint8_t *f, uint32_t len, unsigned int kind, uint64_t w)
{
	uint8_t small[64];
	uint8_t *p = len >= sizeof(small) ? f : small;
	uint32_t l = len >= sizeof(small) ? len : sizeof(small);

	hostile_net_frame(p, l, (uint16_t)(l - ETH_HLEN));
	switch (kind) {
	case 1:
		p[23] = 17; /* UDP to port 9 */
		break;
	case 2:
		put16_be(p + 12, 0x86dd);
		p[14] = 0x60; /* IPv6: payload length, next header TCP, hop limit */
		put16_be(p + 18, (uint16_t)(l - ETH_HLEN - 40));
		p[20] = 6;
		p[21] = 64;
		memset(p + 38, 0xff, 16); /* to ff..ff */
		break;
	case 3:
		put16_be(p + 12, 0x0806); /* an ARP request of nobody */
		put16_be(p + 14, 1);
		put16_be(p + 16, 0x0800);
		p[18] = 6, p[19] = 4;
		put16_be(p + 20, 1);
		break;
	case 4:
		put16_be(p + 16, 0xffff); /* IP total length past the frame */
		break;
	case 5:
		p[14] = (uint8_t)(0x40 | fuzz_field(w, 36, 4)); /* IHL 0..15 */
		break;
	case 6:
		put16_be(p + 12, 0x8100); /* a VLAN tag before the IPv4 ethertype */
		put16_be(p + 14, (uint16_t)fuzz_field(w, 36, 12));
		put16_be(p + 16, 0x0800);
		break;
	case 7:
		for (uint32_t i = 2 * ETH_ALEN; i < l; i++)
			p[i] = (uint8_t)((w >> (i % 56)) + i);
		break;
	}
	if (p != f)
		memcpy(f, small, len);
}

static const uint32_t lengths[16] = {
	60,
	0,
	1,
	6,
	14,
	59,
	61,
	1514,
	1515,
	1518,
	9000,
	16384,
	65535 - VIRTIO_NET_HDR_LEN,
	65536,
	LONG_FRAME,
	65535,
};

static bool length_well_formed(unsigned int i)
{
	return lengths[i] >= ETH_HLEN && lengths[i] <= 1514;
}

/* A 3-bit field of @w at @shift: entry 0 and those past @n are 0. */
static uint16_t pick(uint64_t w, unsigned int shift, const uint32_t *choices, unsigned int n)
{
	unsigned int i = fuzz_field(w, shift, 3);

	return (uint16_t)(i && i <= n ? choices[i - 1] : 0);
}

static int nh_step(uint64_t w, struct fuzz_outcome *o)
{
	static const unsigned int bursts[] = { 1, 2, 8, 32 };
	static const uint8_t undefined_gso[] = { 2, 0x7f, 0xfe, GSO_ECN };
	unsigned int li = fuzz_field(w, 21, 4), kind = fuzz_field(w, 25, 3), i;
	uint32_t flen = lengths[li], total;
	const uint32_t flags[] = { HDR_F_NEEDS_CSUM, HDR_F_DATA_VALID, HDR_F_RSC_INFO, 0xf8, 0xff };
	const uint32_t gsos[] = { GSO_TCPV4,	       GSO_UDP,
				  GSO_TCPV6,	       GSO_UDP_L4,
				  GSO_ECN | GSO_TCPV4, undefined_gso[fuzz_field(w, 32, 2)] };
	const uint32_t hdr_lens[] = { 54, flen, flen + 1, 0xffff, 1 };
	const uint32_t gso_sizes[] = { 1, 1400, 0xffff, 8 };
	const uint32_t starts[] = { 34, flen ? flen - 1 : 0, 0xfff0, flen };
	const uint32_t offsets[] = { 16, 6, 0xfffe, flen };
	const uint32_t nbufs[] = { 1, 2, 0xffff };
	uint8_t *b;
	int ret = 0;

	b = hostile_net_buf(flen);
	if (!b)
		return -ENOMEM;
	hostile_net_hdr(b, (uint8_t)pick(w, 0, flags, 5), (uint8_t)pick(w, 3, gsos, 6),
			pick(w, 6, hdr_lens, 5), pick(w, 9, gso_sizes, 4), pick(w, 12, starts, 4),
			pick(w, 15, offsets, 4), pick(w, 18, nbufs, 3));
	build_frame(b + VIRTIO_NET_HDR_LEN, flen, kind, w);
	/* a length shorter than the header itself cuts the header (5.1.6.2: it comes whole) */
	total = flen < VIRTIO_NET_HDR_LEN && li == 3 ? flen : VIRTIO_NET_HDR_LEN + flen;
	o->well_formed = length_well_formed(li);
	for (i = 0; i < VIRTIO_NET_HDR_LEN; i++)
		o->well_formed &= !b[i];
	for (i = 0; i < bursts[fuzz_field(w, 28, 2)] && !ret; i++)
		ret = virtio_net_tx_raw(b, total);
	return i > 1 ? 0 : ret;
}

/* ---- virtio-net's TX queue for the ring steps ---- */

static int net_content(struct fuzz_buf *b)
{
	b->data = hostile_net_buf(60);
	if (!b->data)
		return -ENOMEM;
	b->token = b->data;
	hostile_net_hdr(b->data, 0, 0, 0, 0, 0, 0, 0);
	hostile_net_frame(b->data + VIRTIO_NET_HDR_LEN, 60, 60 - ETH_HLEN);
	b->len = VIRTIO_NET_HDR_LEN + 60;
	b->cap = HOSTILE_NET_SMALL;
	return 0;
}

static void net_drop(struct fuzz_buf *b)
{
	(void)b; /* the pool's: written again when its turn comes */
}

static int net_forge(struct fuzz_buf *b, const struct virtq_desc *tmpl, unsigned int n)
{
	(void)b;
	return n == 1 ? virtio_net_tx_forged(tmpl) : -EOPNOTSUPP;
}

static int net_honest(void)
{
	struct fuzz_buf b;
	int ret = net_content(&b);

	return ret ? ret : virtio_net_tx_raw(b.data, b.len);
}

void fuzz_net_probe(void)
{
	struct virtq *vq = virtio_net_txq();

	if (vq && !net_honest())
		virtq_kick(vq);
}

static const struct fuzz_dev net_dev = {
	.txq = virtio_net_txq,
	.content = net_content,
	.forge = net_forge,
	.drop = net_drop,
	.honest = net_honest,
	.max_chain = 1,
};

int fuzz_net_step(const struct fuzz_step *s, struct fuzz_outcome *o)
{
	if (!virtio_net_txq())
		return -ENODEV;
	if (s->kind == FK_NET_HDR)
		return nh_step(s->word, o);
	return fuzz_ring_step(&net_dev, s, o);
}
