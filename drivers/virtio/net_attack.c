// SPDX-License-Identifier: MIT
/*
 * The hostile driver's virtio-net modes: TX buffers whose virtio-net
 * header or length a driver must never write (virtio 1.2 §5.1.6.2,
 * "Packet Transmission", and its driver requirements §5.1.6.2.1), put
 * into the live TX queue by the virtio-net driver (virtio_net_tx_raw)
 * while normal traffic goes on. The `attack` command (vsock_attack.c)
 * runs them, counts them and watches the device answer or fall silent.
 *
 * ringside negotiates no offload (no CSUM, no HOST_TSO*, no HOST_UFO), so
 * by §5.1.6.2.1 every header it sends must be all zeroes but num_buffers:
 * any flag or gso_type here is a violation, and the lengths and offsets
 * around it lie on top.
 *
 * Frames are broadcast IPv4/TCP from our MAC to nobody, so a peer that
 * gets one has nothing to answer. Each goes into a buffer of its own from
 * a small pool used round-robin, and the long ones into one shared
 * buffer; a buffer is written again only after the pool went round, by
 * then the device has read it or fell silent (the guest then resets it).
 */
#include <errno.h>
#include <string.h>

#include "drivers/virtio/hostile.h"
#include "drivers/virtio/net_attack.h"
#include "drivers/virtio/virtio_net.h"
#include "net/net.h"

/* 5.1.6 flags and gso_type */
#define HDR_F_NEEDS_CSUM 1
#define HDR_F_DATA_VALID 2 /* device to driver only */
#define HDR_F_RSC_INFO 4 /* device to driver only */
#define GSO_TCPV4 1
#define GSO_ECN 0x80

#define SMALL_FRAME 60 /* ETH_ZLEN: the shortest honest frame */
#define LONG_FRAME HOSTILE_NET_LONG

static const uint8_t undefined_flags[] = { 0xf8, HDR_F_DATA_VALID | HDR_F_RSC_INFO, 0xff };
/* 5.1.6: 0 NONE, 1 TCPV4, 3 UDP, 4 TCPV6, 5 UDP_L4, 0x80 ECN; nothing else */
static const uint8_t undefined_gso[] = { 2, 0x7f, GSO_ECN, 0xfe };

#define PICK(a, n) ((a)[(n) % (sizeof(a) / sizeof((a)[0]))])

/* The header of a small frame for @lie; false for the long modes. */
static void small_hdr(uint8_t *h, enum net_lie lie, uint32_t nth)
{
	switch (lie) {
	case NET_HDR_FLAGS:
		hostile_net_hdr(h, PICK(undefined_flags, nth), 0, 0, 0, 0, 0, 0);
		break;
	case NET_CSUM_START:
		/* 5.1.6.2: csum_start + csum_offset + 2 lie within the frame; not here */
		if (nth % 2)
			hostile_net_hdr(h, HDR_F_NEEDS_CSUM, 0, 0, 0, SMALL_FRAME - 1, 6, 0);
		else
			hostile_net_hdr(h, HDR_F_NEEDS_CSUM, 0, 0, 0, 0xfff0, 0xfffe, 0);
		break;
	case NET_GSO_TYPE:
		hostile_net_hdr(h, 0, PICK(undefined_gso, nth), 54, 1400, 0, 0, 0);
		break;
	case NET_GSO:
		/* 5.1.6.2.1: GSO only as negotiated; hdr_len past the frame, mss 0 or 1 */
		hostile_net_hdr(h, 0, GSO_TCPV4, 0xffff, (uint16_t)(nth % 2), 0, 0, 0);
		break;
	default:
		hostile_net_hdr(h, 0, 0, 0, 0, 0, 0, 0);
		break;
	}
}

static int send_long(enum net_lie lie)
{
	uint8_t *long_buf = hostile_net_buf(LONG_FRAME);

	if (!long_buf)
		return -ENOMEM;
	if (lie == NET_GSO_LONG)
		hostile_net_hdr(long_buf, HDR_F_NEEDS_CSUM, GSO_TCPV4 | GSO_ECN, 0xffff, 1, 34, 16,
				0);
	else
		hostile_net_hdr(long_buf, 0, 0, 0, 0, 0, 0, 0);
	hostile_net_frame(long_buf + VIRTIO_NET_HDR_LEN, LONG_FRAME, 0xffff);
	return virtio_net_tx_raw(long_buf, VIRTIO_NET_HDR_LEN + LONG_FRAME);
}

int net_attack_send(enum net_lie lie, uint32_t nth)
{
	uint32_t len = VIRTIO_NET_HDR_LEN + SMALL_FRAME;
	uint8_t *b;

	if (!virtio_net_txq())
		return -ENODEV;
	if (lie == NET_LONG || lie == NET_GSO_LONG)
		return send_long(lie);
	b = hostile_net_buf(SMALL_FRAME);
	if (!b)
		return -ENOMEM;
	small_hdr(b, lie, nth);
	hostile_net_frame(b + VIRTIO_NET_HDR_LEN, SMALL_FRAME, SMALL_FRAME - ETH_HLEN);
	if (lie == NET_SHORT)
		len = 6; /* 5.1.6.2: the header comes first, whole */
	else if (lie == NET_HDR_ONLY)
		len = VIRTIO_NET_HDR_LEN;
	return virtio_net_tx_raw(b, len);
}
