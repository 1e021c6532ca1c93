/* SPDX-License-Identifier: MIT */
/*
 * The virtio-pci common configuration's layout (virtio 1.2, 4.1.4.3) and
 * the device status bits (2.1): what the transport (virtio_pci.c) drives
 * and the fuzzer's transport steps (fuzz_transport.c) write out of order.
 */
#ifndef DRIVERS_VIRTIO_VIRTIO_PCI_REGS_H
#define DRIVERS_VIRTIO_VIRTIO_PCI_REGS_H

/* 4.1.4.3 struct virtio_pci_common_cfg */
#define COMMON_DFSELECT 0
#define COMMON_DF 4
#define COMMON_GFSELECT 8
#define COMMON_GF 12
#define COMMON_MSIX 16
#define COMMON_NUMQ 18
#define COMMON_STATUS 20
#define COMMON_CFGGENERATION 21
#define COMMON_Q_SELECT 22
#define COMMON_Q_SIZE 24
#define COMMON_Q_MSIX 26
#define COMMON_Q_ENABLE 28
#define COMMON_Q_NOFF 30
#define COMMON_Q_DESC 32
#define COMMON_Q_DRIVER 40
#define COMMON_Q_DEVICE 48
#define COMMON_LEN 56
/* with VIRTIO_F_RING_RESET, when the structure is this long */
#define COMMON_Q_NOTIF_DATA 56
#define COMMON_Q_RESET 58
#define COMMON_LEN_RESET 60

/* 2.1 Device Status Field */
#define STATUS_ACKNOWLEDGE 1
#define STATUS_DRIVER 2
#define STATUS_DRIVER_OK 4
#define STATUS_FEATURES_OK 8
#define STATUS_NEEDS_RESET 64
#define STATUS_FAILED 128

/* 6 Reserved Feature Bits: queue reset (4.1.4.3.2) */
#define VIRTIO_F_RING_RESET 40

#endif
