# SPDX-License-Identifier: MIT
"""bench-net's peers (host/ringside/peer.py): wait_rx() counts from a
base until the frames arrived, testpmd by RX-packets, the tap by what its
kernel took in or dropped; each gives the guest its QEMU options."""

from ringside.peer import FramePeer
from ringside import testpmd
from ringside.vhost_net import TapSink


class Counting:
    """port_stats() from a list of counters, the last one repeated."""

    def __init__(self, stats):
        self.stats = list(stats)

    def port_stats(self):
        return self.stats.pop(0) if len(self.stats) > 1 else self.stats[0]


class FakePmd(Counting, FramePeer):
    pass


class FakeTap(Counting, TapSink):
    pass


def test_wait_rx_is_relative_to_base_and_stops_when_counted():
    peer = FakePmd([{'rx': 110, 'tx': 5}, {'rx': 140, 'tx': 6}, {'rx': 150, 'tx': 7}])
    assert peer.wait_rx(40, base={'rx': 100, 'tx': 5}) == {'rx': 40, 'tx': 1}
    assert peer.stats == [{'rx': 150, 'tx': 7}]


def test_wait_rx_from_zero_and_after_timeout():
    assert FakePmd([{'rx': 3}]).wait_rx(0) == {'rx': 3}
    assert FakePmd([{'rx': 3}]).wait_rx(10, timeout=0.3) == {'rx': 3}


def test_tap_counts_dropped_frames_as_arrived():
    tap = FakeTap([{'rx': 7, 'rx_bytes': 70, 'rx_dropped': 3}, {'rx': 99, 'rx_dropped': 0}])
    assert tap.wait_rx(10, base={'rx': 0, 'rx_bytes': 0, 'rx_dropped': 0}) == {
        'rx': 7, 'rx_bytes': 70, 'rx_dropped': 3}


def test_peers_give_the_guest_its_options():
    pmd = testpmd.TestPmd('/tmp/vhu.sock')
    args = pmd.net_args(True, '52:54:00:00:00:01')
    assert 'socket,id=vhu0,path=/tmp/vhu.sock' in args
    assert 'virtio-net-pci,netdev=n0,packed=on,mac=52:54:00:00:00:01' in args
    assert pmd.guest_qemu('/usr/bin/qemu') == '/usr/bin/qemu'
    tap = TapSink('/usr/bin/qemu')
    tap.qemu = '/tmp/ns-wrapper'
    args = tap.net_args(True, '52:54:00:00:00:01')
    assert 'virtio-net-pci,netdev=n0,packed=off,mac=52:54:00:00:00:01' in args
    assert tap.guest_qemu('/usr/bin/qemu') == '/tmp/ns-wrapper'
