# SPDX-License-Identifier: MIT
"""One poll loop serves everything, also while a console command blocks.

A guest with vsock (our back end, hybrid socket) and virtio-net (EtherPeer
on loopback) runs a long console command in a thread: `ping count=1000`
(200 s of waiting between echoes) or `vsock stream` to a host listener.
Meanwhile the guest's vsock echo service must answer byte-exact. Before
the poll registry, ping's wait polled only the network, so the echo
service froze until ping ended and these exchanges timed out.
"""

import re
import threading
import time

import pytest

from conftest import ELF, require_image
from ringside_qemu import Guest
from ringside.ether_peer import EtherPeer
from test_vsock import ECHO, HostListener, connect_when_up, echo_exchange, pattern

GUEST_IP = '10.0.2.15'
PEER_IP = '10.0.2.2'
PING_COUNT = 1000
STREAM_PORT = 5001
STREAM_SECONDS = 40
# A frozen echo service never answers; a working one answers in seconds
# even under TCG on a loaded host.
ECHO_TIMEOUT = 60
EXCHANGE_SIZES = [1, 64, 4096, 65536, 1 << 20]


@pytest.fixture(scope='module')
def guest():
    require_image(ELF)
    peer = EtherPeer(ip=PEER_IP)
    g = Guest('--boot', 'elf', '--vsock',
              '--cmdline', 'ip=%s prefix=24 gw=%s' % (GUEST_IP, PEER_IP),
              '--', *peer.qemu_args(),
              name='poll-loop')
    g.peer = peer
    try:
        g.start()
        connect_when_up(g.vsock_uds, ECHO).close()
        yield g
    finally:
        g.stop()
        peer.close()


class Background:
    """One console command running in a thread: its output, or its error."""

    def __init__(self, guest, cmd, timeout):
        self.out = None
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(guest, cmd, timeout),
                                       daemon=True)
        self.thread.start()

    def _run(self, guest, cmd, timeout):
        try:
            self.out = guest.command(cmd, timeout=timeout)
        except Exception as e:  # reported by the test that waits for it
            self.error = e

    @property
    def running(self):
        return self.thread.is_alive()

    def result(self, timeout):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), 'command still running after %d s' % timeout
        assert self.error is None, self.error
        return self.out


def wait_until(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, 'no %s in %d s' % (what, timeout)
        time.sleep(0.1)


def echo_rounds(g):
    """Every size once through the guest's echo service, compared byte for
    byte; returns how many exchanges were made."""
    n = 0
    with connect_when_up(g.vsock_uds, ECHO) as s:
        for i, size in enumerate(EXCHANGE_SIZES):
            data = pattern(size, i)
            assert echo_exchange(s, data, timeout=ECHO_TIMEOUT) == data
            n += 1
    return n


def test_echo_answers_during_ping(guest):
    start = len(guest.output)
    ping = Background(guest, 'ping %s count=%d' % (PEER_IP, PING_COUNT), timeout=900)
    # ping is in its wait loop once the first reply is printed
    wait_until(lambda: 'icmp_seq=1 ' in guest.output[start:], 120, 'first ping reply')
    for _ in range(3):
        assert echo_rounds(guest) == len(EXCHANGE_SIZES)
    assert ping.running, 'ping ended before the exchanges: they proved nothing'
    out = ping.result(900)
    m = re.search(r'ping: (\d+) sent, (\d+) received', out)
    assert m, out[-300:]
    assert int(m.group(1)) == PING_COUNT
    # the peer answers every echo; allow a few lost to a host stalled > 2 s
    assert int(m.group(2)) >= PING_COUNT - 10, m.group(0)
    assert guest.peer.counts['echo_replies'] >= int(m.group(2))


def test_echo_answers_during_stream(guest):
    sink = HostListener(guest.vsock_uds, STREAM_PORT, 'check')
    try:
        stream = Background(guest, 'vsock stream 2 %d 4096 %d' % (STREAM_PORT, STREAM_SECONDS),
                            timeout=600)
        wait_until(lambda: sink.bytes > 0, 120, 'stream bytes at the host listener')
        assert echo_rounds(guest) == len(EXCHANGE_SIZES)
        assert stream.running, 'the stream ended before the exchanges: they proved nothing'
        out = stream.result(600)
        m = re.search(r'stream 4096 B writes for [\d.]+ s: (\d+) bytes', out)
        assert m, out
        wait_until(lambda: sink.bytes >= int(m.group(1)), 120, 'every streamed byte')
        assert not sink.errors, 'pattern mismatch at %d' % sink.errors[0]
        assert sink.bytes == int(m.group(1))
    finally:
        sink.close()


def test_poweroff(guest):
    assert guest.poweroff() == 0
