# SPDX-License-Identifier: MIT
"""The host kernel's vhost-vsock: which virtio features it offers.

QEMU's vhost-vsock-pci passes `packed=on` to the guest only as far as the
kernel's vhost takes it: a vhost without VIRTIO_F_RING_PACKED (Linux 6.1)
fails VHOST_SET_FEATURES, the guest still sees the device and every connect
times out. So the launcher asks /dev/vhost-vsock first (kernel_vsock_problem).
"""

import fcntl
import os
import struct

VHOST_VSOCK = '/dev/vhost-vsock'
# <linux/vhost.h>: #define VHOST_GET_FEATURES _IOR(VHOST_VIRTIO, 0x00, __u64)
VHOST_VIRTIO = 0xAF
_IOC_READ = 2


def _ior(kind, nr, size):
    return (_IOC_READ << 30) | (size << 16) | (kind << 8) | nr


VHOST_GET_FEATURES = _ior(VHOST_VIRTIO, 0x00, 8)    # 0x8008af00

# Feature bits a vhost device may offer (virtio 1.2, <linux/vhost.h>).
FEATURE_BITS = {
    'VIRTIO_VSOCK_F_SEQPACKET': 1,
    'VIRTIO_F_NOTIFY_ON_EMPTY': 24,
    'VHOST_F_LOG_ALL': 26,
    'VIRTIO_F_ANY_LAYOUT': 27,
    'VIRTIO_RING_F_INDIRECT_DESC': 28,
    'VIRTIO_RING_F_EVENT_IDX': 29,
    'VIRTIO_F_VERSION_1': 32,
    'VIRTIO_F_ACCESS_PLATFORM': 33,
    'VIRTIO_F_RING_PACKED': 34,
    'VIRTIO_F_IN_ORDER': 35,
}


def decode_features(raw):
    """VHOST_GET_FEATURES's 8 bytes (host byte order, a __u64) -> the
    feature mask as an int."""
    if len(raw) != 8:
        raise ValueError('VHOST_GET_FEATURES returns 8 bytes, got %d' % len(raw))
    return struct.unpack('=Q', raw)[0]


def feature_names(mask):
    """The names of the known bits set in `mask`, lowest bit first; unknown
    bits as 'bit N'."""
    by_bit = {bit: name for name, bit in FEATURE_BITS.items()}
    return [by_bit.get(bit, 'bit %d' % bit) for bit in range(64) if mask >> bit & 1]


def missing_features(mask, wanted):
    """The names in `wanted` whose bit `mask` lacks, in the order given."""
    return [name for name in wanted if not mask >> FEATURE_BITS[name] & 1]


def vhost_features(path=VHOST_VSOCK):
    """Ask a vhost device node for its features (VHOST_GET_FEATURES).

    Raises OSError when the node cannot be opened or does not answer.
    """
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        return decode_features(fcntl.ioctl(fd, VHOST_GET_FEATURES, bytes(8)))
    finally:
        os.close(fd)


def kernel_vsock_problem(packed, path=VHOST_VSOCK, features=vhost_features):
    """Why the kernel's vhost-vsock cannot serve this guest, in one line, or
    None. `packed`: the device is asked for packed=on."""
    if not os.path.exists(path):
        return '%s does not exist (modprobe vhost_vsock, or use vhost-user)' % path
    if not packed:
        return None
    try:
        mask = features(path)
    except OSError as e:
        return 'cannot ask %s for its features (VHOST_GET_FEATURES): %s' % (
                path, e.strerror or e)
    missing = missing_features(mask, ['VIRTIO_F_RING_PACKED'])
    if missing:
        return ('packed=on needs %s (bit %d), which %s does not offer (features %#x)'
                % (missing[0], FEATURE_BITS[missing[0]], path, mask))
    return None
