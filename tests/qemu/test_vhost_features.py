# SPDX-License-Identifier: MIT
"""The kernel vhost-vsock checks without QEMU or /dev/vhost-vsock: the
VHOST_GET_FEATURES decoder, the packed=on guard on made-up feature masks,
and how the launcher reads packed=on from its QEMU arguments."""

import errno
import struct

import pytest

from conftest import ELF, require_image
import ringside as rr
from ringside import machine, qemu, vhost

VERSION_1 = 1 << 32
PACKED = 1 << 34
# What Linux 6.1's /dev/vhost-vsock answered (in a nested L1, Debian's
# 6.1.0-57): no packed ring.
LINUX_6_1 = 0x33d000002


def test_ioctl_number():
    assert vhost.VHOST_GET_FEATURES == 0x8008af00


def test_decode_features_is_a_u64_in_host_order():
    raw = struct.pack('=Q', LINUX_6_1 | PACKED)
    assert vhost.decode_features(raw) == LINUX_6_1 | PACKED
    assert vhost.decode_features(bytes(8)) == 0
    assert vhost.decode_features(b'\xff' * 8) == (1 << 64) - 1
    with pytest.raises(ValueError):
        vhost.decode_features(b'\0' * 4)


def test_feature_names():
    assert vhost.feature_names(VERSION_1 | PACKED | (1 << 40)) == [
            'VIRTIO_F_VERSION_1', 'VIRTIO_F_RING_PACKED', 'bit 40']
    assert vhost.feature_names(LINUX_6_1) == [
            'VIRTIO_VSOCK_F_SEQPACKET', 'VIRTIO_F_NOTIFY_ON_EMPTY', 'VHOST_F_LOG_ALL',
            'VIRTIO_F_ANY_LAYOUT', 'VIRTIO_RING_F_INDIRECT_DESC', 'VIRTIO_RING_F_EVENT_IDX',
            'VIRTIO_F_VERSION_1', 'VIRTIO_F_ACCESS_PLATFORM']


def test_missing_features():
    assert vhost.missing_features(LINUX_6_1, ['VIRTIO_F_RING_PACKED']) == [
            'VIRTIO_F_RING_PACKED']
    assert vhost.missing_features(LINUX_6_1 | PACKED, ['VIRTIO_F_RING_PACKED',
                                                       'VIRTIO_F_VERSION_1']) == []


def test_guard_on_feature_masks(tmp_path):
    node = tmp_path / 'vhost-vsock'
    node.write_bytes(b'')
    path = str(node)
    # without packed=on nothing is asked
    assert vhost.kernel_vsock_problem(False, path, features=lambda p: 1 / 0) is None
    assert vhost.kernel_vsock_problem(True, path, features=lambda p: LINUX_6_1 | PACKED) is None
    line = vhost.kernel_vsock_problem(True, path, features=lambda p: LINUX_6_1)
    assert 'VIRTIO_F_RING_PACKED (bit 34)' in line and path in line and '\n' not in line

    def refuses(p):
        raise OSError(errno.ENOTTY, 'Inappropriate ioctl for device')
    line = vhost.kernel_vsock_problem(True, path, features=refuses)
    assert 'VHOST_GET_FEATURES' in line and 'Inappropriate ioctl' in line


def test_guard_without_the_device(tmp_path):
    line = vhost.kernel_vsock_problem(False, str(tmp_path / 'none'))
    assert line.startswith(str(tmp_path / 'none') + ' does not exist')


def test_ioctl_on_a_node_that_is_not_vhost():
    # /dev/null takes the open and refuses the ioctl: an OSError, not a crash
    with pytest.raises(OSError):
        vhost.vhost_features('/dev/null')


@pytest.mark.parametrize('args,packed', [
        (['-global', 'vhost-vsock-pci.packed=on'], True),
        (['--global', 'vhost-vsock-pci.packed=true'], True),
        (['-global', 'driver=vhost-vsock-pci,property=packed,value=on'], True),
        (['-global', 'virtio-device.packed=yes'], True),
        (['-global', 'vhost-vsock-pci.packed=off'], False),
        (['-global', 'vhost-user-vsock-pci.packed=on'], False),   # not the kernel's
        (['-global', 'vhost-vsock-pci.event_idx=on'], False),
        (['-device', 'vhost-vsock-pci,guest-cid=4,packed=on'], True),
        (['-smp', '2'], False),
        ([], False),
])
def test_packed_requested(args, packed):
    assert qemu.packed_requested(args) is packed


def test_launch_asks_before_qemu_when_auto_picks_the_kernel(monkeypatch):
    """--vsock-transport auto picks the kernel's device only under KVM with
    /dev/vhost-vsock, which this host has not: pretend it did, and check the
    guard runs, with packed=on seen, before any process starts."""
    require_image(ELF)
    opts = rr.parse_args(['--boot', 'elf', '--vsock', '--accel', 'kvm', '--qemu-arg=-global',
                          '--qemu-arg=vhost-vsock-pci.packed=on'])
    asked = []
    monkeypatch.setattr(machine, 'vsock_kernel', lambda o, accel: True)
    monkeypatch.setattr(machine, 'kernel_vsock_problem',
                        lambda packed: asked.append(packed) or 'packed=on needs X')
    launch = machine.Launch(opts, 'kvm')
    with pytest.raises(rr.LaunchError, match='^vhost-vsock-pci: packed=on needs X$'):
        launch.start()
    assert asked == [True]
    assert launch.qemu is None and not launch.children.procs
