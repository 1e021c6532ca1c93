# SPDX-License-Identifier: MIT
"""What the guest says about its CPUs (`info`, `cpus`, the boot line),
checked the same way by tests/qemu/test_smp.py (TCG) and
tests/kvm/test_kvm_smp.py (KVM)."""

import re

from ringside_qemu import info_fields

CPU_LINE = re.compile(r'(?m)^cpu (\d+) apic (\d+) (\w+)(.*)$')


def smp_args(spec):
    return ['--qemu-arg=-smp', '--qemu-arg=%s' % spec]


def cpu_table(guest):
    """`cpus` as [(index, MADT apic id, state, rest of the line)]."""
    out = guest.command('cpus')
    rows = [(int(i), int(a), s, rest.strip()) for i, a, s, rest in CPU_LINE.findall(out)]
    assert rows and len(rows) == len(out.splitlines()), out
    return rows


def assert_all_online(guest, n):
    line = info_fields(guest.command('info')).get('cpus')
    assert line == '%d online of %d in MADT' % (n, n), line
    started = r' \(APs started in \d+\.\d ms\)' if n > 1 else ''
    assert re.search(r'(?m)^\r?smp: %d online of %d in MADT%s\r?$' % (n, n, started),
                     guest.output)
    rows = cpu_table(guest)
    assert [r[0] for r in rows] == list(range(n)), rows
    assert all(r[2] == 'online' for r in rows), rows
    assert len({r[1] for r in rows}) == n, 'APIC ids not distinct: %r' % rows
    assert rows[0][3] == 'bsp', rows
    for _, apic, _, rest in rows[1:]:
        # the id the AP read from its own LAPIC is the one the MADT gave
        m = re.fullmatch(r'lapic (\d+) up (\d+) us', rest)
        assert m and int(m.group(1)) == apic, rows


PING_LINE = re.compile(r'(?m)^cpu (\d+) apic (\d+): (\d+) round trips, min (\d+) p50 (\d+) '
                       r'max (\d+) ns\r?$')
STATS_LINE = re.compile(r'(?m)^cpu (\d+) apic (\d+): messages (\d+) ipis (\d+) halts (\d+) '
                        r'dropped (\d+) timer_ticks (\d+)\r?$')
BSP_LINE = re.compile(r'(?m)^cpu 0 apic (\d+): bsp, requests (\d+) replies (\d+) '
                      r'ipis (\d+)\r?$')
# a round trip under TCG on a busy host may stall, but not for a second
PING_MAX_NS = 1000000000


def cpus_ping(guest, ncpu, count, timeout=300):
    """`cpus ping COUNT`: every AP answers COUNT times, min <= p50 <= max,
    all of them above zero and below a second. Returns {cpu: p50 ns}."""
    out = guest.command('cpus ping %d' % count, timeout=timeout)
    rows = PING_LINE.findall(out)
    assert len(rows) == ncpu - 1 == len(out.splitlines()), out
    p50 = {}
    for cpu, apic, n, lo, mid, hi in rows:
        assert int(n) == count, out
        assert 0 < int(lo) <= int(mid) <= int(hi) < PING_MAX_NS, out
        p50[int(cpu)] = int(mid)
    assert sorted(p50) == list(range(1, ncpu)), out
    return p50


def cpus_stats(guest, ncpu):
    """`cpus stats`: {cpu: (messages, ipis, halts, dropped, timer_ticks)} for every AP,
    and the BSP's (requests, replies, wake-up IPIs taken) before the
    command."""
    out = guest.command('cpus stats')
    rows = STATS_LINE.findall(out)
    assert len(rows) == ncpu - 1 and len(out.splitlines()) == ncpu, out
    bsp = BSP_LINE.search(out)
    assert bsp, out
    stats = {int(r[0]): tuple(int(v) for v in r[2:]) for r in rows}
    assert sorted(stats) == list(range(1, ncpu)), out
    return stats, tuple(int(v) for v in bsp.groups()[1:])


def assert_ping_counts(guest, ncpu, count):
    """Fresh from boot: `cpus ping COUNT`, then each AP ran exactly COUNT
    requests, took at least one wake-up IPI and at most one per request
    (and one for the stats request itself: nothing is ever sent again),
    halted, dropped nothing; the BSP sent and got back COUNT per AP. The
    IPIs the BSP took may be fewer: a second IPI on a vector already
    pending in the LAPIC's IRR is one interrupt (SDM 3A 11.8.4), and the
    BSP may run a reply before that reply's IPI reaches it."""
    p50 = cpus_ping(guest, ncpu, count)
    stats, bsp = cpus_stats(guest, ncpu)
    assert bsp[:2] == (count * (ncpu - 1),) * 2, bsp
    assert 1 <= bsp[2] <= bsp[1], bsp
    # the stats requests were messages too: the next count includes them
    again, bsp_after = cpus_stats(guest, ncpu)
    assert all(s[0] == count + 1 for s in again.values()), again
    assert bsp_after[0] == bsp[0] + ncpu - 1, (bsp, bsp_after)
    for cpu, (msgs, ipis, halts, dropped, ticks) in stats.items():
        assert msgs == count, stats
        assert 1 <= ipis <= count + 1, (stats, bsp_after)
        # a halt ends on a wake-up IPI or on the AP's own timer (its watchdog)
        assert 1 <= halts <= ipis + ticks + 1, stats
        assert dropped == 0, stats
    return p50
