# SPDX-License-Identifier: MIT
"""iperf3 --bidir on the kernel's vhost-vsock through a forwarder that
delivers the data streams out of order.

socat's TCP-LISTEN,fork forwards (ringside bench --tools on the kernel path)
connect each accepted connection to AF_VSOCK in its own child, so the
guest may accept a --bidir test's second data stream before its first.
iperf3's own server tells the client's sending streams by that order; a
sending stream taken for a receiving one is never read and the client
blocks for good. ringside's server goes by the data instead. Here a
forwarder of the test's own makes the swap happen every time: it holds
the first data stream's connection until the second one's is in.
"""

import socket
import threading

import pytest

from test_iperf3 import IPERF3, PORT, run_checked
from test_kernel_vsock import own_cid_guest

pytestmark = pytest.mark.skipif(IPERF3 is None,
                                reason='iperf3 not installed (make deps adds it)')


@pytest.fixture(scope='module')
def iguest():
    yield from own_cid_guest('kvm-iperf3')


def pipe(src, dst):
    """Bytes from src to dst until src's end, which dst then gets too."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class SwappingForward:
    """TCP on 127.0.0.1 to the guest's iperf3 port, one AF_VSOCK
    connection per TCP one; with `swap`, the second TCP connection (a
    test's first data stream) reaches the guest only after the third."""

    def __init__(self, cid, swap=True):
        self.cid, self.swap = cid, swap
        self.listener = socket.create_server(('127.0.0.1', 0))
        self.port = self.listener.getsockname()[1]
        self.socks, self.threads = [], []
        self.held = None
        self.accepted = 0
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _join(self, tcp):
        v = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
        v.settimeout(60)
        v.connect((self.cid, PORT))
        v.settimeout(None)
        self.socks.append(v)
        for src, dst in ((tcp, v), (v, tcp)):
            t = threading.Thread(target=pipe, args=(src, dst), daemon=True)
            t.start()
            self.threads.append(t)

    def _accept(self):
        try:
            while True:
                tcp, _ = self.listener.accept()
                self.socks.append(tcp)
                self.accepted += 1
                if self.swap and self.accepted == 2:
                    self.held = tcp
                    continue
                self._join(tcp)
                if self.held and self.accepted == 3:
                    self._join(self.held)
        except OSError:
            pass   # the listener closed

    def close(self):
        self.listener.close()
        for s in self.socks:
            s.close()
        for t in self.threads:
            t.join(30)
        self.acceptor.join(30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_bidir_streams_swapped_by_the_forwarder(iguest):
    """The client's sending stream reaches the guest second: its bytes
    are all read (every one the client sent counted, no drain timeout),
    the guest fills the other stream, and it counts the swap."""
    with SwappingForward(iguest.cid) as fwd:
        report, d = run_checked(iguest, fwd, '--bidir', '-t', '2')
    assert fwd.accepted == 3
    end = report['end']
    assert end['sum_sent']['bytes'] == end['sum_received']['bytes'] == d['in'] > 0, d
    assert end['sum_sent_bidir_reverse']['bytes'] == d['out'] > 0, d
    assert d['bidir_reordered'] == 1, d


def test_bidir_in_order_is_not_counted(iguest):
    """The same forwarder without the hold is not counted as a swap."""
    with SwappingForward(iguest.cid, swap=False) as fwd:
        report, d = run_checked(iguest, fwd, '--bidir', '-t', '2')
    assert fwd.accepted == 3
    assert report['end']['sum_received']['bytes'] == d['in'] > 0, d
    assert d['bidir_reordered'] == 0, d


def test_poweroff(iguest):
    assert iguest.poweroff() == 0
