# SPDX-License-Identifier: MIT
"""./ringside reboots --reboots 10: one back end
stays up while the guest reboots (`reboot` on the console, QEMU resets);
every boot serves the echo byte-exact and the back end's fds, mappings and
private memory stay flat. The check is tested on made-up samples first."""

import json
import os
import subprocess
import sys

import pytest

from ringside_qemu import FRONT_DOOR, REPO

sys.path.insert(0, os.path.join(REPO, 'host'))
from ringside.commands import reboots as re_mod  # noqa: E402

ACCEL = os.environ.get('RINGSIDE_TEST_ACCEL', 'tcg')
SAMPLE = {'rss_kib': 1900, 'anon_kib': 150, 'fds': 14, 'maps': 27, 'host_conns': 0,
          'echo_ok': True}


def test_failures_catch_leaks():
    assert re_mod.failures([SAMPLE, SAMPLE], 256, True) == []
    for last, what in ((dict(SAMPLE, fds=15), 'fds'), (dict(SAMPLE, maps=29), 'maps'),
                       (dict(SAMPLE, anon_kib=150 + 257), 'RssAnon'),
                       (dict(SAMPLE, echo_ok=False), 'echo'),
                       (dict(SAMPLE, host_conns=1), 'host connection')):
        fails = re_mod.failures([SAMPLE, SAMPLE, last], 256, True)
        assert any(what in f for f in fails), (what, fails)
    assert re_mod.failures([SAMPLE, SAMPLE], 256, False) == ['the back end exited']
    # RssAnon counts from the first reboot (the warm-up), fds and maps from boot 1
    warm = dict(SAMPLE, anon_kib=450)
    assert re_mod.failures([SAMPLE, warm, dict(warm, anon_kib=450 + 256)], 256, True) == []
    fails = re_mod.failures([SAMPLE, warm, dict(warm, anon_kib=450 + 257)], 256, True)
    assert any('RssAnon' in f for f in fails), fails
    fails = re_mod.failures([SAMPLE, dict(warm, fds=15), dict(warm, fds=15)], 256, True)
    assert any('fds' in f for f in fails), fails
    c = {'vu_connects': 1, 'vu_bad_msgs': 0, 'ring_errors': 0, 'conns_host': 11,
         'conns_closed': 11}
    assert re_mod.counter_failures(c) == []
    for bad, what in (({'vu_connects': 2}, 'connected'), ({'ring_errors': 1}, 'ring_errors'),
                      ({'conns_closed': 10}, 'closed')):
        fails = re_mod.counter_failures(dict(c, **bad))
        assert any(what in f for f in fails), (what, fails)


@pytest.mark.slow
@pytest.mark.parametrize('cpus', [1, 2])
def test_ten_reboots(tmp_path, cpus):
    """Ten reboots on one CPU, and with a second one started on every boot."""
    out = tmp_path / 'reboots.json'
    p = subprocess.run([sys.executable, FRONT_DOOR, 'reboots', '--reboots', '10', '--seed', '5',
                        '--json', str(out),
                        '--', '--accel', ACCEL, '--qemu-arg=-smp', '--qemu-arg=%d' % cpus],
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    with open(out) as f:
        r = json.load(f)['result']
    samples = r['samples']
    assert r['failures'] == [] and len(samples) == 11
    assert [s['cpus'] for s in samples] == [cpus] * 11
    assert all(s['echo_ok'] for s in samples)
    # a fresh random payload each boot, not the same bytes again
    assert len({s['sha256'] for s in samples}) == 11
    assert samples[-1]['fds'] == samples[0]['fds']
    assert samples[-1]['maps'] == samples[0]['maps']
    c = r['counters']
    assert c['vu_connects'] == 1 and c['ring_errors'] == 0
    assert c['conns_host'] == c['conns_closed'] >= 22   # a probe and an echo per boot
    assert 'ringside reboots: ok' in p.stdout
