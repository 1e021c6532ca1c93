# SPDX-License-Identifier: MIT
"""bench: boot ringside with a vsock device and print benchmark tables.

Boots the appliance (`ringside run --vsock`: QEMU's vhost-user-vsock-pci
with build/host/ringside-vhost-vsock as the back end), waits for
'ringside: ready', then runs build/host/ringside-bench against the guest's
services: a ping-pong table (echo, port 1234) and a stream table (sink 1235
for h2g, source 1236 for g2h). With --ab KEY=A,B the guest is switched with
`set KEY=...` between A and B before every cell, so both sides of a switch
are measured interleaved in one boot. Guest counters (`stats virtio-vsock`)
around each ping-pong cell give kicks and interrupts per round trip.

With --cost the guest runs under the ringside-cost QEMU plugin (docs/benchmarks.md,
cost accounting), boots as an ELF with `irq=msix idle=halt` (so waiting is a
halt, not instructions) and every cell gets cost columns: guest
instructions per round trip (ping-pong) or per KiB (stream), halts and
interrupts per operation and, with --cost=io=on, I/O accesses and notify
writes per operation. The idle rate is measured just before each cell and
taken off for the time the guest spent halted in the cell, where it is
noise (ringside/cost_measure.cell_cost); the operation
count is what ringside-bench reports (round trips including warm-up, bytes
/ 1024). With --ab the cost delta of every switch is printed with its
spread over --rounds.

With --attach uds:PATH|cid:N|tcp:HOST:PORT nothing is booted: the tables
are measured against a guest somebody else started (its services on the
usual ports), through that hybrid-vsock socket, AF_VSOCK CID or TCP
forward. Without its console there are no guest counters and no switching,
so --ab, --cost, --tools, --vsock-perf and launcher options are refused.

With --vsock-perf (the kernel's vhost-vsock only: a KVM host, host/nested)
the kernel's own vsock_perf measures the guest too, beside ringside-bench
(ringside/bench_vsock_perf.py); `--vsock-perf ringside,linux` then boots the
Linux baseline guest and measures it the same way.

Absolute numbers under TCG mean little; compare ratios within one run.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import ringside as rr

from .. import bench_vsock_perf, cost, kvm_exits, measure
from ..ab import Switcher, ab_switch, label, variants
from ..backends import refuse_missing
from ..bench_tools import (SocatForwards, forward_args, print_tools, print_tools_stream,
                           run_tools, run_tools_stream)
from ..benchlib import BENCH, REPO, Progress, run_bench, vsock_target, wait_target
from ..cli import LAUNCHER_EPILOG, Parser, size_list
from ..cost_measure import Meter, settle, spread
from ..guest_stats import config_all, config_changed, guest_stats, virtio_bars
from ..images import LINUX_INITRD
from ..linux_guest import linux_launch_args
from ..results import Cells, add_options, publish
from ..table import Column, Table

NAME = 'bench'
SUMMARY = 'the main job: ping-pong and stream tables (make bench)'
GROUP = 'measure'
ALIASES = ('bench-vsock',)
PROG = 'ringside bench'

COST_CMDLINE = 'irq=msix idle=halt'
TOP_FUNCTIONS = 10


def attach_target(text):
    """--attach uds:PATH|cid:N|tcp:HOST:PORT -> (text, ringside-bench's
    target arguments, the hybrid socket or None)."""
    kind, _, rest = text.partition(':')
    if kind == 'uds' and rest:
        return text, ['--uds', rest], rest
    if kind == 'cid' and rest.isdigit() and 3 <= int(rest) < 0xffffffff:
        return text, ['--cid', rest], None
    host, _, port = rest.rpartition(':')
    if kind == 'tcp' and host and port.isdigit() and 0 < int(port) < 65536:
        return text, ['--tcp', rest], None
    raise argparse.ArgumentTypeError('expected uds:PATH, cid:N or tcp:HOST:PORT: %r' % text)


def parse_args(argv):
    p = Parser(prog=PROG, usage='%(prog)s [options] [-- launcher options]',
               description='Boot ringside with vsock and print ping-pong and stream tables.',
               epilog=LAUNCHER_EPILOG)
    measure.add(p, sizes=size_list('64,512,4k'), count=300, warmup=30,
                length=size_list('4k,64k'), parallel=[1, 4], reverse=None, time=3.0, rounds=1,
                cost=None, exits=None, more=('warmup', 'exits'))
    p.add_argument('--ab', type=ab_switch, action='append', default=[], metavar='KEY=A,B',
                   help='switch KEY between values, interleaved (repeatable)')
    p.add_argument('--dirs', metavar='LIST', more=True,
                   help='stream directions, h2g and/or g2h (both; -R: g2h)')
    p.add_argument('--no-pingpong', action='store_true', help='leave out the ping-pong cells')
    p.add_argument('--no-stream', action='store_true', help='leave out the stream cells')
    p.add_argument('--tools', action='store_true', more=True,
                   help='also sockperf and iperf3 (-P, -R, --bidir) through the TCP forward, '
                        'ringside-bench forwarded vs direct (the forwarder\'s overhead; our '
                        'back end\'s --forward-tcp, or socat on the kernel\'s vhost-vsock)')
    p.add_argument('--vsock-perf', nargs='?', const='ringside', metavar='GUESTS', more=True,
                   help='also the kernel\'s vsock_perf (make vsock-perf), h2g to the sink and '
                        'g2h from a guest connecting out, beside ringside-bench stream, per '
                        '--length, --dirs and --rounds; GUESTS: ringside (default) or '
                        'ringside,linux (then the Linux guest in a boot of its own); needs the '
                        'kernel\'s vhost-vsock (a KVM host, ringside nested)')
    p.add_argument('--vsock-perf-bytes', type=size_list, default=[32 << 20], metavar='N',
                   more=True, help='bytes vsock_perf sends (h2g) and the Linux guest sends '
                                   '(g2h) per cell (32m)')
    p.add_argument('--boot', choices=['iso', 'elf'], metavar='iso|elf', more=True,
                   help='boot the ISO (default) or the ELF via -kernel')
    p.add_argument('--attach', type=attach_target, metavar='uds:PATH|cid:N|tcp:HOST:PORT',
                   more=True,
                   help='boot nothing: measure a running guest through this hybrid socket, '
                        'AF_VSOCK CID or TCP forward to its echo (tcp: --no-stream); no '
                        'console: no guest counters, --ab, --cost, --tools')
    add_options(p)
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.no_pingpong and opts.no_stream and not opts.vsock_perf:
        p.error('--no-pingpong and --no-stream leave nothing to measure')
    if opts.attach:
        # nothing here reaches the guest's console
        refused = [name for name, given in (
                ('--ab', opts.ab), ('--cost', opts.cost is not None), ('--tools', opts.tools),
                ('--vsock-perf', opts.vsock_perf), ('--boot', opts.boot),
                ('launcher options', opts.launcher_args)) if given]
        if refused:
            p.error('--attach measures a guest without its console: %s cannot apply'
                    % ', '.join(refused))
        if opts.attach[1][0] == '--tcp' and not opts.no_stream:
            p.error('--attach tcp: reaches one guest port (a forward to the echo, 1234): '
                    'add --no-stream')
    opts.boot = opts.boot or 'iso'
    if opts.exits and opts.cost is not None:
        p.error('--cost counts instructions under TCG, --exits VM exits under KVM: one of them')
    why = kvm_exits.available() if opts.exits else None
    if why:
        p.error('--exits: cannot count VM exits here: %s' % why)
    if opts.reverse and opts.dirs is not None:
        p.error('-R is --dirs g2h: give one of them')
    if opts.reverse and opts.no_stream and not opts.vsock_perf:
        p.error('-R reverses the stream cells: not with --no-stream')
    dirs = ('g2h' if opts.reverse else opts.dirs or 'h2g,g2h').split(',')
    if any(d not in ('h2g', 'g2h') for d in dirs):
        p.error('--dirs takes h2g and/or g2h')
    opts.dirs = dirs
    if opts.vsock_perf:
        guests = opts.vsock_perf.split(',')
        if guests not in (['ringside'], ['ringside', 'linux']):
            p.error('--vsock-perf takes ringside or ringside,linux')
        opts.vsock_perf = guests
        why = bench_vsock_perf.available()
        if not why and not os.path.exists('/dev/vhost-vsock'):
            why = ('vsock_perf speaks AF_VSOCK only: needs the kernel\'s vhost-vsock '
                   '(/dev/vhost-vsock: a KVM host, or ringside nested)')
        if not why and 'linux' in guests and not os.path.exists(LINUX_INITRD):
            why = '%s missing (make linux-guest)' % LINUX_INITRD
        if why:
            p.error('--vsock-perf: ' + why)
    if len(opts.vsock_perf_bytes) != 1 or opts.vsock_perf_bytes[0] <= 0:
        p.error('--vsock-perf-bytes takes one size')
    opts.vsock_perf_bytes = opts.vsock_perf_bytes[0]
    if opts.cost is not None:
        opts.boot = 'elf'   # the cost cmdline reaches ELF boots only
    opts.launch = None if opts.attach else launcher_options(p, opts)
    return opts


def launcher_options(p, opts):
    """The boot's launcher options, checked before anything boots: with
    --tools a back end that forwards TCP (ours) or the kernel's
    vhost-vsock (socat forwards there)."""
    largs = ['--vsock', '--boot', opts.boot, '--accel', 'auto']
    if opts.cost is not None:
        opts.cost_block = os.path.join(tempfile.mkdtemp(prefix='ringside-bench-cost-'),
                                       'guest.cost')
        largs += ['--cmdline', COST_CMDLINE, '--cost-block',
                  opts.cost_block + (',' + opts.cost if opts.cost else '') + ',prof=on']
    opts.forward_ports = {}
    if opts.tools:
        fwd_args, opts.forward_ports = forward_args()
        lopts = rr.parse_args(largs + opts.launcher_args)
        if lopts.vsock_transport != 'kernel':
            why = refuse_missing(lopts, ['forward'], '--tools')
            if why:
                p.error(why)
            largs += fwd_args
    return rr.parse_args(largs + opts.launcher_args)


class Guest(Switcher):
    """The booted guest: switches, and its vsock queues' counters."""

    def __init__(self, launch):
        super().__init__(launch.console, PROG)
        self.launch = launch
        self.qemu_pid = launch.qemu.pid if launch.qemu else None

    def queue_counters(self):
        """{'rxq'|'txq'|'evq': {'kicks': N, 'interrupts': N, ...}}"""
        return guest_stats(self.console, 60, 'virtio-vsock')['virtio-vsock']['queues']


def irq_total(before, after):
    return sum(after[q]['interrupts'] - before[q]['interrupts'] for q in after if q in before)


def add_queue_deltas(res, before, after, rounds):
    for q in ('txq', 'rxq'):
        if q in before and q in after:
            res[q + '_kicks_per_rt'] = (after[q]['kicks'] - before[q]['kicks']) / rounds
            res[q + '_irqs_per_rt'] = (after[q]['interrupts'] - before[q]['interrupts']) / rounds
            # notifications the device owed and never sent (the guest's idle watchdog)
            res[q + '_missed_per_rt'] = (after[q].get('missed', 0)
                                         - before[q].get('missed', 0)) / rounds


def measured(meter, run, ops_of, guest, after_run=None):
    """run() with the guest's queue counters around it and, with a meter,
    the cost block bracketing it (the console commands stay outside).
    Without a guest (--attach): run() alone, no counters."""
    if guest is None:
        return run(), {}, {}
    before = guest.queue_counters()
    if meter is None:
        res = run()
        return res, before, guest.queue_counters()
    res, c = meter.measure(run, ops_of, after_run)
    after = guest.queue_counters()
    c['irqs'] = irq_total(before, after) / max(ops_of(res), 1e-9)
    res['cost'] = c
    return res, before, after


def with_exits(counter, run, ops_of):
    """run, or with an exit counter (--exits) run and the host's VM exits
    per operation by kind in its result's 'exits'."""
    if counter is None:
        return run

    def counted():
        before = counter.snapshot()
        res = run()
        res['exits'] = kvm_exits.delta(before, counter.snapshot(), ops_of(res))
        return res
    return counted


def pingpong_cell(guest, target, opts, size, meter=None):
    rounds = opts.count + opts.warmup
    args = ['pingpong'] + target + ['--size', str(size), '--count', str(opts.count),
                                    '--warmup', str(opts.warmup)]
    run = with_exits(opts.exit_counter, lambda: run_bench(args, 600, PROG)['results'][0],
                     lambda r: r['count'] + opts.warmup)
    res, before, after = measured(meter, run, lambda r: r['count'] + opts.warmup, guest)
    add_queue_deltas(res, before, after, rounds)
    if meter is not None and meter.symbols is not None:
        funcs = cost.by_function(meter.last_delta.profile, meter.symbols)
        top = sorted(funcs.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_FUNCTIONS]
        res['cost']['top'] = [(name, n / rounds) for name, n in top]
    return res


def stream_cell(target, opts, direction, length, streams, guest=None, meter=None):
    port = '1235' if direction == 'h2g' else '1236'
    args = ['stream'] + target + ['--port', port, '--dir', direction, '-l', str(length),
                                  '-P', str(streams), '--time', str(opts.time)]
    if meter is not None and guest.qemu_pid:
        args += ['--cpu-pids', str(guest.qemu_pid)]   # efficiency: Mb/s per CPU %

    run = with_exits(opts.exit_counter, lambda: run_bench(args, opts.time * 10 + 120, PROG),
                     lambda r: max(r['bytes'], 1) / float(1 << 20))
    if meter is None:
        return run()
    # h2g: the span waits until the guest has drained what was sent
    drain = (lambda: settle(meter.block, meter.rate)) if meter and direction == 'h2g' else None
    return measured(meter, run, lambda r: r['bytes'] / 1024.0, guest, drain)[0]


def cost_columns(unit, io, irqs=True):
    cols = [Column('insn/' + unit, 9, '%.0f'), Column('hlt/' + unit, 7, '%.2f')]
    if irqs:
        cols.append(Column('irq/' + unit, 7, '%.2f'))
    if io:
        cols += [Column('io/' + unit, 7, '%.2f'), Column('ntf/' + unit, 7, '%.2f')]
    return cols + [Column('idle/s', 9, '%.0f'), Column('idle/' + unit, 8, '%.0f')]


def cost_cells(r, io, irqs=True):
    c = r.get('cost')
    if not c:
        return [None] * len(cost_columns('', io, irqs))
    cells = [c['insns'], c['halts']] + ([c.get('irqs', 0)] if irqs else [])
    if io:
        cells += [c['io'], c['notify']]
    return cells + [c['idle_rate'], c['idle_per_op']]


EXIT_KINDS = ('exits', 'hlt', 'notify', 'apic', 'pio', 'msr')


def exits_columns(unit, rows):
    if not any('exits' in r for _, r in rows):
        return []
    return [Column(k if k != 'exits' else 'exit/' + unit, 7, '%.2f') for k in EXIT_KINDS]


def exits_cells(r, rows):
    e = r.get('exits')
    return [e[k] for k in EXIT_KINDS] if e else [None] * len(exits_columns('', rows))


def has_io(rows):
    return any(r.get('cost', {}).get('io') for _, r in rows)


def percentile(value, count, fraction):
    """A percentile, or None when count samples cannot give it: the 99th
    needs 100, the 99.9th 1000 (below that it is just the largest)."""
    return value if count * (1 - fraction) >= 1 - 1e-9 else None


def print_pingpong(rows):
    io = has_io(rows)
    cost_on = any('cost' in r for _, r in rows)
    t = Table([Column('config', 28, left=True), Column('size', 7, '%d'),
               Column('rounds', 7, '%d'), Column('1st perc', 9, '%.0f'),
               Column('50th', 9, '%.0f'), Column('mean', 10, '%.1f'),
               Column('99th', 9, '%.0f'), Column('99.9th', 9, '%.0f'),
               Column('max', 9, '%.0f'), Column('kick/rt', 8, '%.2f'),
               Column('irq/rt', 8, '%.2f'), Column('miss/rt', 8, '%.4f')]
              + (cost_columns('rt', io, False) if cost_on else []) + exits_columns('rt', rows),
              title='\nping-pong (host-guest-host round trip), ns')
    for conf, r in rows:
        if 'txq_kicks_per_rt' in r or 'rxq_kicks_per_rt' in r:
            kicks = [r.get('txq_kicks_per_rt', 0) + r.get('rxq_kicks_per_rt', 0),
                     r.get('txq_irqs_per_rt', 0) + r.get('rxq_irqs_per_rt', 0),
                     r.get('rxq_missed_per_rt', 0)]
        else:
            kicks = [None, None, None]   # no guest counters (--attach)
        n = r['count']
        t.row(conf, r['size'], n, percentile(r['p1'], n, 0.99), r['p50'], r['mean'],
              percentile(r['p99'], n, 0.99), percentile(r['p99_9'], n, 0.999), r['max'],
              *kicks, *(cost_cells(r, io, False) if cost_on else []), *exits_cells(r, rows))
    t.print()
    if any(r['count'] < 1000 for _, r in rows):
        print("- : too few rounds for that percentile (the 1st and 99th need 100, the "
              "99.9th 1000)")


def print_stream(rows):
    io = has_io(rows)
    cost_on = any('cost' in r for _, r in rows)
    t = Table([Column('config', 28, left=True), Column('dir', 4), Column('len', 7, '%d'),
               Column('P', 3, '%d'), Column('total', 9, '%.3f'), Column('jain', 6, '%.3f'),
               Column('slowest', 8, '%.3f')]
              + (cost_columns('KiB', io) if cost_on else []) + exits_columns('MiB', rows)
              + [Column('per stream', gap='  ', left=True)],
              title='\nstream throughput, Gb/s (G = 10^9)')
    for conf, r in rows:
        t.row(conf, r['dir'], r['len'], r['parallel'], r['gbps'], r.get('jain', 0),
              r.get('slowest_gbps', 0), *(cost_cells(r, io) if cost_on else []),
              *exits_cells(r, rows), ' '.join('%.3f' % g for g in r['streams_gbps']))
    t.print()


def print_cost_notes(results):
    pp = [r for _, r in results['pingpong'] if r.get('cost', {}).get('top')]
    # only these hold (label, row) pairs; the --tools rows are plain rows
    if not any('cost' in r for k in ('pingpong', 'stream') for _, r in results[k]):
        return
    print('\ncost: guest instructions per operation (ringside-cost plugin), idle wake-ups '
          'taken off: idle/s is\nthe idle rate measured before the cell, idle/op the '
          'instructions taken off per operation\n(the idle rate for the time the guest '
          'spent halted in the cell)')
    if pp:
        conf, r = next((c, r) for c, r in results['pingpong'] if r.get('cost', {}).get('top'))
        print('top %d guest functions of the first %d B cell (%s), instructions per round '
              'trip:' % (TOP_FUNCTIONS, r['size'], conf))
        for name, n in r['cost']['top']:
            print('  %-40s %10.1f' % (name[:40], n))


def kicks(r):
    return r.get('txq_kicks_per_rt', 0) + r.get('rxq_kicks_per_rt', 0)


def cost_ab(a, b):
    """The cost delta of one A/B cell over rounds: medians of A and B
    instructions per operation, B - A in %, and each side's spread (%)."""
    ia = [r['cost']['insns'] for r in a if 'cost' in r]
    ib = [r['cost']['insns'] for r in b if 'cost' in r]
    if not ia or not ib:
        return None
    ma, mb = statistics.median(ia), statistics.median(ib)
    return {'a': ma, 'b': mb, 'delta_pct': 100.0 * (mb - ma) / ma if ma else float('nan'),
            'spread_a': spread(ia), 'spread_b': spread(ib), 'rounds': min(len(ia), len(ib))}


def cost_delta(a, b, unit):
    d = cost_ab(a, b)
    if d is None:
        return ''
    return '  insn/%s %.0f -> %.0f (%+.1f %%, spread %.1f %% / %.1f %%)' % (
            unit, d['a'], d['b'], d['delta_pct'], d['spread_a'], d['spread_b'])


def print_ratios(results, combos):
    """Medians over rounds of every other configuration against the first,
    as ratios: the numbers worth comparing under TCG."""
    base = label(combos[0])
    print('\nA/B: medians over rounds, each configuration against %s (ratio = X / A)' % base)
    for other in (label(c) for c in combos[1:]):
        print('%s vs %s' % (other, base))
        for size in sorted({r['size'] for _, r in results['pingpong']}):
            a = [r for c, r in results['pingpong'] if c == base and r['size'] == size]
            b = [r for c, r in results['pingpong'] if c == other and r['size'] == size]
            p50a = statistics.median(r['p50'] for r in a)
            p50b = statistics.median(r['p50'] for r in b)
            p1a = statistics.median(r['p1'] for r in a)
            p1b = statistics.median(r['p1'] for r in b)
            print('  ping-pong %6d B  p1 %.2f  p50 %.2f  kicks/rt %.2f -> %.2f' % (
                    size, p1b / p1a, p50b / p50a, statistics.median(map(kicks, a)),
                    statistics.median(map(kicks, b))) + cost_delta(a, b, 'rt'))
        cells = sorted({(r['dir'], r['len'], r['parallel']) for _, r in results['stream']})
        for d, length, par in cells:
            def gbps(conf):
                return statistics.median(r['gbps'] for c, r in results['stream']
                                         if c == conf and (r['dir'], r['len'], r['parallel'])
                                         == (d, length, par))

            def rows(conf):
                return [r for c, r in results['stream'] if c == conf
                        and (r['dir'], r['len'], r['parallel']) == (d, length, par)]
            a, b = gbps(base), gbps(other)
            print('  stream %s %6d B x%d  %.3f -> %.3f Gb/s  ratio %.2f' % (
                    d, length, par, a, b, b / a if a else float('nan'))
                  + cost_delta(rows(base), rows(other), 'KiB'))


def run_cells(opts, guest, target, meter, results):
    """Every ping-pong and stream cell, --ab combinations interleaved;
    `guest` None: attached, nothing switched or counted."""
    combos = variants(opts.ab)
    cells = ((0 if opts.no_pingpong else len(opts.sizes)) + (0 if opts.no_stream else len(
        opts.dirs) * len(opts.length) * len(opts.parallel))) * len(combos) * opts.rounds
    progress = Progress(PROG, cells)
    for _ in range(opts.rounds):
        if not opts.no_pingpong:
            for size in opts.sizes:
                for combo in combos:
                    if guest:
                        guest.apply(combo, target)
                    progress.step('ping-pong %d B %s' % (size, label(combo)))
                    res = pingpong_cell(guest, target, opts, size, meter)
                    results['pingpong'].append((label(combo), res))
        if not opts.no_stream:
            for d in opts.dirs:
                for length in opts.length:
                    for streams in opts.parallel:
                        for combo in combos:
                            if guest:
                                guest.apply(combo, target)
                            progress.step('stream %s %d B x%d %s'
                                          % (d, length, streams, label(combo)))
                            res = stream_cell(target, opts, d, length, streams, guest, meter)
                            results['stream'].append((label(combo), res))


def cells_of(results):
    """The run's cells (results.py): per configuration its figures, a
    sample per round."""
    cells = Cells()
    for conf, r in results['pingpong']:
        config = {'cell': 'ping-pong', 'switch': conf, 'size': r['size']}
        n = r['count']
        for metric, value in (('p1', percentile(r['p1'], n, 0.99)), ('p50', r['p50']),
                              ('mean', r['mean']), ('p99', percentile(r['p99'], n, 0.99))):
            cells.add(config, metric, 'ns', value, 'lower')
        add_cost_cells(cells, config, r, 'rt')
    for conf, r in results['stream']:
        config = {'cell': 'stream', 'switch': conf, 'dir': r['dir'], 'len': r['len'],
                  'parallel': r['parallel']}
        cells.add(config, 'total', 'Gb/s', r['gbps'], 'higher')
        add_cost_cells(cells, config, r, 'KiB')
    return cells


def add_cost_cells(cells, config, r, unit):
    if 'cost' in r:
        cells.add(config, 'insn/' + unit, 'insn', r['cost']['insns'], 'lower')
    if 'exits' in r:
        cells.add(config, 'exits/' + unit, 'exits', r['exits']['exits'], 'lower')


def print_results(opts, results):
    if results['pingpong']:
        print_pingpong(results['pingpong'])
    if results['stream']:
        print_stream(results['stream'])
    print_cost_notes(results)
    if opts.ab:
        print_ratios(results, variants(opts.ab))
    if results.get('tools'):
        print_tools(results['tools'])
    if results.get('tools_stream'):
        print_tools_stream(results['tools_stream'], opts.time)
    if results.get('vsock_perf'):
        bench_vsock_perf.print_rows(results['vsock_perf'], opts.vsock_perf_bytes, opts.time)
    publish(PROG, opts, results, cells_of(results), accel=results.get('accel'),
            guest_config=results.get('config'), vsock=results.get('vsock'))


def run_all_tools(opts, guest, target, results):
    """--tools: the back end's forwards, or socat's to the kernel's vhost-vsock.
    A tool that fails leaves the guest's counters on stderr: its side of
    the story (iperf3's steps and timeouts, the queues)."""
    ports = opts.forward_ports
    forwards = SocatForwards(int(target[1]), ports, PROG) if target[0] == '--cid' else None
    try:
        if not opts.no_pingpong:
            results['tools'] = run_tools(opts, target, ports, PROG)
        if not opts.no_stream:
            results['tools_stream'] = run_tools_stream(opts, target, ports, PROG)
    except SystemExit:
        try:
            counters = guest.command('stats')
        except rr.LaunchError as e:
            counters = 'none: %s' % e
        sys.stderr.write('%s: the guest\'s counters: %s\n' % (PROG, counters))
        raise
    finally:
        if forwards:
            forwards.close()


def run_attached(opts):
    """--attach: the cells against a guest that runs already."""
    text, target, uds = opts.attach
    wait_target(target, PROG)
    print('%s: attach %s, %s' % (PROG, text, time.strftime('%Y-%m-%d %H:%M')))
    results = {'pingpong': [], 'stream': [], 'attach': text}
    run_cells(opts, None, target, None, results)
    print_results(opts, results)
    return 0


def main(argv):
    opts = parse_args(argv)
    opts.argv = argv
    if not os.access(BENCH, os.X_OK):
        raise SystemExit('%s: %s not found (run make)' % (PROG, BENCH))
    try:
        opts.exit_counter = kvm_exits.ExitCounter() if opts.exits else None
    except kvm_exits.ExitsUnavailable as e:
        raise SystemExit('%s: error: --exits: %s' % (PROG, e))
    try:
        return run_attached(opts) if opts.attach else run_booted(opts)
    finally:
        if opts.exit_counter:
            opts.exit_counter.close()


def header(accel, boot, lopts, target, changed):
    """The one line before the tables: where it ran, and the keys not at
    their defaults (every key is in the saved run)."""
    device = ("kernel vhost-vsock" if target[0] == '--cid' else
              'back end ' + (lopts.backend or os.path.basename(lopts.backend_cmd[0])))
    keys = ' '.join('%s=%s' % kv for kv in changed.items()) or 'all at their defaults'
    return '%s: accel %s, %s boot, %s, %s; keys: %s' % (
            PROG, accel, boot, device, time.strftime('%Y-%m-%d %H:%M'), keys)


def run_booted(opts):
    """Boot the guest, run every cell, print the tables."""
    lopts = opts.launch
    meter = None
    accel = rr.choose_accel(lopts)
    if opts.exit_counter and accel != 'kvm':
        raise SystemExit('%s: error: --exits counts KVM\'s exits, and the guest would run '
                         'under TCG (--accel %s)' % (PROG, lopts.accel))
    log = open(os.path.join(REPO, 'build', 'bench-qemu.log'), 'w')
    results = {'pingpong': [], 'stream': [], 'accel': accel, 'boot': lopts.boot}
    with rr.Launch(lopts, accel, qemu_stderr=log) as launch:
        launch.wait_ready()
        guest = Guest(launch)
        if opts.cost is not None:
            meter = Meter(opts.cost_block,
                          cost.elf_symbols(os.path.join(REPO, 'build', 'ringside.elf')),
                          writable=True)
            if 'io=on' in opts.cost:
                # notifies: stores into the virtio BARs
                meter.block.set_notify(virtio_bars(launch.console, 60))
        target = vsock_target(launch, PROG)
        results['config'] = config_all(launch.console, 60)
        results['vsock'] = {'target': target, 'backend': None if target[0] == '--cid'
                            else lopts.backend or lopts.backend_cmd[0]}
        print(header(accel, lopts.boot, lopts, target, config_changed(launch.console, 60)))
        run_cells(opts, guest, target, meter, results)
        if opts.tools:
            run_all_tools(opts, guest, target, results)
        if opts.vsock_perf:
            if target[0] != '--cid':
                raise SystemExit('%s: --vsock-perf: the guest is not on the kernel\'s '
                                 'vhost-vsock (-- --vsock-transport kernel)' % PROG)
            console = launch.console
            results['vsock_perf'] = bench_vsock_perf.run_guest(
                'ringside', target, lambda port, buf, gone: bench_vsock_perf.ringside_send(
                    console, port, buf, max(1, round(opts.time)), gone), opts, PROG)
        results['guest_counters'] = guest_stats(launch.console, 60)
        launch.poweroff()
    if opts.vsock_perf and 'linux' in opts.vsock_perf:
        results['vsock_perf'] += run_linux_vsock_perf(opts, accel)
    print_results(opts, results)
    return 0


def run_linux_vsock_perf(opts, accel):
    """--vsock-perf ringside,linux: the Linux guest's cells, in its own boot
    with the same launcher options."""
    lopts = rr.parse_args(['--vsock', '--accel', accel] + linux_launch_args('linux')
                          + opts.launcher_args)
    log = open(os.path.join(REPO, 'build', 'bench-linux.log'), 'w')
    with rr.Launch(lopts, accel, qemu_stderr=log) as launch:
        launch.wait_ready(linux=True)
        target = vsock_target(launch, PROG)
        console = launch.console
        return bench_vsock_perf.run_guest(
            'linux', target, lambda port, buf, gone: bench_vsock_perf.linux_send(
                console, port, opts.vsock_perf_bytes, buf, gone), opts, PROG)
