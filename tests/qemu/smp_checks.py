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
