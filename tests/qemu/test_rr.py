# SPDX-License-Identifier: MIT
"""Request/response with many sessions: build/host/ringside-bench rr.

Through the back end: 64 concurrent sessions on the guest's echo service,
every response checked byte for byte by the client (it exits 3 on a
mismatch, 1 on a lost connection), and the guest's vsock counters must
account for every transaction the client reports. Over virtio-net: the
same client against the guest's UDP echo through a tap device in a
network namespace made for the test (skipped without root, ip netns and
/dev/net/tun). And stream -P 4 reports Jain's fairness index and the
slowest stream consistently with its per-stream rates.
"""

import json
import os
import subprocess

import pytest

from conftest import ELF, require_image
from ringside import guest_stats
from ringside_qemu import Guest, REPO
from test_net_tap import GUEST_IP, HOST_IP, TAP, NetNs, netns_usable
from test_vsock import ECHO, connect_when_up, counters

BENCH = os.path.join(REPO, 'build', 'host', 'ringside-bench')
RUN_TIMEOUT = 600


def rr(*args, prefix=()):
    proc = subprocess.run(list(prefix) + [BENCH, 'rr', '--json', *args], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT)
    assert proc.returncode == 0, 'ringside-bench rr %s: exit %d: %s' % (
            ' '.join(args), proc.returncode, proc.stderr)
    return json.loads(proc.stdout)['results']


@pytest.fixture(scope='module')
def vguest():
    require_image(BENCH)
    require_image(ELF)
    g = Guest('--boot', 'elf', '--vsock', name='rr-vsock')
    try:
        g.start()
        connect_when_up(g.vsock_uds, ECHO).close()
        yield g
    finally:
        g.stop()


@pytest.mark.parametrize('size', [1, 1024])
def test_rr_64_sessions_byte_exact(vguest, size):
    before = counters(vguest, 'vsock')
    res, = rr('--uds', vguest.vsock_uds, '--sessions', '64', '--size', str(size),
              '--time', '2', '--warmup', '2')
    after = counters(vguest, 'vsock')
    assert res['sessions'] == 64 and res['size'] == size == res['response']
    # every session got through its warm-up and into the measured window
    assert res['transactions'] >= 64 and res['slowest_tps'] > 0, res
    assert 0 < res['jain'] <= 1.0001
    assert 0 < res['p50'] <= res['p99'] <= res['max']
    # the guest echoed at least the bytes of every measured and warm-up
    # transaction of every session
    echoed = after.get('rx_bytes', 0) - before.get('rx_bytes', 0)
    assert echoed >= (res['transactions'] + 64 * 2) * size, (echoed, res)


def test_rr_sessions_list(vguest):
    res = rr('--uds', vguest.vsock_uds, '--sessions', '1,8', '--size', '64',
             '--time', '1', '--warmup', '1')
    assert [(r['sessions'], r['size']) for r in res] == [(1, 64), (8, 64)]
    assert all(r['transactions'] > 0 for r in res)
    # one session alone is perfectly fair
    assert res[0]['jain'] == pytest.approx(1.0)


def test_rr_wrong_port_fails(vguest):
    proc = subprocess.run([BENCH, 'rr', '--uds', vguest.vsock_uds, '--port', '4321',
                           '--time', '1'], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and 'no "OK"' in proc.stderr, proc.stderr


def udp_echoed(guest):
    """The guest's udp_echoed counter (`stats json net`)."""
    return guest_stats(guest, 60, 'net')['net']['udp_echoed']


@pytest.fixture(scope='module')
def udp_guest():
    if not netns_usable():
        pytest.skip('needs root, ip netns and /dev/net/tun')
    require_image(BENCH)
    require_image(ELF)
    ns = NetNs()
    g = None
    try:
        g = Guest('--boot', 'elf', '--cmdline', 'ip=%s prefix=24 gw=%s' % (GUEST_IP, HOST_IP),
                  '--', '-netdev', 'tap,id=n0,ifname=%s,script=no,downscript=no' % TAP,
                  '-device', 'virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56',
                  name='rr-udp')
        g.opts.qemu = ns.qemu
        g.ns = ns
        g.start()
        yield g
    finally:
        if g:
            g.stop()
        ns.close()


def test_udp_rr_through_tap(udp_guest):
    ns = udp_guest.ns
    before = udp_echoed(udp_guest)
    res = rr('--udp', '%s:7' % GUEST_IP, '--sessions', '1,16', '--size', '1,1024',
             '--time', '2', '--warmup', '2', '--udp-timeout', '2',
             prefix=('ip', 'netns', 'exec', ns.name))
    after = udp_echoed(udp_guest)
    assert [(r['sessions'], r['size']) for r in res] == [(1, 1), (1, 1024), (16, 1), (16, 1024)]
    for r in res:
        assert r['transactions'] > 0 and r['slowest_tps'] > 0, r
    done = sum(r['transactions'] for r in res)
    assert after - before >= done, (after - before, done)


def test_stream_reports_fairness(vguest):
    proc = subprocess.run([BENCH, 'stream', '--uds', vguest.vsock_uds, '--port', '1235',
                           '--dir', 'h2g', '-l', '4096', '-P', '4', '--time', '2', '--json'],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    rates = res['streams_gbps']
    assert len(rates) == 4 and all(r > 0 for r in rates), res
    jain = sum(rates) ** 2 / (4 * sum(r * r for r in rates))
    assert res['jain'] == pytest.approx(jain, abs=1e-3)
    assert res['slowest_gbps'] == pytest.approx(min(rates), abs=1e-3)
