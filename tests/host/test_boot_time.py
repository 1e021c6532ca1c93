# SPDX-License-Identifier: MIT
"""boot-time: a boot the nested hypervisor lost is counted and left out of
the times; any other boot that never got ready is still an error."""

import pytest

import ringside as rr
from ringside import vcpu_watch
from ringside.commands import boot_time

BOOTS = [('iso', ['--boot', 'iso']), ('elf', ['--boot', 'elf'])]


def fake_boots(monkeypatch, outcomes):
    """one_boot() answers from `outcomes`, in order: seconds or an exception."""
    outcomes = iter(outcomes)

    def one_boot(args, accel, timeout):
        got = next(outcomes)
        if isinstance(got, Exception):
            raise got
        return got / 10, got
    monkeypatch.setattr(boot_time, 'one_boot', one_boot)


def test_lost_boots_are_counted_not_timed(monkeypatch, capsys):
    lost = rr.GuestTimeout("no 'ringside: ready' after 120 s; last output: ''; %s: the "
                           "guest's vCPU runs with code (RIP 0xc070320c) ..." % vcpu_watch.LOST)
    fake_boots(monkeypatch, [1.0, lost, 2.0, 3.0])
    ready, first, lost_count, failed = boot_time.sample(BOOTS, [], 'kvm', 2, 120, 10)
    assert ready == {'iso': [1.0, 2.0], 'elf': [3.0]}
    assert first == {'iso': [0.1, 0.2], 'elf': [0.3]}
    assert lost_count == {'iso': 0, 'elf': 1} and failed == {'iso': 0, 'elf': 0}
    assert 'round 1/2  elf        lost: %s' % vcpu_watch.LOST in capsys.readouterr().err


def test_other_timeouts_stay_errors(monkeypatch):
    fake_boots(monkeypatch, [1.0, rr.GuestTimeout("no 'ringside: ready' after 120 s")])
    with pytest.raises(rr.GuestTimeout):
        boot_time.sample(BOOTS, [], 'kvm', 1, 120, 10)


def test_keep_going_counts_them(monkeypatch, capsys):
    fake_boots(monkeypatch, [rr.GuestTimeout("no 'ringside: ready' after 120 s"), 2.0])
    ready, _, lost, failed = boot_time.sample(BOOTS, [], 'kvm', 1, 120, 10, keep_going=True)
    assert ready == {'iso': [], 'elf': [2.0]}
    assert lost == {'iso': 0, 'elf': 0} and failed == {'iso': 1, 'elf': 0}
    assert "round 1/1  iso        failed: no 'ringside: ready'" in capsys.readouterr().err


def test_the_table_has_a_lost_column_under_kvm(monkeypatch, capsys):
    lost = rr.GuestTimeout('no ready; %s: ...' % vcpu_watch.LOST)
    fake_boots(monkeypatch, [1.0, 2.0, lost])
    assert boot_time.main(['--rounds', '1', '--accel', 'kvm', '--no-save']) == 0
    rows = {line.split('  ')[0]: line.split() for line in capsys.readouterr().out.splitlines()}
    assert rows['ISO + SeaBIOS (multiboot2-bios)'][-1] == '0'
    assert rows['ELF via -kernel (pvh)'][-5:] == ['-', '-', '-', '-', '1'], rows
    assert 'failed' not in rows['boot'], rows['boot']


def test_ways_choose_the_boots(monkeypatch, capsys):
    fake_boots(monkeypatch, [1.0, 2.0])
    assert boot_time.main(['--rounds', '1', '--ways', 'pvh,bios', '--no-save']) == 0
    out = capsys.readouterr().out
    assert 'ISO + SeaBIOS' in out and 'ELF via -kernel' in out and 'OVMF' not in out, out


def test_unknown_ways_are_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        boot_time.main(['--ways', 'bios,grub'])
    assert e.value.code == 2
    assert ("--ways: expected some of bios,uefi,pvh,uefi-direct, got 'bios,grub'"
            in capsys.readouterr().err)


def test_launcher_options_reach_every_boot(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(boot_time, 'one_boot',
                        lambda args, accel, timeout: seen.append(args) or (0.1, 1.0))
    assert boot_time.main(['--rounds', '1', '--ways', 'bios,pvh', '--no-save', '--',
                           '--vsock', '--vsock-transport', 'kernel']) == 0
    assert len(seen) == 2 and all(a[-3:] == ['--vsock', '--vsock-transport', 'kernel']
                                  for a in seen), seen
