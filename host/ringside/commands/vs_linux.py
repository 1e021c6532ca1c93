# SPDX-License-Identifier: MIT
"""vs-linux: ringside vs a Linux guest on the same QEMU, back end and client.

For each ring layout (the device's packed=off|on) and back-end mode (sleeping
on eventfds, or --poll), boot ringside and then the Linux baseline guest
(build/linux-guest, Debian's kernel with a static echo/sink/source server on
the same ports) behind build/host/ringside-vhost-vsock, run the same
ringside-bench ping-pong and stream cells against each, and print both with
the ratio ringside/Linux per cell. Latency ratios below 1 and throughput
ratios above 1 favour ringside.

--guests picks who boots, in order (ringside,linux by default): ringside
and the Linux guests of images.LINUX_GUESTS, `linux` (Debian's 6.1, `make
linux-guest`) and `linux-6.12` (Debian's 6.12, `make linux-guest-6.12`).
Each value column after the first gets the ratio first/that guest; with
both Linux guests a last ratio 6.12/6.1 gives seed 000's before (6.1, no
TX fast path) and after (6.12, mainline since v6.12) in the same run:
`ringside nested vs-linux --guests ringside,linux,linux-6.12 --exits
-- --vsock-transport kernel`.

Needs `make` and `make linux-guest`. Under TCG only the ratios mean much,
and one boot's cells move a lot on a busy 2-core host: --rounds N boots
each pair N times, alternating which guest goes first, and prints per cell
the median of the N ratios with their lowest and highest. --cmdline adds
configuration keys to ringside's command line (e.g. idle=poll), so one
invocation measures a configuration other than the defaults. --baseline
ELF boots a second ringside (another build's build/ringside.elf) in every
round too, with the same keys, and adds its column and the ratio
ringside/baseline: whether a change made any cell worse, measured in one
run against the same QEMU, back end, client and Linux.

With the launcher's `-- --vsock-transport kernel` (or by default where KVM
and /dev/vhost-vsock are: a KVM host, host/nested) both guests get the
kernel's vhost-vsock (`vhost-vsock-pci`) instead of our back end: one config,
"split kernel" (the kernel's back end has no poll mode, and Linux 6.1's
vhost no packed ring), the client on AF_VSOCK, and with --exits every cell
also gets the VM exits per operation the host counted (ringside/kvm_exits.py).

With --cost both guests run under the ringside-cost plugin (docs/benchmarks.md,
cost accounting) and halt when idle (ringside with `irq=msix idle=halt`, Linux by
default); every cell also gets the guest's instructions, halts and
interrupts (the guest's own counters: ringside's `stats virtio-vsock`,
Linux's /proc/interrupts virtio lines) per round trip or per KiB, with the
idle rate measured before the cell (ringside/cost_measure.py).
"""

import argparse
import os
import statistics
import tempfile

import ringside as rr

from .. import kvm_exits, linux_guest, measure
from ..backends import refuse_missing
from ..benchlib import BENCH, REPO, Progress, booted, run_bench, vsock_target
from ..cli import LAUNCHER_EPILOG, Parser
from ..cost_measure import Meter, settle
from ..guest_stats import guest_stats, vsock_queue_sum
from ..images import is_linux, linux_guest as linux_images, linux_missing
from ..results import Cells, add_options, publish
from ..table import Column, Table

NAME = 'vs-linux'
SUMMARY = 'ringside against Linux guests: same QEMU, back end'
GROUP = 'measure'
ALIASES = ('bench-compare',)
PROG = 'ringside vs-linux'

COST_CMDLINE = 'irq=msix idle=halt'
CONFIGS = ('split sleep', 'split poll', 'packed sleep', 'packed poll')
KERNEL_CONFIG = 'split kernel'

# seed 000's before and after, when both are in --guests: the last ratio
BEFORE_AFTER = ('linux-6.12', 'linux')


def ringside_irqs(console):
    """Interrupts the ringside guest counted on its vsock queues."""
    return vsock_queue_sum(guest_stats(console, 60, 'virtio-vsock'), 'interrupts')


def cell(meter, irqs, run, ops_of, after_run=None, exits=None):
    """run() alone, or bracketed by the cost block and the guest's
    interrupt count, or by the host's VM exits: (result, cost dict or None)."""
    if exits is not None:
        before = exits.snapshot()
        res = run()
        return res, {'exits': kvm_exits.delta(before, exits.snapshot(), ops_of(res))['exits']}
    if meter is None:
        return run(), None
    before = irqs()
    res, c = meter.measure(run, ops_of, after_run)
    c['irqs'] = (irqs() - before) / max(ops_of(res), 1e-9)
    return res, c


def measure_guest(target, opts, meter=None, irqs=None, exits=None):
    """One guest's cells: {(kind, size/len, dir): value}; with a meter also
    {('insn/op' etc., size/len, dir): value}, with an exit counter
    {('exits/op', size/len, dir): value}."""
    cells = {}
    groups = [opts.sizes] if meter is None and exits is None else [[s] for s in opts.sizes]
    for sizes in groups:
        args = ['pingpong'] + target + ['--size', ','.join(map(str, sizes)),
                                        '--count', str(opts.count),
                                        '--warmup', str(opts.warmup)]
        pp, c = cell(meter, irqs, lambda: run_bench(args, 900, PROG),
                     lambda r: len(r['results']) * (opts.count + opts.warmup), exits=exits)
        for r in pp['results']:
            # seed 000's table: 1st percentile, mean and 99th percentile
            for k in ('p1', 'p50', 'mean', 'p99'):
                cells[(k + ' ns', r['size'], '')] = r[k]
            add_cost(cells, c, r['size'], '', 'rt')
    for d, port in (('h2g', 1235), ('g2h', 1236)):
        if d not in opts.dirs:
            continue
        for length in opts.length:
            for par in opts.parallel:
                args = ['stream'] + target + ['--port', str(port), '--dir', d,
                                              '-l', str(length), '-P', str(par),
                                              '--time', str(opts.time)]
                drain = (lambda: settle(meter.block, meter.rate)) if meter and d == 'h2g' \
                    else None
                st, c = cell(meter, irqs, lambda: run_bench(args, opts.time * 10 + 120, PROG),
                             lambda r: r['bytes'] / 1024.0, drain, exits)
                where = d if par == 1 else '%s x%d' % (d, par)
                cells[('Gb/s', length, where)] = st['gbps']
                add_cost(cells, c, length, where, 'KiB')
    return cells


def median_ratio(a, b):
    """[median, lowest, highest] of the per-round ratios a[i] / b[i]."""
    ratios = [x / y if y else float('nan') for x, y in zip(a, b)]
    return [statistics.median(ratios), min(ratios), max(ratios)]


def add_cost(cells, c, size, d, unit):
    if c is None:
        return
    if 'exits' in c:
        # exits are few: per MiB streamed, as the exits and bench commands give them
        if unit == 'KiB':
            cells[('exits/MiB', size, d)] = c['exits'] * 1024
        else:
            cells[('exits/' + unit, size, d)] = c['exits']
        return
    cells[('insn/' + unit, size, d)] = c['insns']
    cells[('hlt/' + unit, size, d)] = c['halts']
    cells[('irq/' + unit, size, d)] = c['irqs']
    cells[('idle/s', size, d)] = c['idle_rate']


def run_guest(accel, which, packed, poll, opts, exits=None):
    if opts.kernel:
        args = ['--vsock', '--accel', accel, '--vsock-transport', 'kernel']
    else:
        args = ['--vsock', '--accel', accel, '--vsock-transport', 'vhost-user',
                '--qemu-arg=-global',
                '--qemu-arg=vhost-user-vsock-pci.packed=%s' % ('on' if packed else 'off')]
    if poll:
        args.append('--vsock-arg=--poll')
    if opts.cost is not None:
        block = os.path.join(tempfile.mkdtemp(prefix='ringside-compare-cost-'), 'guest.cost')
        args += ['--cost-block', block + (',' + opts.cost if opts.cost else '')]
    if is_linux(which):
        args += linux_guest.linux_launch_args(which)
    else:
        args += ['--boot', 'elf']
        if which == 'baseline':
            args += ['--kernel', opts.baseline]
        cmdline = ' '.join(w for w in (COST_CMDLINE if opts.cost is not None else '',
                                       opts.cmdline) if w)
        if cmdline:
            args += ['--cmdline', cmdline]
    lopts = rr.parse_args(args + opts.launcher_args)
    with booted(lopts, accel, 'vs-linux-' + which, linux=is_linux(which)) as launch:
        target = vsock_target(launch, PROG)
        if opts.cost is None:
            return measure_guest(target, opts, exits=exits)
        meter = Meter(block)
        irqs = linux_guest.virtio_irqs if is_linux(which) else ringside_irqs
        try:
            return measure_guest(target, opts, meter, lambda: irqs(launch.console))
        finally:
            meter.close()


def compare(accel, guests, opts, exits):
    """Every config, every round, every guest: (rows, what --json keeps,
    the cells: each guest's figure per round)."""
    rows, out, cells = [], {}, Cells()
    progress = Progress(PROG, len(opts.configs) * opts.rounds * len(guests))
    for conf in opts.configs:
        packed, poll = conf.startswith('packed'), conf.endswith('poll')
        rounds = []
        for n in range(opts.rounds):
            # rotate who boots first, so a drifting host load is shared
            order = guests[n % len(guests):] + guests[:n % len(guests)]
            res = {}
            for w in order:
                progress.step('%s, round %d, %s' % (conf, n + 1, w))
                res[w] = run_guest(accel, w, packed, poll, opts, exits)
            rounds.append(res)
        out[conf] = [{w: {'%s %s %s' % k: v for k, v in res[w].items()} for w in res}
                     for res in rounds]
        for key in rounds[0][guests[0]]:
            rows.append([conf, key] + row_values(
                    {w: [res[w][key] for res in rounds] for w in guests}, guests))
            metric, size, where = key
            for w in guests:
                for res in rounds:
                    cells.add({'cell': 'vs-linux', 'config': conf, 'guest': w, 'size': size,
                               'dir': where}, metric, metric.split()[-1]
                              if ' ' in metric else metric, res[w][key], _better(metric))
    return rows, out, cells


def _better(metric):
    return 'higher' if metric == 'Gb/s' else 'lower'


def row_values(cols, guests):
    """The first guest's median, then per other guest its median and the
    ratio first/it [median, lowest, highest]; with both Linux guests last
    the ratio 6.12/6.1 (seed 000: after/before)."""
    first = cols[guests[0]]
    row = [statistics.median(first)]
    for w in guests[1:]:
        row.append(statistics.median(cols[w]))
        row += median_ratio(first, cols[w])
    if all(w in guests for w in BEFORE_AFTER):
        row += median_ratio(*(cols[w] for w in BEFORE_AFTER))
    return row


def pick_configs(p, opts, base):
    """--configs against the back end: the kernel's has one (no poll mode,
    and Linux 6.1's vhost no packed ring), ours four, a back end of your
    own the two that do not add our back end's --poll to its command."""
    if opts.kernel:
        if opts.configs not in (None, KERNEL_CONFIG):
            p.error('the kernel\'s vhost-vsock has one config, %r' % KERNEL_CONFIG)
        if opts.cost is not None:
            p.error('--cost counts instructions under TCG; on the kernel\'s vhost-vsock '
                    'use --exits')
        opts.configs = [KERNEL_CONFIG]
        return
    if opts.exits:
        p.error('--exits needs the kernel\'s vhost-vsock under KVM (-- --vsock-transport '
                'kernel)')
    polls = refuse_missing(base, ['poll'], 'a poll configuration')
    default = [c for c in CONFIGS if not (polls and c.endswith('poll'))]
    opts.configs = [c.strip() for c in opts.configs.split(',')] if opts.configs else default
    if any(c not in CONFIGS for c in opts.configs):
        p.error('--configs takes %s' % ', '.join(CONFIGS))
    if polls and any(c.endswith('poll') for c in opts.configs):
        p.error(polls)
    opts.poll_note = polls and 'poll configurations left out: %s' % polls


def build_parser():
    p = Parser(prog=PROG, description=__doc__.split('\n')[0],
               usage='%(prog)s [options] [-- launcher options]', epilog=LAUNCHER_EPILOG)
    measure.add(p, guests='ringside,linux', sizes=[64, 512, 4096], count=500, warmup=50,
                length=[65536], parallel=[1], reverse=None, time=3.0, rounds=1, cost=None,
                exits=None, more=('warmup', 'length', 'parallel', 'reverse'))
    p.add_argument('--configs', metavar='LIST',
                   help='ring layout and back-end mode (split sleep, split poll, packed '
                        'sleep, packed poll: all four; your --backend: no poll)')
    p.add_argument('--cmdline', default='', metavar='KEYS',
                   help='keys added to ringside\'s command line, e.g. "idle=poll"')
    p.add_argument('--baseline', metavar='ELF', more=True,
                   help='also boot this ringside ELF (another build) every round and '
                        'print ringside/baseline per cell')
    add_options(p)
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    return p


def main(argv):
    p = build_parser()
    opts = p.parse_args(argv)
    opts.argv = argv
    opts.dirs = ['g2h'] if opts.reverse else ['h2g', 'g2h']
    if opts.baseline and not os.path.isfile(opts.baseline):
        p.error('--baseline %s: no such file' % opts.baseline)
    if any('=' not in w for w in opts.cmdline.split()):
        p.error('--cmdline takes KEY=VALUE words, e.g. "idle=poll tick=periodic"')
    if not os.path.exists(BENCH):
        p.error('%s missing: run make' % os.path.relpath(BENCH, REPO))
    for w in opts.guests:
        if is_linux(w) and linux_missing(w):
            p.error(linux_missing(w))
    if 'ringside' not in opts.guests and (opts.baseline or opts.cmdline):
        p.error('--baseline and --cmdline need ringside in --guests')
    # the launcher options, checked before anything boots
    base = rr.parse_args(['--vsock', '--boot', 'elf'] + opts.launcher_args)
    opts.kernel = base.vsock_transport == 'kernel' or (
            base.vsock_transport == 'auto' and rr.kvm_usable()
            and os.path.exists('/dev/vhost-vsock'))
    pick_configs(p, opts, base)
    accel = 'kvm' if rr.kvm_usable() and rr.probe_kvm(base) else 'tcg'
    if opts.exits and accel != 'kvm':
        raise SystemExit('%s: error: --exits counts KVM\'s exits, and the guests would run '
                         'under TCG (the KVM probe did not reach ready)' % PROG)
    guests = opts.guests + (['baseline'] if opts.baseline else [])
    try:
        exits = kvm_exits.ExitCounter() if opts.exits else None
    except kvm_exits.ExitsUnavailable as e:
        raise SystemExit('%s: error: --exits: %s' % (PROG, e))
    try:
        rows, out, cells = compare(accel, guests, opts, exits)
    finally:
        if exits:
            exits.close()

    print('%s: %s, same QEMU (%s), back end (%s) and client; %d round%s%s'
          % (PROG, ' vs '.join(guests), accel,
             "kernel vhost-vsock" if opts.kernel else base.backend or 'ringside-vhost-vsock',
             opts.rounds, '' if opts.rounds == 1 else 's (medians)',
             '; ringside cmdline: ' + opts.cmdline if opts.cmdline else ''))
    if opts.poll_note:
        print(opts.poll_note)
    if opts.baseline:
        print('baseline: %s (same keys); vs base: ringside/baseline' % opts.baseline)
    for w in guests:
        if is_linux(w):
            print('%s: %s' % (w, os.path.relpath(linux_images(w)[0], REPO)))
    print_rows(rows, guests)
    # [config, [metric, size, dir], first guest, then per other guest its
    # value, ratio, lowest, highest] (ringside, linux, ratio, lowest,
    # highest by default; --baseline adds baseline, ratio, lowest,
    # highest), with linux and linux-6.12 last 6.12/6.1, lowest, highest
    out['rows'] = [[row[0], list(row[1])] + row[2:] for row in rows]
    out['columns'] = guests
    publish(PROG, opts, out, cells, accel=accel)
    return 0


SHORT = {'ringside': 'rs', 'linux': '6.1', 'linux-6.12': '6.12', 'baseline': 'base'}


def print_rows(rows, guests):
    """The table: a value column per guest, after each but the first the
    ratio first/it and its range; last 6.12/6.1 when both are there."""
    others = [w for w in guests[1:] if w != 'baseline']
    cols = [Column('config', 14, left=True), Column('metric', 8, left=True),
            Column('size', 6, '%d'), Column('dir', 4), Column(guests[0], 12, '%.3f')]
    for w in guests[1:]:
        if w == 'baseline':
            name = 'vs base'
        elif len(others) == 1:
            name = 'ratio'
        else:
            name = '%s/%s' % (SHORT[guests[0]], SHORT[w])
        cols += [Column(w, 12, '%.3f'), Column(name, 8, '%.2f'),
                 Column('ratio range' if name == 'ratio' else 'range', 15)]
    before_after = all(w in guests for w in BEFORE_AFTER)
    if before_after:
        cols += [Column('6.12/6.1', 8, '%.2f'), Column('range', 15)]
    t = Table(cols)

    def span(lo, hi):
        return '%7.2f-%-7.2f' % (lo, hi)
    for row in rows:
        conf, (metric, size, d) = row[:2]
        cells = [conf, metric, size, d, row[2]]
        rest = row[3:]
        for _ in guests[1:]:
            cells += [rest[0], rest[1], span(*rest[2:4])]
            rest = rest[4:]
        if before_after:
            cells += [rest[0], span(*rest[1:3])]
        t.row(*cells)
    t.print()
