/* SPDX-License-Identifier: MIT */
/*
 * virtio-net (virtio 1.2, 5.1). The driver registers with the virtio
 * transport (virtio_net_init(), declared in virtio_pci.h) and with net/ as
 * a struct net_dev; nothing else calls into it.
 */
#ifndef DRIVERS_VIRTIO_VIRTIO_NET_H
#define DRIVERS_VIRTIO_VIRTIO_NET_H

/*
 * 5.1.6 struct virtio_net_hdr: flags, gso_type (u8 each), hdr_len,
 * gso_size, csum_start, csum_offset, num_buffers (le16 each). With
 * VERSION_1 it is always 12 bytes, num_buffers included.
 */
#define VIRTIO_NET_HDR_LEN 12

#endif
