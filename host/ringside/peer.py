# SPDX-License-Identifier: MIT
"""The peer of the guest's virtio-net in `ringside net`: what its pktgen
sends to, counting every frame that arrives. dpdk-testpmd on a vhost-user
socket (testpmd.TestPmd) and a tap on the kernel's vhost-net
(vhost_net.TapSink) are the two."""

from .wait import poll_for


class FramePeer:
    """What a peer gives `net`: start(), stop(), port_stats() (counters
    with at least 'rx', never cleared), net_args(packed, mac) (the guest's
    virtio-net QEMU options toward the peer) and guest_qemu(qemu) (the QEMU
    binary or wrapper the guest runs in)."""

    def received(self, st):
        """How many frames of counters `st` reached the peer."""
        return st['rx']

    def guest_qemu(self, qemu):
        return qemu

    def wait_rx(self, n, base=None, timeout=60.0):
        """Until n frames arrived after `base` (a port_stats() result from
        before; None: from zero), or timeout seconds passed (a counter has
        no event to wait on); returns the counters relative to base."""
        base = base or {}

        def since_base():
            return {k: v - base.get(k, 0) for k, v in self.port_stats().items()}

        def arrived():
            st = since_base()
            return st if self.received(st) >= n else None
        return poll_for(arrived, timeout, interval=0.2) or since_base()
