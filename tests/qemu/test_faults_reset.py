# SPDX-License-Identifier: MIT
"""A faulty device the guest cannot resynchronise after, end to end:
the queue is marked broken, the driver resets and re-probes the device,
the connection open at the time is reset, the listener survives, and
after the back end stops the faults (its control socket), new connections
echo byte-exact.

The fault is stale-tx-id on every packet: TX completions under an id in
range that names no buffer the guest has outstanding. TX faults lose no
data (the back end has already sent the packet), so the echo stays
byte-exact until the reset. Which guest rule breaks the queue depends on
the ring and the chains (drivers/virtio/virtqueue.h):
  - packed, indirect=0, a packet whose payload is not in its own buffer
    (the source service's, vsock_send_static): header + payload, 2 slots;
    a garbled element while one is in flight cannot be skipped (where the
    next element sits is unknown): broken at the first such fault. The
    echo replies in the received buffer, header and payload in one slot,
    so that case reads from the source service instead.
  - packed, indirect=0, the echo: every chain 1 slot, as below.
  - split (either), packed with indirect=1 (every chain 1 slot): the
    guest skips the entry and loses the buffer; when half the ring is
    lost the queue is marked broken, after exactly size/2 lost buffers.
"""

import re
import time

import pytest

from test_faults import FaultyGuest
from test_vsock import ECHO, SOURCE, connect_when_up, echo_exchange, pattern

TIMEOUT = 300
MODE = 'stale-tx-id'


def vsock_section(out):
    """The virtio-vsock device's lines of `virtio`."""
    m = re.search(r'virtio-vsock.*?(?=\n\S|\Z)', out, re.S)
    assert m, out
    return m.group(0)


def recoveries(guest):
    sec = vsock_section(guest.command('virtio'))
    return int(re.search(r'broken-queue resets: (\d+)', sec).group(1))


def tx_queue_size(guest):
    sec = vsock_section(guest.command('virtio'))
    return int(re.search(r'queue 1: \w+ size (\d+)', sec).group(1))


def echo_until_reset(fg, s):
    """Byte-exact exchanges on s until the guest's reset ends it: the
    number of exchanges that completed."""
    deadline = time.monotonic() + TIMEOUT
    n = 0
    while True:
        assert time.monotonic() < deadline, 'no reset after %d exchanges' % n
        data = pattern(1 + (n * 7919) % 70000, n)
        try:
            got = echo_exchange(s, data, timeout=120)
        except ConnectionError:
            return n  # EOF or RST: the device reset ended it
        assert got == data, n
        n += 1


def source_until_reset(s):
    """Read the source service's stream (byte i is i % 251) until the
    guest's reset ends it, checking every byte: the bytes read."""
    s.settimeout(120)
    n = 0
    while True:
        try:
            got = s.recv(1 << 16)
        except ConnectionError:
            return n
        if not got:
            return n
        assert got == bytes((n + i) % 251 for i in range(len(got))), n
        n += len(got)


@pytest.mark.parametrize('ring,indirect,port,cpus', [
    ('split', 1, ECHO, 1), ('split', 0, ECHO, 1), ('packed', 1, ECHO, 1),
    ('packed', 0, ECHO, 1), ('packed', 0, SOURCE, 1), ('split', 1, ECHO, 2)])
def test_broken_queue_resets_and_traffic_resumes(ring, indirect, port, cpus):
    fg = FaultyGuest(ring, (MODE,), 'faults-reset-%s-indirect%d-%d-cpus%d'
                     % (ring, indirect, port, cpus), every=1,
                     cmdline='indirect=%d' % indirect, cpus=cpus)
    try:
        fg.g.start()
        assert ('cpus: %d online' % cpus) in fg.g.command('info')
        size = tx_queue_size(fg.g)
        assert recoveries(fg.g) == 0
        with connect_when_up(fg.g.vsock_uds, port) as s:
            n = echo_until_reset(fg, s) if port == ECHO else source_until_reset(s)
        m = fg.g.wait_for(r'queue broken by the device [^\n]*re-probe #(\d+)', timeout=120)
        assert m.group(1) == '1', m.group(0)
        fg.stop_injecting()
        injected = fg.injected_count(MODE)
        # after the reset: a new connection through the same listener
        for size_b in (1, 65536, 1 << 20):
            data = pattern(size_b, 3)
            with connect_when_up(fg.g.vsock_uds, ECHO, timeout=120) as s:
                assert echo_exchange(s, data) == data, size_b
        assert recoveries(fg.g) == 1
        # the new queues saw no garbled completion after the stop
        bad = re.findall(r' bad (\d+)', vsock_section(fg.g.command('virtio')))
        assert bad and all(b == '0' for b in bad), bad
        assert len(re.findall(r'queue broken by the device', fg.g.output)) == 1
        if ring == 'packed' and indirect == 0 and port == SOURCE:
            # the multi-slot rule, long before half the ring was lost
            assert 1 <= injected < size // 2, (injected, size)
        else:
            # the lost-buffer rule: every fault up to the break was one
            # lost buffer, and the break came at exactly half the ring
            assert injected >= size // 2, (injected, size)
        print('%s indirect=%d port %d: %d exchanges or bytes, %d faults injected, '
              'queue size %d' % (ring, indirect, port, n, injected, size))
        status = fg.g.poweroff()
    finally:
        fg.g.stop()
    assert status == 0
