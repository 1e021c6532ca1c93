# SPDX-License-Identifier: MIT
"""bench-vsock: boot ringside with a vsock device and print benchmark tables.

Boots the appliance (host/ringside-run --vsock: QEMU's vhost-user-vsock-pci
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

from . import bench_vsock_perf, cost, kvm_exits
from .bench_tools import (SocatForwards, forward_args, print_tools, print_tools_stream, run_tools,
                          run_tools_stream)
from .benchlib import BENCH, REPO, Progress, run_bench, vsock_target, wait_target
from .cli import Parser, int_list, nonneg_int, positive_float, positive_int, size_list
from .cost_measure import Meter, settle, spread, virtio_bars
from .guest_stats import guest_stats
from .images import LINUX_INITRD, LINUX_KERNEL
from .results import add_options, publish
from .table import Column, Table

COST_CMDLINE = 'irq=msix idle=halt'
TOP_FUNCTIONS = 10

PROG = 'bench-vsock'


def ab_switch(text):
    key, sep, values = text.partition('=')
    choices = values.split(',')
    if not sep or not key or len(choices) < 2 or not all(choices):
        raise argparse.ArgumentTypeError('expected KEY=A,B (e.g. fastpath=1,0)')
    return key, choices


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
    p = Parser(
            prog='bench-vsock',
            description='Boot ringside with vsock and print ping-pong and stream tables.',
            epilog='Launcher options after "--" go to host/ringside-run '
                   '(e.g. -- --machine pc --firmware uefi, -- --backend CMD).')
    p.add_argument('--sizes', type=size_list, default=size_list('64,512,4k'),
                   help='ping-pong sizes (default 64,512,4k)')
    p.add_argument('--count', type=positive_int, default=300, help='round trips per size (300)')
    p.add_argument('--warmup', type=nonneg_int, default=30, help='unmeasured round trips (30)')
    p.add_argument('-l', '--length', '--lengths', dest='lengths',
                   type=size_list, default=size_list('4k,64k'),
                   help='stream buffer lengths (default 4k,64k)')
    p.add_argument('-P', '--parallel', '--streams', dest='streams', type=int_list, default=[1, 4],
                   help='parallel streams (default 1,4)')
    p.add_argument('--dirs', help='stream directions (h2g,g2h)')
    p.add_argument('-R', '--reverse', action='store_true',
                   help="iperf3's -R (the server sends, the client receives): the guest "
                        "sends, the host receives; only the g2h stream cells, as --dirs g2h")
    p.add_argument('-t', '--time',
                   type=positive_float, default=3.0, help='seconds per stream cell (3)')
    p.add_argument('--ab', type=ab_switch, action='append', default=[],
                   help='switch KEY between values, interleaved (repeatable)')
    p.add_argument('--rounds', type=positive_int, default=1,
                   help='repeat every A/B cell this many times (1)')
    p.add_argument('--no-pingpong', action='store_true', help='leave out the ping-pong cells')
    p.add_argument('--no-stream', action='store_true', help='leave out the stream cells')
    p.add_argument('--tools', action='store_true',
                   help='also sockperf and iperf3 (-P, -R, --bidir) through the TCP forward, '
                        'ringside-bench forwarded vs hybrid (the forwarder\'s overhead)')
    p.add_argument('--vsock-perf', nargs='?', const='ringside', metavar='GUESTS',
                   help='also the kernel\'s vsock_perf (make vsock-perf), h2g to the sink and '
                        'g2h from a guest connecting out, beside ringside-bench stream, per '
                        '--lengths, --dirs and --rounds; GUESTS: ringside (default) or '
                        'ringside,linux (then the Linux guest in a boot of its own); needs the '
                        'kernel\'s vhost-vsock (a KVM host, host/nested)')
    p.add_argument('--vsock-perf-bytes', type=size_list, default=[32 << 20], metavar='N',
                   help='bytes vsock_perf sends (h2g) and the Linux guest sends (g2h) '
                        'per cell (32m)')
    add_options(p)
    p.add_argument('--cost', nargs='?', const='', metavar='OPTS',
                   help='guest cost columns (the ringside-cost plugin; --cost=io=on also '
                        'counts I/O exits and notifies); boots the ELF with irq=msix '
                        'idle=halt')
    p.add_argument('--exits', action='store_true',
                   help='VM exits per operation by kind (KVM\'s tracepoints: a KVM host, or '
                        'host/nested; attached guests too if alone on this host)')
    p.add_argument('--boot', choices=['iso', 'elf'],
                   help='boot the ISO (default) or the ELF via -kernel')
    p.add_argument('--attach', type=attach_target, metavar='uds:PATH|cid:N|tcp:HOST:PORT',
                   help='boot nothing: measure a running guest through this hybrid socket, '
                        'AF_VSOCK CID or TCP forward to its echo (tcp: --no-stream); no '
                        'console: no guest counters, --ab, --cost, --tools')
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
                   '(/dev/vhost-vsock: a KVM host, or host/nested)')
        if not why and 'linux' in guests and not os.path.exists(LINUX_INITRD):
            why = '%s missing (make linux-guest)' % LINUX_INITRD
        if why:
            p.error('--vsock-perf: ' + why)
    if len(opts.vsock_perf_bytes) != 1 or opts.vsock_perf_bytes[0] <= 0:
        p.error('--vsock-perf-bytes takes one size')
    opts.vsock_perf_bytes = opts.vsock_perf_bytes[0]
    if opts.cost is not None:
        opts.boot = 'elf'   # the cost cmdline reaches ELF boots only
    if opts.count <= 0 or opts.warmup < 0 or opts.rounds <= 0 or opts.time <= 0:
        p.error('--count, --rounds and --time must be positive')
    return opts


def variants(ab):
    """Every combination of the --ab values, as lists of (key, value)."""
    combos = [[]]
    for key, values in ab:
        combos = [c + [(key, v)] for c in combos for v in values]
    return combos


def label(combo):
    return ' '.join('%s=%s' % kv for kv in combo) or 'default'


class Guest:
    def __init__(self, launcher, launch):
        self.launcher = launcher
        self.launch = launch
        self.qemu_pid = launch.qemu.pid if launch.qemu else None

    def command(self, cmd, timeout=60):
        out = self.launch.console.command(cmd, timeout)
        if out.lstrip().startswith('error:'):
            raise SystemExit('bench-vsock: guest rejected %r: %s' % (cmd, out.strip()))
        return out

    def queue_counters(self):
        """{'rxq'|'txq'|'evq': {'kicks': N, 'interrupts': N, ...}}"""
        return guest_stats(self.launch.console, 60, 'virtio-vsock')['virtio-vsock']['queues']

    def apply(self, combo, target):
        """`set` every KEY=VALUE of `combo`; after a change, wait until vsock
        answers through `target` again (a switch may reset the device)."""
        changed = False
        for key, value in combo:
            before = self.command('get %s' % key).strip()
            self.command('set %s=%s' % (key, value))
            changed |= before != '%s=%s' % (key, value)
        if changed:
            wait_target(target, PROG)


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
        opts.dirs) * len(opts.lengths) * len(opts.streams))) * len(combos) * opts.rounds
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
                for length in opts.lengths:
                    for streams in opts.streams:
                        for combo in combos:
                            if guest:
                                guest.apply(combo, target)
                            progress.step('stream %s %d B x%d %s'
                                          % (d, length, streams, label(combo)))
                            res = stream_cell(target, opts, d, length, streams, guest, meter)
                            results['stream'].append((label(combo), res))


def print_results(opts, results, stats):
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
    if stats is not None:
        print('\nguest counters at the end:\n' + stats.rstrip())
    publish(PROG, opts, results, accel=results.get('accel'))


def run_all_tools(opts, guest, target, fwd_ports, results):
    """--tools: the back end's forwards, or socat's to the kernel's vhost-vsock.
    A tool that fails leaves the guest's counters on stderr: its side of
    the story (iperf3's steps and timeouts, the queues)."""
    forwards = SocatForwards(int(target[1]), fwd_ports, PROG) if target[0] == '--cid' else None
    try:
        if not opts.no_pingpong:
            results['tools'] = run_tools(opts, target, fwd_ports, PROG)
        if not opts.no_stream:
            results['tools_stream'] = run_tools_stream(opts, target, fwd_ports, PROG)
    except SystemExit:
        try:
            counters = guest.command('stats', 30)
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
    print('ringside vsock benchmark: attach %s, %s' % (text, time.strftime('%Y-%m-%d %H:%M')))
    results = {'pingpong': [], 'stream': [], 'attach': text}
    run_cells(opts, None, target, None, results)
    print_results(opts, results, None)
    return 0


def main(argv):
    opts = parse_args(argv)
    opts.argv = argv
    if not os.access(BENCH, os.X_OK):
        raise SystemExit('bench-vsock: %s not found (run make)' % BENCH)
    try:
        opts.exit_counter = kvm_exits.ExitCounter() if opts.exits else None
    except kvm_exits.ExitsUnavailable as e:
        raise SystemExit('%s: error: --exits: %s' % (PROG, e))
    try:
        return run_attached(opts) if opts.attach else run_booted(opts)
    finally:
        if opts.exit_counter:
            opts.exit_counter.close()


def run_booted(opts):
    """Boot the guest, run every cell, print the tables."""
    largs = ['--vsock', '--boot', opts.boot, '--accel', 'auto']
    meter = None
    if opts.cost is not None:
        block = os.path.join(tempfile.mkdtemp(prefix='ringside-bench-cost-'), 'guest.cost')
        largs += ['--cmdline', COST_CMDLINE, '--cost',
                  block + (',' + opts.cost if opts.cost else '') + ',prof=on']
    lopts = rr.parse_args(largs + opts.launcher_args)
    accel = rr.choose_accel(lopts)
    if opts.exit_counter and accel != 'kvm':
        raise SystemExit('%s: error: --exits counts KVM\'s exits, and the guest would run '
                         'under TCG (--accel %s)' % (PROG, lopts.accel))
    fwd_ports = {}
    if opts.tools:
        # the back end forwards TCP to the guest; on the kernel's vhost-vsock socat does
        fwd_args, fwd_ports = forward_args()
        if not rr.vsock_kernel(lopts, accel):
            lopts = rr.parse_args(largs + fwd_args + opts.launcher_args)
    log = open(os.path.join(REPO, 'build', 'bench-vsock-qemu.log'), 'w')
    results = {'pingpong': [], 'stream': [], 'accel': accel, 'boot': opts.boot}
    with rr.Launch(lopts, accel, qemu_stderr=log) as launch:
        launch.wait_ready()
        guest = Guest(rr, launch)
        if opts.cost is not None:
            meter = Meter(block, cost.elf_symbols(os.path.join(REPO, 'build', 'ringside.elf')),
                          writable=True)
            if 'io=on' in opts.cost:
                # notifies: stores into the virtio BARs (the guest's lspci)
                meter.block.set_notify(virtio_bars(guest.command('lspci')))
        target = vsock_target(launch, PROG)
        uds = target[1] if target[0] == '--uds' else None
        print('ringside vsock benchmark: accel %s, %s boot, %s, %s' % (
                accel, opts.boot, 'kernel vhost-vsock' if uds is None else
                'back end ' + (lopts.backend or os.path.basename(lopts.backend_cmd[0])),
                time.strftime('%Y-%m-%d %H:%M')))
        print(guest.command('config').rstrip())
        run_cells(opts, guest, target, meter, results)
        if opts.tools:
            run_all_tools(opts, guest, target, fwd_ports, results)
        if opts.vsock_perf:
            if target[0] != '--cid':
                raise SystemExit('%s: --vsock-perf: the guest is not on the kernel\'s '
                                 'vhost-vsock (-- --vsock-transport kernel)' % PROG)
            console = launch.console
            results['vsock_perf'] = bench_vsock_perf.run_guest(
                'ringside', target, lambda port, buf, gone: bench_vsock_perf.ringside_send(
                    console, port, buf, max(1, round(opts.time)), gone), opts, PROG)
        stats = guest.command('stats')
        launch.poweroff()
    if opts.vsock_perf and 'linux' in opts.vsock_perf:
        results['vsock_perf'] += run_linux_vsock_perf(opts, accel)
    print_results(opts, results, stats)
    return 0


def run_linux_vsock_perf(opts, accel):
    """--vsock-perf ringside,linux: the Linux guest's cells, in its own boot
    with the same launcher options."""
    lopts = rr.parse_args(['--vsock', '--accel', accel, '--boot', 'elf', '--kernel',
                           LINUX_KERNEL, '--cmdline', 'console=ttyS0 quiet panic=-1',
                           '--qemu-arg=-initrd', '--qemu-arg=' + LINUX_INITRD]
                          + opts.launcher_args)
    log = open(os.path.join(REPO, 'build', 'bench-vsock-linux.log'), 'w')
    with rr.Launch(lopts, accel, qemu_stderr=log) as launch:
        launch.wait_ready(linux=True)
        target = vsock_target(launch, PROG)
        console = launch.console
        return bench_vsock_perf.run_guest(
            'linux', target, lambda port, buf, gone: bench_vsock_perf.linux_send(
                console, port, opts.vsock_perf_bytes, buf, gone), opts, PROG)
