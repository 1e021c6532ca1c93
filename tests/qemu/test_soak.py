# SPDX-License-Identifier: MIT
"""./ringside soak for 60 s: 64 connections at a time, echo,
sink, source and seqpacket with random sizes, connection after connection;
every byte compared, the guest's own byte and connection counts matched,
the guest's heap (chunk by chunk) and packet buffers and the back end's fds, mappings and
private memory flat. The checks themselves are tested on made-up samples
first: each must catch the growth or miscount it is there for."""

import json
import os
import subprocess
import sys

import pytest

from ringside_qemu import FRONT_DOOR, REPO

sys.path.insert(0, os.path.join(REPO, 'host'))
from ringside.commands import soak  # noqa: E402

SOAK = [sys.executable, FRONT_DOOR, 'soak']
ACCEL = os.environ.get('RINGSIDE_TEST_ACCEL', 'tcg')
SIZES = {272: 7, 208: 3, 65632: 8}
GUEST = {'sockets': 6, 'busy': 0, 'pkts': 128, 'heap': 7 * 272 + 3 * 208 + 8 * 65632,
         'chunks': 18, 'sizes': SIZES}
BACKEND = {'rss_kib': 6000, 'anon_kib': 480, 'fds': 15, 'maps': 27, 'host_conns': 0}


def grown(sample, **changes):
    return dict(sample, **changes)


def test_memory_checks_catch_growth():
    ok = soak.memory_checks(GUEST, GUEST, BACKEND, BACKEND, BACKEND, 256)
    assert ok == []
    cases = [(grown(GUEST, heap=GUEST['heap'] + 1), BACKEND, 'heap'),
             (grown(GUEST, chunks=19, heap=GUEST['heap'] + 48,
                    sizes={**SIZES, 48: 1}), BACKEND, 'chunk in use at the end'),
             (grown(GUEST, chunks=17, heap=GUEST['heap'] - 208,
                    sizes={**SIZES, 208: 2}), BACKEND, 'gone at the end'),
             (grown(GUEST, heap=GUEST['heap'] + 32,
                    sizes={**SIZES, 65632: 7, 65664: 1}), BACKEND, '65664 B chunk'),
             (grown(GUEST, pkts=129), BACKEND, 'pkts'),
             (grown(GUEST, sockets=7, busy=1), BACKEND, 'sockets'),
             (GUEST, grown(BACKEND, fds=16), 'fds'),
             (GUEST, grown(BACKEND, maps=28), 'maps'),
             (GUEST, grown(BACKEND, host_conns=1), 'host connection'),
             (GUEST, grown(BACKEND, anon_kib=480 + 257), 'RssAnon')]
    for g1, b1, what in cases:
        fails = soak.memory_checks(GUEST, g1, BACKEND, BACKEND, b1, 256)
        assert any(what in f for f in fails), (what, fails)
    assert soak.memory_checks(GUEST, GUEST, BACKEND, BACKEND,
                              grown(BACKEND, anon_kib=480 + 256), 256) == []


def test_chunk_handed_out_whole_is_not_a_leak():
    """newlib's malloc gives a free chunk whole when the rest would be
    smaller than its smallest chunk: the same buffer, 16 B bigger. Every
    chunk is still matched; the heap must differ by exactly that much."""
    whole = grown(GUEST, heap=GUEST['heap'] + 16, sizes={**SIZES, 65632: 7, 65648: 1})
    assert soak.memory_checks(GUEST, whole, BACKEND, BACKEND, BACKEND, 256) == []
    assert soak.heap_census_diff(GUEST['sizes'], whole['sizes']) == ([], [65648])
    off = grown(whole, heap=whole['heap'] + 16)
    assert any('handed out whole' in f
               for f in soak.memory_checks(GUEST, off, BACKEND, BACKEND, BACKEND, 256))


def services(echo=0, sink=0, source=0, conns=(0, 0, 0)):
    return {'echo': {'conns': 0, 'accepted': conns[0], 'closed': conns[0], 'in': echo,
                     'out': echo},
            'sink': {'conns': 0, 'accepted': conns[1], 'closed': conns[1], 'in': sink,
                     'out': 0},
            'source': {'conns': 0, 'accepted': conns[2], 'closed': conns[2], 'in': 0,
                       'out': source}}


def test_service_checks_catch_miscounts():
    t = soak.Totals()
    t.add('echo', 100, 100, True)
    t.add('seqpacket', 10, 10, True, 2)
    t.add('sink', 50, 0, True)
    t.add('source', 0, 70, True)
    before = services()
    assert soak.service_checks(before, services(110, 50, 80, (2, 1, 1)), t) == []
    for after, what in ((services(109, 50, 80, (2, 1, 1)), 'echo'),
                        (services(110, 49, 80, (2, 1, 1)), 'sink'),
                        (services(110, 50, 69, (2, 1, 1)), 'source'),
                        (services(110, 50, 80, (2, 2, 1)), 'sink accepted')):
        fails = soak.service_checks(before, after, t)
        assert any(what in f for f in fails), (what, fails)


def test_bad_option_is_one_line():
    p = subprocess.run([*SOAK, '--time', '-1'], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and p.stderr.count('\n') == 1, p.stderr
    assert p.stderr.startswith('ringside soak: error: argument -t/--time')


@pytest.mark.slow
@pytest.mark.parametrize('cpus', [1, 2])
def test_soak_60s(tmp_path, cpus):
    """The soak on one CPU, and with a second one up (its request loop
    halting beside CPU 0's services)."""
    out = tmp_path / 'soak.json'
    p = subprocess.run([*SOAK, '--time', '60', '--seed', '11', '--json', str(out),
                        '--', '--accel', ACCEL, '--qemu-arg=-smp', '--qemu-arg=%d' % cpus],
                       capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    with open(out) as f:
        r = json.load(f)['result']
    assert r['cpus'] == cpus, r['cpus']
    assert r['failures'] == [] and r['mismatches'] == 0 and r['errors'] == []
    # every kind of connection ran, with churn: many more than 64 in all
    assert all(r['conns'][k] > 64 for k in soak.KINDS), r['conns']
    assert r['messages'] > r['conns']['seqpacket']
    for k in ('echo', 'seqpacket'):
        assert r['sent'][k] == r['received'][k] > 0
    assert r['sent']['sink'] > 0 and r['received']['source'] > 0
    m = r['memory']
    # soak's own rule: a chunk malloc handed out whole is 16 B more, not a leak
    sizes = [{int(k): n for k, n in m[g]['sizes'].items()} for g in ('guest_start', 'guest_end')]
    census_fails, whole = soak.heap_census_diff(*sizes)
    assert census_fails == [], census_fails
    assert m['guest_end']['heap'] == (m['guest_start']['heap']
                                      + soak.CHUNK_WHOLE_SLACK * len(whole)), m
    assert m['guest_start']['heap'] > 0
    assert m['guest_end']['pkts'] == m['guest_start']['pkts']
    assert m['backend_end']['fds'] == m['backend_start']['fds']
    assert 'ringside soak: ok' in p.stdout
