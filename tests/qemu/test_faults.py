# SPDX-License-Identifier: MIT
"""A faulty device: ringside's vsock against our back end with --inject
(host/vhost-vsock/inject.c), split and packed rings, indirect on and off
(RINGS below says which).

Two boots per ring setting. "absorbed": faults a driver must take without
losing a byte (duplicate RESPONSE, unknown op and type, zero-length RW,
RW and RST storms for ports nobody uses, credit lies below the truth,
one-byte splits): one connection keeps echoing byte-exact while they are
injected. "all": every mode, including those that legitimately end
connections (garbled lengths, wrong dst_cid, bogus and stale used ids,
after which the queue may be broken and the device reset); the guest
must count them, stay responsive, and after the back end stops injecting
(its control socket: `inject stop`) a NEW connection echoes byte-exact.
"""

import re
import time

import pytest

from ringside_qemu import Guest
from test_vsock import ECHO, connect_when_up, counters, echo_exchange, pattern

ABSORBED = ('dup-response', 'bad-op', 'bad-type', 'zero-rw', 'rw-unknown',
            'rst-storm', 'credit-lie', 'split')
ALL = ABSORBED + ('short-len', 'len-overflow', 'len-beyond', 'wrong-dst',
                  'bogus-rx-id', 'bogus-tx-id', 'stale-rx-id', 'stale-tx-id')
# guest counters that count a device's garbage
FAULT_COUNTERS = ('rx_short', 'rx_len_bad', 'rx_bad_cid', 'rx_bad_type',
                  'rx_bad_op', 'bad')
TIMEOUT = 240


class FaultyGuest:
    def __init__(self, ring, modes, name, every=20, cmdline=None, cpus=1):
        self.name = name
        extra = ('--cmdline', cmdline) if cmdline else ()
        if cpus > 1:
            extra += ('--qemu-arg=-smp', '--qemu-arg=%d' % cpus)
        self.g = Guest('--boot', 'elf', '--vsock', *extra, '--qemu-arg=-global',
                       '--qemu-arg=vhost-user-vsock-pci.packed=%s' %
                       ('on' if ring == 'packed' else 'off'),
                       '--vsock-arg=--inject=%s' % ','.join(modes),
                       '--vsock-arg=--inject-every=%d' % every,
                       '--vsock-arg=--inject-seed=7', name=name)

    def injected_counts(self):
        """{mode: faults injected so far}: the back end's own counters."""
        return self.g.launch.backend_control().injected()

    def injected(self):
        """The modes injected at least once."""
        return {m for m, n in self.injected_counts().items() if n}

    def injected_count(self, mode):
        return self.injected_counts()[mode]

    def stop_injecting(self):
        control = self.g.launch.backend_control()
        control.stop_injecting()
        assert control.ask('counters')['inject']['stopped']


# The indirect matrix. Faults on RX packets meet one-descriptor chains
# whatever indirect= says; it shapes only TX chains (one slot through a
# table, or header + payload in two), and only the packed ring's
# completion path depends on a chain's length (a split used entry names
# its head whatever the length). So packed runs both ways, split with
# the default: three boots, not four.
RINGS = [('split', 1), ('packed', 1), ('packed', 0)]


@pytest.fixture(params=RINGS, ids=['%s-indirect%d' % r for r in RINGS])
def ring(request):
    return request.param


def test_absorbed_faults_lose_nothing(ring):
    ring, indirect = ring
    fg = FaultyGuest(ring, ABSORBED, 'faults-absorbed-%s-indirect%d' % (ring, indirect),
                     cmdline='indirect=%d' % indirect)
    try:
        fg.g.start()
        s = connect_when_up(fg.g.vsock_uds, ECHO)
        deadline = time.monotonic() + TIMEOUT
        n = 0
        with s:
            # the same connection, byte-exact, until every mode has hit
            while fg.injected() < set(ABSORBED):
                assert time.monotonic() < deadline, (
                    'not injected: %s' % (set(ABSORBED) - fg.injected()))
                data = pattern(1 + (n * 7919) % 70000, n)
                assert echo_exchange(s, data) == data, n
                n += 1
            fg.stop_injecting()
            data = pattern(1 << 20, 99)
            assert echo_exchange(s, data) == data
        c = counters(fg.g, 'virtio-vsock')
        v = counters(fg.g, 'vsock')
        # unknown ops and types were seen and dropped, not acted on
        assert sum(c.get(k, 0) for k in FAULT_COUNTERS) + \
            v.get('rx_bad_type', 0) + v.get('rx_bad_op', 0) > 0, (c, v)
        assert 'broken-queue resets: 0' in fg.g.command('virtio')
        status = fg.g.poweroff()
    finally:
        fg.g.stop()
    assert status == 0


def test_every_fault_counted_and_new_connection_echoes(ring):
    ring, indirect = ring
    # a lost packet stalls its exchange until the timeout: inject often
    fg = FaultyGuest(ring, ALL, 'faults-all-%s-indirect%d' % (ring, indirect), every=5,
                     cmdline='indirect=%d' % indirect)
    try:
        fg.g.start()
        deadline = time.monotonic() + TIMEOUT
        n = ok = failed = 0
        while fg.injected() < set(ALL):
            assert time.monotonic() < deadline, (
                'not injected: %s' % (set(ALL) - fg.injected()))
            data = pattern(1 + (n * 7919) % 70000, n)
            n += 1
            try:
                with connect_when_up(fg.g.vsock_uds, ECHO) as s:
                    if echo_exchange(s, data, timeout=5) == data:
                        ok += 1
                    else:
                        failed += 1
            except (OSError, TimeoutError, ConnectionError):
                failed += 1
        fg.stop_injecting()
        # the guest did not hang: its console answers, it counted faults
        out = fg.g.command('virtio')
        resets = int(re.search(r'broken-queue resets: (\d+)', out).group(1))
        c = counters(fg.g, 'virtio-vsock')
        v = counters(fg.g, 'vsock')
        assert resets > 0 or sum(c.get(k, 0) for k in FAULT_COUNTERS) > 0, (out, c, v)
        # and a new connection is byte-exact again
        for size in (1, 65536, 1 << 20):
            data = pattern(size, 5)
            with connect_when_up(fg.g.vsock_uds, ECHO) as s:
                assert echo_exchange(s, data) == data, size
        print('%s indirect=%d: %d exchanges ok, %d failed, %d device resets'
              % (ring, indirect, ok, failed, resets))
        status = fg.g.poweroff()
    finally:
        fg.g.stop()
    assert status == 0
