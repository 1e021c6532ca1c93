# SPDX-License-Identifier: MIT
"""Application processors: started from the MADT on every boot path.

Each boot runs QEMU with -smp N under TCG (QEMU 7.2 runs x86 TCG one
thread per vCPU by default: MTTCG, no option needed) and reads back from
the guest how many CPUs came online, with each CPU's APIC id as the MADT
lists it and as the CPU read it from its own LAPIC. Then the key cpus=N,
and the existing commands (and a reboot) with the APs up.
"""

import os
import re
import struct
import time

import pytest

from conftest import ELF, ESP, ISO, require_image
from ringside_qemu import READY_TIMEOUT, info_fields
from smp_checks import assert_all_online, assert_ping_counts, cpu_table, cpus_stats, smp_args

BOOT_PATHS = {
        'pvh': (ELF, ['--boot', 'elf']),
        'iso-bios': (ISO, ['--boot', 'iso', '--firmware', 'bios']),
        'iso-uefi': (ISO, ['--boot', 'iso', '--firmware', 'uefi']),
        'uefi-direct': (ESP, ['--firmware', 'uefi-direct']),
}
# QEMU names its threads (CPU 0/TCG, ...) with debug-threads=on
NAMED_THREADS = ['--qemu-arg=-name', '--qemu-arg=ringside,debug-threads=on']


def tcg_vcpu_threads(guest):
    """QEMU's TCG vCPU threads: one per vCPU under MTTCG, 'ALL CPUs/TCG' without."""
    task = '/proc/%d/task' % guest.launch.qemu.pid
    names = []
    for tid in os.listdir(task):
        try:
            with open(os.path.join(task, tid, 'comm')) as f:
                names.append(f.read().strip())
        except OSError:
            pass  # a thread that ended meanwhile
    return sorted(n for n in names if n.endswith('/TCG'))


@pytest.mark.parametrize('boot', ['pvh', 'iso-bios', 'iso-uefi'])
@pytest.mark.parametrize('ncpu', [1, 2, 4])
def test_bring_up(guest_factory, boot, ncpu):
    """Every CPU QEMU gives is online, and poweroff still ends QEMU."""
    image, args = BOOT_PATHS[boot]
    require_image(image)
    g = guest_factory(*args, *smp_args(ncpu), *NAMED_THREADS)
    assert tcg_vcpu_threads(g) == ['CPU %d/TCG' % i for i in range(ncpu)]
    assert_all_online(g, ncpu)
    assert g.poweroff() == 0


def test_bring_up_uefi_direct(guest_factory):
    """The GNU-EFI loader's path, at two CPUs."""
    require_image(ESP)
    g = guest_factory(*BOOT_PATHS['uefi-direct'][1], *smp_args(2))
    assert_all_online(g, 2)


def test_cpus_key_leaves_aps_offline(guest_factory):
    """cpus=1 with two CPUs in the MADT: the AP is listed, not started."""
    require_image(ELF)
    g = guest_factory('--boot', 'elf', '--cmdline', 'cpus=1', *smp_args(2))
    assert g.command('get cpus') == 'cpus=1'
    line = info_fields(g.command('info')).get('cpus')
    assert line == '1 online of 2 in MADT, 1 offline (cpus=1)', line
    rows = cpu_table(g)
    assert [(r[0], r[2]) for r in rows] == [(0, 'online'), (1, 'offline')], rows
    assert rows[1][3] == 'cpus=1', rows


def test_services_with_aps_up(guest_factory):
    """The boot test's commands with three APs halted beside the BSP; the
    MADT's CPUs QEMU lists as not present (maxcpus) are not counted. A
    reboot starts the APs again."""
    require_image(ELF)
    g = guest_factory('--boot', 'elf', '--cmdline', 'loglevel=5', *smp_args('4,maxcpus=6'))
    assert_all_online(g, 4)
    for cmd in ('help', 'mem', 'uptime', 'config', 'mem chunks', 'stats'):
        out = g.command(cmd)
        assert out and not out.startswith('error'), '%s: %r' % (cmd, out)
    assert g.command('set loglevel=6') == 'loglevel=6'
    assert g.command('get loglevel') == 'loglevel=6'
    assert g.command('cpus bogus').startswith('error: ')
    g.send('reboot\r')
    g.console.wait_ready(READY_TIMEOUT)
    assert g.command('get loglevel') == 'loglevel=5'
    assert_all_online(g, 4)
    assert g.poweroff() == 0


def test_missing_cpu_reported(guest_factory, tmp_path):
    """A firmware that lists CPUs that are not there: QEMU adds a second
    MADT (-acpitable) with two enabled local APICs no vCPU has. Each is
    reported once, after its timeout, and the boot goes on with the CPUs
    that exist."""
    require_image(ELF)
    body = struct.pack('<II', 0xfee00000, 0)  # LAPIC address, flags
    for apic in (7, 9):
        body += struct.pack('<BBBBI', 0, 8, apic, apic, 1)  # type 0, enabled
    table = tmp_path / 'phantom-madt.bin'
    table.write_bytes(body)
    g = guest_factory('--boot', 'elf', *smp_args(2), '--qemu-arg=-acpitable',
                      '--qemu-arg=sig=APIC,rev=4,oem_id=RSIDE,data=%s' % table)
    line = info_fields(g.command('info')).get('cpus')
    assert line == '2 online of 4 in MADT, 2 failed', line
    rows = cpu_table(g)
    assert [(r[1], r[2]) for r in rows] == [(0, 'online'), (1, 'online'), (7, 'failed'),
                                            (9, 'failed')], rows
    for index, apic in ((2, 7), (3, 9)):
        reports = re.findall(r'(?m)^smp: cpu %d \(apic id %d\) did not come up within \d+ ms; '
                             r'going on without it\r?$' % (index, apic), g.output)
        assert len(reports) == 1, g.output
    assert g.command('uptime').startswith('uptime: ')


@pytest.mark.parametrize('ncpu', [2, 4])
def test_cross_cpu_ping(guest_factory, ncpu):
    """Each AP runs its loop: it answers `cpus ping` through its rings and
    IPIs, and its own counters, fetched the same way, match the pings."""
    require_image(ELF)
    g = guest_factory('--boot', 'elf', *smp_args(ncpu))
    assert_all_online(g, ncpu)
    assert_ping_counts(g, ncpu, 50)


def test_cpus_ping_errors(guest_factory):
    """cpus=1: the AP is skipped with its state and there is nothing to
    ping; bad arguments are one error line each."""
    require_image(ELF)
    g = guest_factory('--boot', 'elf', '--cmdline', 'cpus=1', *smp_args(2))
    out = g.command('cpus ping')
    assert out.splitlines() == [
        'cpu 1 apic 1: offline, skipped',
        'error: cpus ping: no application processor online, nothing to ping'], out
    out = g.command('cpus stats').splitlines()
    assert out[0].startswith('cpu 0 apic 0: bsp, ') and out[1:] == [
        'cpu 1 apic 1: offline, skipped'], out
    for cmd, err in (('cpus ping 0', "N must be 1..100000, not '0'"),
                     ('cpus ping 100001', "N must be 1..100000, not '100001'"),
                     ('cpus ping -3', "N must be 1..100000, not '-3'"),
                     ('cpus ping abc', "N must be 1..100000, not 'abc'"),
                     ('cpus ping 1 2', "unexpected argument '2'"),
                     ('cpus stats now', "unexpected argument 'now'"),
                     ('cpus sleep 1 10', 'cpu 1 is offline'),
                     ('cpus busy 0 10', "CPU must be an AP, 1..1, not '0'"),
                     ('cpus sleep 1 0', "MS must be 1..60000, not '0'"),
                     ('cpus sleep 1 x', "MS must be 1..60000, not 'x'"),
                     ('cpus busy 1', 'usage: cpus busy CPU MS')):
        out = g.command(cmd)
        assert out == 'error: %s: %s' % (' '.join(cmd.split()[:2]), err), out
    assert g.command('cpus pong').startswith("error: cpus: unknown argument 'pong'")
    assert g.command('uptime').startswith('uptime: ')


def test_echo_answers_during_cpus_ping(guest_factory):
    """The BSP waits for each AP's reply in its poll loop: the vsock echo
    service answers while `cpus ping 100000` runs (a second or more under
    TCG, a round trip taking tens of microseconds). A wait that held the
    BSP would let no exchange finish before the ping's end; how many do
    depends on how fast the host runs both, so one is the bound."""
    from test_poll_loop import Background
    from test_vsock import ECHO, connect_when_up, echo_exchange, pattern

    require_image(ELF)
    g = guest_factory('--boot', 'elf', '--vsock', *smp_args(2))
    count, during = 100000, 0
    with connect_when_up(g.vsock_uds, ECHO) as s:
        start = len(g.output)
        ping = Background(g, 'cpus ping %d' % count, timeout=900)
        while ping.running:
            data = pattern(64, during)
            assert echo_exchange(s, data, timeout=60) == data
            # finished while the command had not printed its result yet
            if ping.running and 'round trips' not in g.output[start:]:
                during += 1
        out = ping.result(900)
    assert re.search(r'(?m)^cpu 1 apic 1: %d round trips' % count, out), out
    assert during >= 1, 'no echo while cpus ping ran'


SLEEP_LINE = re.compile(r'cpu 1 apic 1: slept (\d+) us of (\d+) ms, timer_ticks \+(\d+) '
                        r'halts \+(\d+)')


def test_ap_sleeps_on_its_own_timer(guest_factory):
    """The AP runs the poll loop with its own timer: `cpus sleep 1 300`
    adds a context on CPU 1 that asks to run when the time is up
    (poll_schedule_at); the AP halts and its own LAPIC timer (counted in
    its struct percpu) wakes it then, well before the watchdog's second.
    An AP that armed no timer, or the BSP's, would not answer or would
    count no tick."""
    require_image(ELF)
    g = guest_factory('--boot', 'elf', *smp_args(2))
    for ms in (300, 50):
        out = g.command('cpus sleep 1 %d' % ms, timeout=120)
        m = SLEEP_LINE.fullmatch(out.strip())
        assert m, out
        us, asked, ticks, halts = (int(v) for v in m.groups())
        assert asked == ms, out
        assert ms * 1000 <= us < ms * 1000 + 5000000, out
        assert ticks >= 1 and halts >= 1, out
    stats, _ = cpus_stats(g, 2)
    assert stats[1][4] >= 2, stats     # the AP's timer ticks: both sleeps
    assert stats[1][0] == 2, stats     # the two sleeps (stats copies before it counts)


def test_busy_ap_does_not_delay_bsp_echo(guest_factory):
    """One poll loop per CPU: while CPU 1 spins for 4 s inside a request
    (`cpus busy 1 4000`), the vsock echo on CPU 0 keeps answering, each
    exchange well within a bound."""
    from test_poll_loop import Background
    from test_vsock import ECHO, connect_when_up, echo_exchange, pattern

    require_image(ELF)
    g = guest_factory('--boot', 'elf', '--vsock', *smp_args(2))
    done = re.compile(r'(?m)^cpu 1 apic 1: busy (\d+) ms')
    during, worst = 0, 0.0
    with connect_when_up(g.vsock_uds, ECHO) as s:
        start = len(g.output)
        busy = Background(g, 'cpus busy 1 4000', timeout=300)
        while busy.running:
            t0 = time.monotonic()
            data = pattern(64, during)
            assert echo_exchange(s, data, timeout=60) == data
            if busy.running and not done.search(g.output[start:]):
                during += 1
                worst = max(worst, time.monotonic() - t0)
        out = busy.result(300)
    m = done.search(out)
    assert m and int(m.group(1)) >= 4000, out
    assert during >= 5, 'only %d echoes while CPU 1 was busy' % during
    assert worst < 2.0, 'an echo took %.2f s while CPU 1 was busy' % worst
