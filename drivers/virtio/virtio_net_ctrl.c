// SPDX-License-Identifier: MIT
/*
 * virtio-net control commands (virtio 1.2, 5.1.6.5): every command is
 * `u8 class; u8 command; u8 data[]` the device reads, then `u8 ack` it
 * writes. Only the multiqueue command is used (5.1.6.5.5).
 */
#include <errno.h>

#include "drivers/virtio/virtio_net_ctrl.h"

int virtio_net_ctrl_mq_encode(uint8_t *out, uint32_t pairs)
{
	if (pairs < VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN || pairs > VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MAX)
		return -EINVAL;
	out[0] = VIRTIO_NET_CTRL_MQ;
	out[1] = VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET;
	/* struct virtio_net_ctrl_mq_pairs_set: le16 virtqueue_pairs */
	out[2] = (uint8_t)pairs;
	out[3] = (uint8_t)(pairs >> 8);
	return VIRTIO_NET_CTRL_MQ_LEN;
}

int virtio_net_ctrl_ack(uint32_t used_len, uint8_t ack)
{
	/* a device that wrote nothing left our initial byte: no answer */
	if (used_len < 1)
		return -EPROTO;
	if (ack == VIRTIO_NET_OK)
		return 0;
	return ack == VIRTIO_NET_ERR ? -EIO : -EPROTO;
}
