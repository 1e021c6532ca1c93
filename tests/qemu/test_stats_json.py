# SPDX-License-Identifier: MIT
"""`stats json` against a live guest: one echo over vsock (our back end's
hybrid Unix socket) moves the JSON counters by exactly what was sent, and
every counter the text `stats` shows for the quiet guest has the same
value in the JSON."""

import re
import time

import pytest

from ringside import guest_stats
from ringside_qemu import Guest
from vsockhost import PORT_ECHO, hybrid_connect, recv_exact

TIMEOUT = 120
MESSAGE = bytes(range(256)) * 12 + b'tail'    # 3076 bytes: one packet each way
QUIET = ('virtio-vsock', 'services', 'vsock', 'iperf3', 'sockperf', 'net')


@pytest.fixture(scope='module')
def sguest():
    g = Guest('--boot', 'elf', '--vsock', name='stats-json')
    try:
        g.start()
        deadline = time.monotonic() + 60
        while True:   # the back end takes connections once QEMU handed it the rings
            try:
                hybrid_connect(g.vsock_uds, PORT_ECHO, timeout=TIMEOUT).close()
                break
            except OSError:
                assert time.monotonic() < deadline, 'the echo service never answered'
                time.sleep(0.2)
        yield g
        status = g.poweroff() if g.alive else g.status
    finally:
        g.stop()
    assert status == 0, 'QEMU exit status %r after poweroff' % status


def wait_stats(guest, done, what):
    """guest_stats() once done(stats) holds; the guest closes after its
    peer, a few passes of its loop later."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        st = guest_stats(guest, TIMEOUT)
        if done(st):
            return st
        assert time.monotonic() < deadline, '%s: %r' % (what, st)
        time.sleep(0.1)


def quiet(guest):
    """guest_stats() after every connection is gone (the sections that
    only move with traffic are the same in two answers in a row)."""
    prev = None
    while True:
        st = wait_stats(guest, lambda s: all(v['conns'] == 0 for v in s['services'].values()),
                        'connections left')
        if prev is not None and all(st[k] == prev[k] for k in QUIET):
            return st
        prev = st


def test_one_line_every_section(sguest):
    out = sguest.command('stats json')
    assert len(out.splitlines()) == 1, out
    st = guest_stats(sguest, TIMEOUT)
    for section in ('console', 'virtio-vsock', 'net', 'services', 'iperf3', 'sockperf',
                    'vsock', 'idle'):
        assert section in st, sorted(st)
    assert st['virtio-vsock']['device'] is True
    assert sorted(st['virtio-vsock']['queues']) == ['evq', 'rxq', 'txq']
    assert st['services']['echo']['port'] == PORT_ECHO
    assert guest_stats(sguest, TIMEOUT, 'idle').keys() == {'idle'}
    assert sguest.command('stats json nosuch') == "error: stats: no subsystem 'nosuch'"


def test_echo_moves_counters_exactly(sguest):
    before = quiet(sguest)
    with hybrid_connect(sguest.vsock_uds, PORT_ECHO, timeout=TIMEOUT) as s:
        s.sendall(MESSAGE)
        assert recv_exact(s, len(MESSAGE)) == MESSAGE
    after = wait_stats(sguest, lambda s: s['services']['echo']['closed']
                       == before['services']['echo']['closed'] + 1, 'echo close')

    def moved(section, *path):
        a, b = after[section], before[section]
        for key in path:
            a, b = a[key], b[key]
        return a - b

    n = len(MESSAGE)
    assert moved('services', 'echo', 'accepted') == 1
    assert moved('services', 'echo', 'closed') == 1
    assert moved('services', 'echo', 'refused') == 0
    assert after['services']['echo']['conns'] == 0
    assert moved('services', 'echo', 'bytes_in') == n
    assert moved('services', 'echo', 'bytes_out') == n
    for svc in ('sink', 'source'):
        assert after['services'][svc] == before['services'][svc]
    # payload bytes on the wire, each way: the message and nothing else
    assert moved('vsock', 'rx_bytes') == n
    assert moved('vsock', 'tx_bytes') == n
    # request, the data and the shutdown came in at least; no drop anywhere
    assert moved('vsock', 'rx_pkts') >= 3
    assert moved('virtio-vsock', 'rx_pkts') >= moved('vsock', 'rx_pkts')
    assert after['vsock']['drop'] == before['vsock']['drop']
    assert after['virtio-vsock']['drop'] == before['virtio-vsock']['drop']
    q_after, q_before = after['virtio-vsock']['queues'], before['virtio-vsock']['queues']
    assert q_after['rxq']['completed'] - q_before['rxq']['completed'] \
        == moved('virtio-vsock', 'rx_pkts')
    assert q_after['txq']['added'] > q_before['txq']['added']
    assert after['net'] == before['net']


def text_pairs(text):
    """'name N' pairs of a line, in order."""
    return [(k, int(v)) for k, v in re.findall(r'([a-z_]+):? (\d+)', text)]


def test_json_agrees_with_text(sguest):
    st = quiet(sguest)
    # services: "  echo   port 1234  conns 0 accepted 3 ... in 64 B out 64 B"
    text = sguest.command('stats services')
    rows = re.findall(r'^\s+(\w+)\s+port (\d+)\s+conns (\d+) accepted (\d+) closed (\d+) '
                      r'refused (\d+) in (\d+) B out (\d+) B$', text, re.M)
    assert len(rows) == len(st['services']) == 3, text
    for name, *values in rows:
        keys = ('port', 'conns', 'accepted', 'closed', 'refused', 'bytes_in', 'bytes_out')
        assert {k: st['services'][name][k] for k in keys} == dict(zip(keys, map(int, values)))
    # virtio-vsock: the queue lines, then every other "name N" pair by name
    text = sguest.command('stats virtio-vsock')
    vv = st['virtio-vsock']
    for q in ('rxq', 'txq', 'evq'):
        line = re.search(r'^\s+%s: (.*)$' % q, text, re.M).group(1)
        assert dict(text_pairs(line)) == vv['queues'][q], (q, line)
    flat = dict(vv['drop'], **{k: v for k, v in vv.items() if isinstance(v, int)
                               and not isinstance(v, bool)})
    m = re.search(r'guest cid (\d+), rx posted (\d+), txq (\d+) pkts (\d+) bytes', text)
    assert [int(x) for x in m.groups()] == [vv['guest_cid'], vv['rx_posted'], vv['txq_pkts'],
                                            vv['txq_bytes']]
    other = [ln for ln in text.splitlines()
             if not re.match(r'\s+(rxq|txq|evq):|\s+guest cid', ln)]
    pairs = text_pairs('\n'.join(other))
    assert len(pairs) == len(flat) - 4, (pairs, flat)
    for k, v in pairs:
        assert flat[k] == v, (k, v, flat)
    # vsock: the credit line names its counters in two words
    text = sguest.command('stats vsock')
    v = st['vsock']
    m = re.search(r'credit: updates sent (\d+) rcvd (\d+), requests sent (\d+) rcvd (\d+)', text)
    assert [int(x) for x in m.groups()] == [v['credit'][k] for k in (
        'updates_sent', 'updates_rcvd', 'requests_sent', 'requests_rcvd')]
    flat = dict(v['drop'], **{k: n for k, n in v.items() if isinstance(n, int)})
    pairs = text_pairs('\n'.join(ln for ln in text.splitlines() if 'credit:' not in ln))
    assert len(pairs) == len(flat), (pairs, flat)
    for k, n in pairs:
        assert flat[k] == n, (k, n, flat)
    # iperf3 and sockperf: their text names are the keys
    for section in ('iperf3', 'sockperf'):
        pairs = text_pairs(sguest.command('stats %s' % section).replace(' B', ''))
        want = dict(st[section])
        got = dict(pairs)
        if section == 'iperf3':
            got['bytes_in'], got['bytes_out'] = got.pop('in'), got.pop('out')
        assert got == want, (section, got, want)
