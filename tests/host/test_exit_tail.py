# SPDX-License-Identifier: MIT
"""exits --tail and --floor without KVM: the variants, the cells'
arguments, and the reading of the host's exit trace (the lost halt)."""

import re

import pytest

from conftest import usage_error
from ringside import exit_floor, exit_tail
from ringside.commands import exits

INTR, VINTR, HLT = 0x60, 0x64, 0x78
HLT_RIP = 0x1045e1


def exit_line(ns, tid, reason, rip, intr_rip):
    return 'X %d %d %x %x %x\n' % (ns, tid, reason, rip, intr_rip)


def inj_line(ns, tid, vector):
    return 'I %d %d %d\n' % (ns, tid, vector)


def write_trace(tmp_path, lines):
    path = tmp_path / 'bt.txt'
    path.write_text('Attaching 3 probes...\n' + ''.join(lines))
    return str(path)


def test_a_lost_halt_lasts_to_the_next_injection(tmp_path):
    """The nested stall: the window opens at the RIP the INTR exit stopped
    on, the injection, a HLT exit at that same RIP, and the guest sleeps
    until the next injection 900 ms later."""
    path = write_trace(tmp_path, [
        exit_line(1000, 7, VINTR, HLT_RIP, HLT_RIP),
        inj_line(2000, 7, 33),
        exit_line(3000, 7, HLT, HLT_RIP, HLT_RIP),
        exit_line(4000, 8, HLT, 0x5000, 0),          # another vCPU, not counted
        inj_line(900003000, 7, 236),
    ])
    breaks, lost = exit_tail.analyse_shadow(path)
    assert breaks == 1
    assert lost == [900.0]


def test_a_shadow_break_the_guest_survives_is_no_lost_halt(tmp_path):
    """The fixed guest: the interrupt lands on the hlt, the entry returns
    past it, and the next exit is elsewhere (no HLT at that RIP)."""
    path = write_trace(tmp_path, [
        exit_line(1000, 7, VINTR, HLT_RIP, HLT_RIP),
        inj_line(2000, 7, 33),
        exit_line(3000, 7, 0x400, 0x104000, HLT_RIP),
        exit_line(5000, 7, HLT, HLT_RIP, HLT_RIP),
        inj_line(9000, 7, 33),
    ])
    assert exit_tail.analyse_shadow(path) == (1, [])


def test_a_window_elsewhere_is_no_shadow_break(tmp_path):
    """A window that opens at another RIP than the INTR exit's (the guest
    had interrupts off and enabled them later) is KVM's usual wait."""
    path = write_trace(tmp_path, [
        exit_line(1000, 7, VINTR, 0x104100, HLT_RIP),
        inj_line(2000, 7, 33),
        exit_line(3000, 7, HLT, 0x104100, HLT_RIP),
        inj_line(9000, 7, 33),
    ])
    assert exit_tail.analyse_shadow(path) == (0, [])


def test_variants():
    assert exit_tail.parse_variant('ringside') == ('ringside', 'ringside', None, '')
    assert exit_tail.parse_variant('ringside@/tmp/old.elf:idle_guard=0,tick=periodic') == (
        'ringside@old.elf idle_guard=0 tick=periodic', 'ringside', '/tmp/old.elf',
        'idle_guard=0 tick=periodic')
    assert exit_tail.parse_variant('linux:nohz=off')[3] == 'nohz=off'
    for bad in ('windows', 'ringside:idle', 'linux@/tmp/x.elf'):
        with pytest.raises(ValueError):
            exit_tail.parse_variant(bad)


def test_tail_and_floor_refuse_what_they_set_themselves(capsys):
    for argv in (['--tail', '10', '--floor'], ['--shadow'], ['--floor', '--cmdline', 'a=b'],
                 ['--tail', '10', '--variant', 'ringside:x']):
        assert usage_error(capsys, exits.parse_args, argv).startswith(
            'ringside exits: error:')


def test_floor_cells_poll_where_they_say():
    opts = exits.parse_args(['--floor', '--poll-us', '0,500'])
    devices = exit_floor.device_list(opts)
    assert devices == ['vhost-vsock', 'ours', 'ours --poll', 'vhost-net', 'vhost-net p500']
    polled = exit_floor.launcher_args('ringside', 'ours --poll',
                                      exit_floor.guest_keys('ringside', True))
    assert '--vsock-arg=--poll' in polled
    assert polled[polled.index('--cmdline') + 1] == 'idle=poll irq=poll'
    net = exit_floor.launcher_args('ringside', 'vhost-net p500', '')
    assert any('vhost=on,poll-us=500' in a for a in net)
    assert net[net.index('--cmdline') + 1].startswith('ip=')
    assert '--vsock' not in exit_floor.launcher_args('ringside', 'vhost-net', '')


def test_a_failed_variant_keeps_the_others(capsys):
    """A variant with no figures is named with its reason under the rows
    of the variants that ran; one lost part way keeps the chunks it ran."""
    good = {'round trips': 3, 'p50 us': 400.0, 'p99 us': 900.0, 'p99.9 us': 950.0,
            'max ms': 1.0, 'over 10 ms': 0, 'over 100 ms': 0, 'whole s': 1.5}
    cut = dict(good, **{'round trips': 2, 'lost': 'timed out after 2 round trips'})
    exit_tail.print_tail({'ringside': good, 'linux': {'failed': 'pingpong timed out'},
                          'linux-6.12': cut}, False)
    out = capsys.readouterr().out
    assert 'linux-6.12: 2 round trips, then: timed out after 2 round trips' in out
    assert re.search(r'^ringside\s+400\s+900\s+950\s+1\.0\s+0\s+0\s+1\.5', out, re.M), out
    assert 'linux: no figures: pingpong timed out' in out
    assert not re.search(r'^linux\s+\d', out, re.M), out
