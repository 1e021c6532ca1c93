/* SPDX-License-Identifier: MIT */
/*
 * virtio-net's control virtqueue commands (virtio 1.2, 5.1.6.5): how a
 * command is laid out for the device and how its one-byte ack is read.
 * Pure functions, so the unit tests check them without a device.
 */
#ifndef DRIVERS_VIRTIO_VIRTIO_NET_CTRL_H
#define DRIVERS_VIRTIO_VIRTIO_NET_CTRL_H

#include <stdint.h>

/* 5.1.6.5 */
#define VIRTIO_NET_OK 0
#define VIRTIO_NET_ERR 1
/* 5.1.6.5.5 Automatic receive steering in multiqueue mode */
#define VIRTIO_NET_CTRL_MQ 4
#define VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET 0
#define VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN 1
#define VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MAX 0x8000

/* The driver-readable part of VQ_PAIRS_SET: class, command, le16 pairs. */
#define VIRTIO_NET_CTRL_MQ_LEN 4

/*
 * VQ_PAIRS_SET for @pairs into @out (VIRTIO_NET_CTRL_MQ_LEN bytes).
 * Returns the bytes written, or -EINVAL for a count outside 5.1.6.5.5's
 * MIN..MAX.
 */
int virtio_net_ctrl_mq_encode(uint8_t *out, uint32_t pairs);

/*
 * The device's answer: @used_len is what it says it wrote into the
 * device-writable part (the ack byte, 1 byte), @ack the byte. 0 for
 * VIRTIO_NET_OK; -EIO for VIRTIO_NET_ERR; -EPROTO for anything else (no
 * byte written, or a value 5.1.6.5 does not define).
 */
int virtio_net_ctrl_ack(uint32_t used_len, uint8_t ack);

#endif
