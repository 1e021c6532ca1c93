# SPDX-License-Identifier: MIT
"""tail: where the ping-pong latency tail comes from.

Boots ringside (ELF, vsock through the back end) under the ringside-cost
plugin and runs build/host/ringside-bench pingpong with --trace and
--cost-shm: the client reads the guest's instruction, halt and halted-time
counters before every round trip, so each round trip's latency comes with
the guest instructions it cost. A round trip in the slowest 1 % that cost
the guest what the median one did was slow for reasons outside the guest
(host scheduling of QEMU, the back end and the client); one that cost more
names the guest work that made it slow (a tick, a timer, a console poll).

Each cell is a configuration: guest switches (--ab KEY=A,B, applied with
`set` in the same boot, e.g. idle=halt,poll) times host CPU placements
(--pin: `none` leaves the scheduler free, `split` puts QEMU on one CPU and
the back end and client on the other, `shared` puts all three on one
CPU); cells interleave over --rounds. Output: a table per cell, the
slowest round trips against the median, a latency CDF and histogram as
PNG in build/bench/ (tail-cdf.png, tail-hist.png) and, with --json, every
round trip. The host's load average is printed with each cell: the
machine is shared, compare ratios within one run.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import ringside as rr

from .. import measure
from ..ab import Switcher, ab_switch, label, variants
from ..benchlib import BENCH, REPO, wait_vsock_up
from ..cli import LAUNCHER_EPILOG, Parser
from ..cost import CostBlock
from ..cost_measure import IDLE_WINDOW
from ..results import Cells, add_options, publish
from ..table import Column, Table

NAME = 'tail'
SUMMARY = 'the ping-pong latency tail, each round trip its cost'
GROUP = 'measure'
ALIASES = ('bench-tail',)
PROG = 'ringside tail'
COST_CMDLINE = 'irq=msix idle=halt'
PIN_MODES = ('none', 'split', 'shared')
OUT_DIR = os.path.join(REPO, 'build', 'bench')
SLOW_ROWS = 15          # slowest round trips listed one by one per cell


def pin_list(text):
    modes = text.split(',')
    bad = [m for m in modes if m not in PIN_MODES]
    if bad or not modes:
        raise argparse.ArgumentTypeError('--pin takes %s (comma separated)'
                                         % ', '.join(PIN_MODES))
    return modes


def nice_list(text):
    try:
        values = [int(w) for w in text.split(',')]
    except ValueError:
        raise argparse.ArgumentTypeError('--nice takes numbers like 0,-10')
    if any(v < -20 or v > 19 for v in values):
        raise argparse.ArgumentTypeError('--nice values are -20..19')
    return values


def parse_args(argv):
    p = Parser(prog=PROG, usage='%(prog)s [options] [-- launcher options]',
               description='Per-round-trip latency and guest instructions of a ping-pong: '
                           'CDF, histogram,\nthe slowest 1 %% against the median.',
               epilog=LAUNCHER_EPILOG)
    measure.add(p, sizes=[64], count=5000, warmup=200, rounds=1)
    p.add_argument('--ab', type=ab_switch, action='append', default=[], metavar='KEY=A,B',
                   help='guest switch measured in the same boot (repeatable)')
    p.add_argument('--pin', type=pin_list, default=['none'], metavar='LIST',
                   help='host CPU placements to compare: none, split, shared (none)')
    p.add_argument('--nice', type=nice_list, default=[0], metavar='LIST',
                   help='nice values of QEMU, the back end and the client (0)')
    p.add_argument('--cmdline', default=COST_CMDLINE, metavar='KEYS',
                   help='guest command line (%r)' % COST_CMDLINE)
    p.add_argument('--no-cost', action='store_true',
                   help='without the cost plugin (latency only; QEMU runs faster)')
    add_options(p)
    p.add_argument('--out', default=OUT_DIR, more=True,
                   help='directory for the PNGs (build/bench)')
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if len(opts.sizes) != 1:
        p.error('--sizes: tail takes one size (its plots are of one)')
    opts.size = opts.sizes[0]
    if opts.count < 100:
        p.error('--count at least 100')
    if opts.count > 10000000:
        p.error('--count: at most 10000000')
    return opts


def load_average():
    try:
        with open('/proc/loadavg') as f:
            return ' '.join(f.read().split()[:3])
    except OSError:
        return '?'


# ------------------------------------------------------------------ pinning

def each_thread(pid, apply):
    """apply(tid) for every thread of pid; threads that went away (or a
    process that did) are fine."""
    try:
        tids = [int(t) for t in os.listdir('/proc/%d/task' % pid)]
    except OSError:
        return
    for tid in tids:
        try:
            apply(tid)
        except OSError:
            pass


def set_affinity(pid, cpus):
    """Every thread of pid onto cpus (a set)."""
    each_thread(pid, lambda tid: os.sched_setaffinity(tid, cpus))


def set_nice(pid, nice):
    """Every thread of pid to this nice value (a scheduler weight: a woken
    thread of higher weight preempts the running one sooner)."""
    each_thread(pid, lambda tid: os.setpriority(os.PRIO_PROCESS, tid, nice))


def placement(mode, cpus):
    """(QEMU's CPUs, the back end's and the client's) for a --pin mode."""
    cpus = sorted(cpus)
    if mode == 'none' or len(cpus) < 2 and mode == 'split':
        return set(cpus), set(cpus)
    if mode == 'split':
        return {cpus[0]}, {cpus[1]}
    return {cpus[0]}, {cpus[0]}


# ------------------------------------------------------------------ analysis

def read_trace(path):
    """Rows of a --trace file: dicts with ns and (with cost) insns, halts, idle_ns."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith('#') or not line.strip():
                continue
            v = [int(x) for x in line.split()]
            row = {'ns': v[2]}
            if len(v) >= 6:
                row.update(insns=v[3], halts=v[4], idle_ns=v[5])
            rows.append(row)
    return rows


def percentile(sorted_values, p):
    i = int(round(p / 100.0 * (len(sorted_values) - 1)))
    return sorted_values[min(max(i, 0), len(sorted_values) - 1)]


def halt_cost(rows):
    """Instructions one more halt adds to a round trip, from the round trips
    themselves: the least-squares slope of instructions on halts; 0 when
    the halts do not vary or the slope is not positive. The idle rate is not
    it: an idle wake-up also runs the guest's periodic work (the console
    look, the idle guard), so per halt it can cost more than a whole round
    trip, while a halt inside a round trip costs only the wake-up."""
    if len(rows) < 2 or 'insns' not in rows[0]:
        return 0.0
    mh = statistics.mean(r['halts'] for r in rows)
    mi = statistics.mean(r['insns'] for r in rows)
    var = sum((r['halts'] - mh) ** 2 for r in rows)
    if not var:
        return 0.0
    slope = sum((r['halts'] - mh) * (r['insns'] - mi) for r in rows) / var
    return max(slope, 0.0)


def summarize(rows, per_halt):
    """Latency percentiles, and the slowest 1 % against the middle (p40..p60).

    A round trip's instructions include a wake-up (per_halt, halt_cost())
    for every halt in it, and a round trip that waited long for the host
    halts more: `work` takes those off, so slow and median round trips
    compare by what the guest was asked to do.
    """
    by_ns = sorted(rows, key=lambda r: r['ns'])
    ns = [r['ns'] for r in by_ns]
    n = len(by_ns)
    s = {'n': n, 'p1': percentile(ns, 1), 'p50': percentile(ns, 50),
         'p90': percentile(ns, 90), 'p99': percentile(ns, 99),
         'p99_9': percentile(ns, 99.9), 'max': ns[-1]}
    slow = by_ns[n - max(1, n // 100):]
    middle = by_ns[int(n * 0.4):int(n * 0.6)] or by_ns
    s['slow'] = slow
    # a guest that never halts spins when idle: its instructions follow time
    if 'insns' in by_ns[0] and any(r['halts'] for r in rows):
        for r in rows:
            r['work'] = r['insns'] - r['halts'] * per_halt
        for name, part in (('mid', middle), ('slow', slow)):
            s[name + '_work'] = statistics.median(r['work'] for r in part)
            s[name + '_insns'] = statistics.median(r['insns'] for r in part)
            s[name + '_insns_mean'] = statistics.mean(r['insns'] for r in part)
            s[name + '_halts'] = statistics.mean(r['halts'] for r in part)
            s[name + '_idle_us'] = statistics.mean(r['idle_ns'] for r in part) / 1e3
        # slow ones that asked more of the guest than a median one (idle wake-ups aside)
        s['slow_expensive'] = sum(1 for r in slow if r['work'] > 1.5 * max(s['mid_work'], 1))
    return s


def verdict(s):
    """One line: is the tail guest work or waiting outside the guest?"""
    if 'slow_work' not in s:
        return ('no per-round-trip guest work: %s' % (
                'the guest spins when idle (idle=poll), its instructions follow time'
                if 'insns' in s['slow'][0] else 'no guest counters (--no-cost)'))
    extra = s['slow_work'] - s['mid_work']
    share = 100.0 * s['slow_expensive'] / max(1, len(s['slow']))
    halted = 100.0 * s['slow_idle_us'] * 1e3 / max(1, statistics.mean(r['ns'] for r in s['slow']))
    where = ('the tail is outside the guest (host scheduling)' if share < 10
             else 'guest work in the tail')
    return ('slowest 1 %%: guest work %+.0f instructions vs the median (idle wake-ups '
            'aside), %.0f %% of them > 1.5x, guest halted %.0f %% of their time: %s'
            % (extra, share, halted, where))


# ------------------------------------------------------------------ running

class Bench:
    def __init__(self, opts, launch, guest, block):
        self.opts, self.launch, self.guest, self.block = opts, launch, guest, block
        self.uds = launch.opts.vsock_uds
        self.qemu_pid = launch.qemu.pid
        self.backend_pid = next((p.pid for name, p in launch.children.procs
                                 if name == 'vhost-vsock'), None)
        self.cpus = os.sched_getaffinity(0)
        self.counters = CostBlock(block) if block else None
        self.nice0 = os.getpriority(os.PRIO_PROCESS, 0)

    def pin(self, mode, nice):
        qemu_cpus, host_cpus = placement(mode, self.cpus)
        set_affinity(self.qemu_pid, qemu_cpus)
        set_nice(self.qemu_pid, nice)
        if self.backend_pid:
            set_affinity(self.backend_pid, host_cpus)
            set_nice(self.backend_pid, nice)
        return host_cpus

    def client_setup(self, cpus, nice):
        os.sched_setaffinity(0, cpus)
        os.setpriority(os.PRIO_PROCESS, 0, nice)

    def idle_per_halt(self):
        """Instructions per idle wake-up now (for the record, see halt_cost);
        0 if the guest does not halt."""
        if not self.counters:
            return 0
        before = self.counters.snapshot()
        time.sleep(IDLE_WINDOW)
        d = (self.counters.snapshot() - before).totals
        return d['insns'] / d['halts'] if d['halts'] >= 5 else 0

    def cell(self, combo, pin_mode, nice, trace):
        self.guest.apply(combo, ['--uds', self.uds])
        idle_per_halt = self.idle_per_halt()
        client_cpus = self.pin(pin_mode, nice)
        args = [BENCH, 'pingpong', '--uds', self.uds, '--size', str(self.opts.size),
                '--count', str(self.opts.count), '--warmup', str(self.opts.warmup),
                '--trace', trace, '--json']
        if self.block:
            args += ['--cost-shm', self.block]
        load = load_average()
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=3600,
                                  preexec_fn=lambda: self.client_setup(client_cpus, nice))
        finally:
            self.pin('none', self.nice0)
        if proc.returncode != 0:
            raise SystemExit('%s: ringside-bench failed (%d): %s'
                             % (PROG, proc.returncode, proc.stderr.strip()))
        rows = read_trace(trace)
        if len(rows) < 2:
            raise SystemExit('%s: the trace of %s holds %d round trips'
                             % (PROG, trace, len(rows)))
        client = json.loads(proc.stdout)['results'][0]
        per_halt = halt_cost(rows)
        return {'config': label(combo), 'pin': pin_mode, 'nice': nice, 'load': load, 'rows': rows,
                'per_halt': per_halt, 'idle_per_halt': idle_per_halt,
                'summary': summarize(rows, per_halt), 'client': client}


# ------------------------------------------------------------------ output

def cell_name(c):
    return '%s pin=%s%s' % (c['config'], c['pin'],
                            ' nice=%d' % c['nice'] if c.get('nice') else '')


def print_table(cells):
    cost_on = any('mid_insns' in c['summary'] for c in cells)
    t = Table([Column('cell', 32, left=True), Column('n', 6, '%d'), Column('p1', 8, '%d'),
               Column('p50', 8, '%d'), Column('p99', 8, '%d'), Column('p99.9', 9, '%d'),
               Column('max', 9, '%d'), Column('load avg', 14)]
              + ([Column('insn p50', 9, '%.0f'), Column('insn slow', 9, '%.0f'),
                  Column('hlt p50', 8, '%.2f'), Column('hlt slow', 8, '%.2f'),
                  Column('work p50', 9, '%.0f'), Column('work slow', 9, '%.0f'),
                  Column('slow>1.5x', 8, '%d')] if cost_on else []),
              title='\nping-pong round trips, ns (per-round-trip trace)')
    for c in cells:
        s = c['summary']
        t.row(cell_name(c)[:32], s['n'], s['p1'], s['p50'], s['p99'], s['p99_9'], s['max'],
              c['load'], *[s.get(k) for k in ('mid_insns', 'slow_insns', 'mid_halts',
                                              'slow_halts', 'mid_work', 'slow_work',
                                              'slow_expensive') if cost_on])
    t.print()
    print('insn p50: median guest instructions of the round trips between p40 and p60 of '
          'latency; insn slow:\nof the slowest 1 %; hlt: mean halts; work: instructions less '
          'a wake-up per halt\n(the slope of instructions on halts over the cell\'s round '
          'trips); slow>1.5x: how many of\nthe slowest 1 % did more than 1.5x the median '
          'work')


def print_slowest(cells):
    for c in cells:
        s = c['summary']
        print('\n%s: %s' % (cell_name(c), verdict(s)))
        print('  slowest %d of %d round trips:' % (min(SLOW_ROWS, len(s['slow'])), s['n']))
        for r in reversed(s['slow'][-SLOW_ROWS:]):
            if 'work' in r:
                print('    %9d ns  %6d insns  %6.0f work (%+6.0f vs median)  %d halts  '
                      '%7.1f us halted' % (r['ns'], r['insns'], r['work'],
                                           r['work'] - s['mid_work'], r['halts'],
                                           r['idle_ns'] / 1e3))
            else:
                print('    %9d ns' % r['ns'])


def merged(cells):
    """Round trips of every round of each cell, in first-seen order."""
    out = {}
    for c in cells:
        out.setdefault(cell_name(c), []).extend(c['rows'])
    return list(out.items())


def style(name, i):
    return {'color': 'C%d' % (i % 10), 'linestyle': '--' if 'poll' in name else '-'}


def plot_cdf(plt, series, size, path):
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, (name, rows) in enumerate(series):
        ns = sorted(r['ns'] / 1e3 for r in rows)
        ys = [1.0 - (k + 0.5) / len(ns) for k in range(len(ns))]
        ax.plot(ns, ys, label='%s (%d)' % (name, len(ns)), **style(name, i))
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel('round trip, us')
    ax.set_ylabel('fraction of round trips slower (1 - CDF)')
    ax.set_title('%d B ping-pong latency tail' % size)
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize='small')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_hist(plt, series, size, path):
    """Latency histogram and, with guest counters, guest work against latency."""
    scatter = [(n, rows) for n, rows in series if 'work' in rows[0]]
    fig, axes = plt.subplots(1, 2 if scatter else 1, squeeze=False, figsize=(14, 5))
    ax = axes[0][0]
    lo = min(r['ns'] for _, rows in series for r in rows) / 1e3
    hi = max(r['ns'] for _, rows in series for r in rows) / 1e3
    bins = [lo * (hi / lo) ** (k / 60.0) for k in range(61)]
    for i, (name, rows) in enumerate(series):
        ax.hist([r['ns'] / 1e3 for r in rows], bins=bins, histtype='step', label=name,
                **style(name, i))
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel('round trip, us')
    ax.set_ylabel('round trips')
    ax.set_title('%d B ping-pong latency histogram' % size)
    ax.legend(fontsize='small')
    if scatter:
        ax = axes[0][1]
        for i, (name, rows) in enumerate(scatter):
            ax.scatter([r['ns'] / 1e3 for r in rows], [r['work'] for r in rows], s=3,
                       alpha=0.5, label=name, color='C%d' % (i % 10))
        ax.set_xscale('log')
        ax.set_xlabel('round trip, us')
        ax.set_ylabel('guest instructions less idle wake-ups')
        ax.set_title('guest work per round trip against its latency')
        ax.grid(True, which='both', alpha=0.3)
        ax.legend(fontsize='small', markerscale=4)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot(cells, out_dir, size):
    """tail-cdf.png and tail-hist.png; None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    os.makedirs(out_dir, exist_ok=True)
    series = merged(cells)
    paths = [os.path.join(out_dir, 'tail-cdf.png'), os.path.join(out_dir, 'tail-hist.png')]
    plot_cdf(plt, series, size, paths[0])
    plot_hist(plt, series, size, paths[1])
    return paths


def result_of(opts, cells):
    """Every round trip of every cell, for --json and the saved run."""
    out = {'size': opts.size, 'cells': []}
    for c in cells:
        s = {k: v for k, v in c['summary'].items() if k != 'slow'}
        out['cells'].append({'config': c['config'], 'pin': c['pin'], 'nice': c['nice'],
                             'load': c['load'],
                             'summary': s, 'rows': c['rows']})
    return out


def main(argv):
    opts = parse_args(argv)
    opts.argv = argv
    if not os.access(BENCH, os.X_OK):
        raise SystemExit('%s: %s not found (run make)' % (PROG, BENCH))
    work = tempfile.mkdtemp(prefix='ringside-tail-')
    block = None if opts.no_cost else os.path.join(work, 'guest.cost')
    largs = ['--vsock', '--boot', 'elf', '--accel', 'auto']
    if opts.cmdline:
        largs += ['--cmdline', opts.cmdline]
    if block:
        largs += ['--cost-block', block]
    lopts = rr.parse_args(largs + opts.launcher_args)
    accel = rr.choose_accel(lopts)
    if rr.vsock_kernel(lopts, accel):
        raise SystemExit("%s: needs a vhost-user back end's hybrid socket, not the kernel's "
                         'vhost-vsock (-- --vsock-transport vhost-user)' % PROG)
    os.makedirs(OUT_DIR, exist_ok=True)
    log = open(os.path.join(OUT_DIR, 'tail-qemu.log'), 'w')
    print('%s: %d B, %d round trips per cell, guest %r, %s, load average %s, %d CPUs' % (
            PROG, opts.size, opts.count, opts.cmdline,
            'no cost plugin' if opts.no_cost else 'cost plugin', load_average(),
            os.cpu_count()))
    try:
        cells = run_cells(opts, lopts, accel, block, work, log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(opts, cells)
    return 0


def run_cells(opts, lopts, accel, block, work, log):
    cells = []
    with rr.Launch(lopts, accel, qemu_stderr=log) as launch:
        launch.wait_ready()
        guest = Switcher(launch.console, PROG)
        wait_vsock_up(launch.opts.vsock_uds, prog=PROG)
        bench = Bench(opts, launch, guest, block)
        for rnd in range(opts.rounds):
            for combo in variants(opts.ab):
                for mode, nice in ((m, n) for m in opts.pin for n in opts.nice):
                    trace = os.path.join(work, 'trace-%d-%d.txt' % (rnd, len(cells)))
                    c = bench.cell(combo, mode, nice, trace)
                    cells.append(c)
                    print('  %-32s p50 %8d p99 %8d ns  load %s' % (
                            cell_name(c), c['summary']['p50'], c['summary']['p99'],
                            c['load']), flush=True)
        launch.poweroff()
    return cells


def report(opts, cells):
    print_table(cells)
    print_slowest(cells)
    paths = plot(cells, opts.out, opts.size)
    if paths:
        print('\nplots: %s' % ', '.join(os.path.relpath(p, REPO) for p in paths))
    else:
        print('\nno plots: python3-matplotlib is not installed')
    summary = Cells()
    for c in cells:
        config = {'cell': 'tail', 'switch': c['config'], 'pin': c['pin'], 'nice': c['nice'],
                  'size': opts.size}
        for metric in ('p50', 'p99', 'p99_9', 'max'):
            summary.add(config, metric, 'ns', c['summary'][metric], 'lower')
        summary.add(config, 'insn p50', 'insn', c['summary'].get('mid_insns'), 'lower')
    publish(PROG, opts, result_of(opts, cells), summary)
