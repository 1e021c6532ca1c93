// SPDX-License-Identifier: MIT
/*
 * The TX-reclaim switch (virtio-net's "free old xmit only in NAPI"), one
 * for every virtio driver with a TX queue
 * (virtio-net, virtio-vsock): reclaim sent buffers in the poll loop only,
 * or also on send.
 */
#include "drivers/virtio/virtio_pci.h"
#include "kernel/config.h"

CONFIG_KEY(cfg_txpoll) = {
	.name = "txpoll",
	.help = "reclaim sent TX buffers only in the poll loop (1) or also on send (0)",
	.type = CONFIG_BOOL,
	.def = 1,
};
