# SPDX-License-Identifier: MIT
"""boot-time: seconds from QEMU's start to the guest's 'ringside: ready'.

Boots each way N times (round robin, so a busy machine slows all of them
alike), takes the median, prints a table. Time 0 is just before QEMU is
executed; the end is when the chunk of serial output holding the ready line
arrived (the reader thread stamps each chunk). QEMU is killed after each
boot. The ways: SeaBIOS and OVMF booting the ISO (GRUB, multiboot2), the
ELF by -kernel (PVH), and OVMF starting the GNU-EFI image straight from
the ESP (uefi-direct); with both uefi ways the table is followed by
direct / GRUB.

Under KVM on the nested host (host/nested) a boot now and then never gets
there: the nested hypervisor loses the vCPU's state, or the vCPU stops
before ringside runs (vcpu_watch.py). Such a boot is counted in the
table's `lost` column and left out of the times; any other boot that does
not reach the ready line is an error, or with --keep-going is counted in
the `failed` column.
"""

import argparse
import re
import statistics
import subprocess
import sys

import ringside as rr

from .. import measure, vcpu_watch
from ..cli import LAUNCHER_EPILOG, Parser, positive_float
from ..results import Cells, add_options, publish
from ..table import Column, Table

NAME = 'boot-time'
SUMMARY = "seconds from QEMU's start to ready, per boot path"
GROUP = 'measure'
ALIASES = ('boot-time',)
PROG = 'ringside boot-time'

# --ways name: (table name, launcher options)
BOOTS = {
        'bios': ('ISO + SeaBIOS (multiboot2-bios)', ['--boot', 'iso', '--firmware', 'bios']),
        'uefi': ('ISO + OVMF (multiboot2-uefi)', ['--boot', 'iso', '--firmware', 'uefi']),
        'pvh': ('ELF via -kernel (pvh)', ['--boot', 'elf', '--firmware', 'bios']),
        'uefi-direct': ('OVMF direct (ESP, uefi-direct)', ['--firmware', 'uefi-direct']),
}
DEFAULT_WAYS = ('bios', 'uefi', 'pvh')


def one_boot(args, accel, timeout):
    """(seconds to first serial byte, seconds to READY) for one boot."""
    opts = rr.parse_args(args)
    launch = rr.Launch(opts, accel, qemu_stderr=subprocess.DEVNULL)
    try:
        launch.start()
        m = launch.console.wait_for(re.escape(rr.READY), timeout, what="'%s'" % rr.READY)
        first = launch.console.arrival_time(1) - launch.started_at
        ready = launch.console.arrival_time(m.end()) - launch.started_at
        return first, ready
    finally:
        launch.stop()


def sample(boots, common, accel, runs, timeout, width, keep_going=False):
    """Every way of `boots` (name, launcher options) booted `runs` times
    round robin: ({name: [seconds to READY]}, {name: [seconds to the first
    byte]}, {name: boots lost to the nested hypervisor}, {name: other boots
    that never got ready, counted with `keep_going`}); a line on stderr
    per boot, the name in `width` columns."""
    ready = {name: [] for name, _ in boots}
    first = {name: [] for name, _ in boots}
    lost = {name: 0 for name, _ in boots}
    failed = {name: 0 for name, _ in boots}
    for run in range(runs):
        for name, args in boots:
            try:
                f, r = one_boot([*args, *common], accel, timeout)
            except rr.GuestTimeout as e:
                text = str(e)
                why = vcpu_watch.below_us(text)
                if why:
                    lost[name] += 1
                    text = 'lost: ' + why
                elif keep_going:
                    failed[name] += 1
                    text = 'failed: ' + text
                else:
                    raise
                print('round %d/%d  %-*s %s' % (run + 1, runs, width, name, text),
                      file=sys.stderr, flush=True)
                continue
            ready[name].append(r)
            first[name].append(f)
            print('round %d/%d  %-*s %.3f s' % (run + 1, runs, width, name, r),
                  file=sys.stderr, flush=True)
    return ready, first, lost, failed


def main(argv=None):
    p = Parser(prog=PROG, description=__doc__.split('\n\n')[0],
               usage='%(prog)s [options] [-- launcher options]',
               epilog='Runs round robin; the table shows median, min and max over the rounds.\n'
                      + LAUNCHER_EPILOG)
    measure.add(p, rounds=5)
    p.add_argument('--ways', metavar='LIST', default=','.join(DEFAULT_WAYS),
                   help='which boots, of %s (%s)' % (','.join(BOOTS), ','.join(DEFAULT_WAYS)))
    p.add_argument('--accel', choices=('tcg', 'kvm', 'auto'), default='tcg', metavar='A',
                   help='tcg, kvm or auto (probes KVM once, before the rounds) (tcg)')
    p.add_argument('--smp', metavar='N[,N...]',
                   help="each way with -smp N for each N (default: one CPU)")
    p.add_argument('--keep-going', action='store_true',
                   help='count boots that never get ready, do not stop')
    p.add_argument('--machine', choices=('q35', 'pc'), default='q35', metavar='q35|pc',
                   more=True, help='the machine type (q35)')
    p.add_argument('--memory', default='512M', metavar='SIZE', more=True,
                   help="the guest's memory (512M)")
    p.add_argument('--timeout', type=positive_float, default=120.0, metavar='S', more=True,
                   help='seconds per boot (120)')
    add_options(p)
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.argv = argv
    ways = a.ways.split(',')
    unknown = [w for w in ways if w not in BOOTS]
    if unknown or not ways:
        p.error('--ways: expected some of %s, got %r' % (','.join(BOOTS), a.ways))
    boots = [BOOTS[w] for w in BOOTS if w in ways]
    if a.smp:
        try:
            counts = [int(n) for n in a.smp.split(',')]
        except ValueError:
            counts = []
        if not counts or min(counts) < 1:
            p.error('--smp wants CPU counts >= 1, e.g. 1,2,4: %r' % a.smp)
        boots = [('%s, -smp %d' % (name, n), [*args, '--qemu-arg=-smp', '--qemu-arg=%d' % n])
                 for name, args in boots for n in counts]

    common = ['--machine', a.machine, '--memory', a.memory, '--timeout', str(a.timeout),
              *a.launcher_args]
    accel = a.accel
    if accel == 'auto':
        accel = rr.choose_accel(rr.parse_args(['--boot', 'elf', *common]))

    width = max(34, max(len(name) for name, _ in boots))
    try:
        samples, first, lost, failed = sample(boots, common, accel, a.rounds, a.timeout, width,
                                              a.keep_going)
    except rr.LaunchError as e:
        print('%s: error: %s' % (PROG, e), file=sys.stderr)
        return e.status

    print("%s: QEMU start -> 'ringside: ready', median of %d, -accel %s, -machine %s, -m %s"
          % (PROG, a.rounds, accel, a.machine, a.memory))
    columns = [Column('boot', width, left=True), Column('median', 9, '%.3f s'),
               Column('min', 9, '%.3f s'), Column('max', 9, '%.3f s'),
               Column('first byte', 13, '%.3f s')]
    tallies = [(head, tally) for head, tally, shown in (('lost', lost, accel == 'kvm'),
                                                        ('failed', failed, a.keep_going))
               if shown]
    columns += [Column(head, 7, '%d') for head, _ in tallies]
    t = Table(columns)
    cells = Cells()
    for name, _ in boots:
        s = samples[name]
        times = [statistics.median(s), min(s), max(s),
                 statistics.median(first[name])] if s else [None] * 4
        t.row(name, *times, *[tally[name] for _, tally in tallies])
        cells.extend({'cell': 'boot', 'boot': name}, 'ready', 's', s, 'lower')
    t.print()
    result = {'accel': accel, 'machine': a.machine, 'memory': a.memory, 'rounds': a.rounds,
              'unit': 's',
              'boots': [{'boot': name, 'ready': samples[name], 'first_output': first[name],
                         'median': (statistics.median(samples[name])
                                    if samples[name] else None),
                         'lost': lost[name], 'failed': failed[name]} for name, _ in boots]}
    grub, direct = (samples.get(BOOTS[w][0]) for w in ('uefi', 'uefi-direct'))
    if grub and direct and not a.smp:
        g, d = statistics.median(grub), statistics.median(direct)
        print('direct / GRUB: %.2f (saves %.3f s)' % (d / g, g - d))
        result['direct_over_grub'] = d / g
    publish(PROG, a, result, cells, accel=accel)
    return 0
