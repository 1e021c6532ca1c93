# SPDX-License-Identifier: MIT
"""bench-seeds: the seeds' benchmark tables on this machine, with guest cost.

Runs the benchmark scripts with --cost and --json and writes one markdown
report, build/bench/seeds.md, with PNG plots next to it (python3-matplotlib)
and each script's own text output (build/bench/*.txt):

  000  ping-pong sizes with fastpath on/off           (bench-vsock --ab fastpath=1,0)
  001  pktgen Mpps, split/packed, txpoll on/off, Linux (bench-net)
  004  stream h2g/g2h with credit lazy/eager, rxbuf 4096/65580 and smallcopy
       on/off, one switch at a time, with efficiency  (bench-vsock --ab KEY=A,B)
       ringside vs Linux: ping-pong 64 B / 4 KiB, stream 64 KiB buffers
                                                      (bench-compare --configs 'split sleep')

Every cell has the guest's instructions per operation (round trip, KiB,
packet), measured by the ringside-cost plugin with the idle rate taken off
where it is noise (ringside/cost_measure.py); A/B tables give the cost
delta with its spread over rounds. --quick runs every table with short cells
and one round (tests/qemu/test_bench_seeds.py); the full run takes about a
quarter of an hour under TCG.
"""

import contextlib
import json
import os
import shutil
import statistics
import sys
import time

from . import bench_compare, bench_net, bench_vsock
from .benchlib import Parser
from .cost_measure import spread
from .images import REPO

OUT = os.path.join(REPO, 'build', 'bench')
SWITCHES_004 = (('credit', ('lazy', 'eager')), ('rxbuf', ('4096', '65580')),
                ('smallcopy', ('1', '0')))
FULL = {'rounds': 3, 'count': 300, 'warmup': 30, 'sizes': '64,512,4k', 'time': 3.0,
        'lengths': '4k,64k', 'pkts': 200000, 'net_rounds': 3, 'cmp_count': 500}
QUICK = {'rounds': 1, 'count': 100, 'warmup': 10, 'sizes': '64,4k', 'time': 1.0,
         'lengths': '64k', 'pkts': 20000, 'net_rounds': 1, 'cmp_count': 100}


def run_tool(name, main, argv, outdir):
    """main(argv) with its text output into outdir/name.txt."""
    path = os.path.join(outdir, name + '.txt')
    print('bench-seeds: %s %s' % (name, ' '.join(argv)), file=sys.stderr)
    with open(path, 'w') as f, contextlib.redirect_stdout(f):
        status = main(argv)
    if status:
        raise SystemExit('bench-seeds: %s failed (%s); see %s' % (name, status, path))
    return path


def vsock_json(name, argv, outdir):
    path = os.path.join(outdir, name + '.json')
    run_tool(name, bench_vsock.main, argv + ['--cost', '--json', path], outdir)
    with open(path) as f:
        return json.load(f)


def median(values):
    values = list(values)
    return statistics.median(values) if values else float('nan')


def fmt(v, digits=0):
    if v is None or v != v:
        return '-'
    return '%.*f' % (digits, v)


def table(head, rows):
    out = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    out += ['| ' + ' | '.join(str(c) for c in r) + ' |' for r in rows]
    return out + ['']


def cost_of(rs, key='insns'):
    return [r['cost'][key] for r in rs if 'cost' in r]


def ab_row(what, a, b, unit):
    """One A/B line: medians of A and B instructions per op, delta, spreads."""
    ia, ib = cost_of(a), cost_of(b)
    ma, mb = median(ia), median(ib)
    return [what, fmt(ma), fmt(mb), fmt(100.0 * (mb - ma) / ma, 1) + ' %' if ma else '-',
            '%s %% / %s %%' % (fmt(spread(ia), 1), fmt(spread(ib), 1)), unit]


# ------------------------------------------------------------------- 000

def seed000(p, outdir):
    res = vsock_json('seed000', ['--no-stream', '--sizes', p['sizes'], '--count',
                                 str(p['count']), '--warmup', str(p['warmup']),
                                 '--rounds', str(p['rounds']), '--ab', 'fastpath=1,0'], outdir)
    rows, ab, plot = [], [], {}
    pp = res['pingpong']
    for size in sorted({r['size'] for _, r in pp}):
        cells = {}
        for conf in ('fastpath=1', 'fastpath=0'):
            rs = [r for c, r in pp if c == conf and r['size'] == size]
            cells[conf] = rs
            rows.append([size, conf, fmt(median(r['p50'] for r in rs) / 1000, 1),
                         fmt(median(r['mean'] for r in rs) / 1000, 1),
                         fmt(median(cost_of(rs)), 0), fmt(median(cost_of(rs, 'halts')), 2),
                         fmt(median(cost_of(rs, 'irqs')), 2),
                         fmt(median(cost_of(rs, 'idle_rate')))])
            plot.setdefault(conf, []).append((size, median(r['p50'] for r in rs) / 1000,
                                              median(cost_of(rs))))
        ab.append(ab_row('%d B round trip' % size, cells['fastpath=1'], cells['fastpath=0'],
                         'insn/rt'))
    top = next((r['cost'].get('top') for c, r in pp
                if c == 'fastpath=1' and r['size'] == 64 and r.get('cost', {}).get('top')), None)
    md = ['## Seed 000: ping-pong sizes, fastpath on/off', '',
          'bench-vsock ping-pong, %d round trips (+%d warm-up) per cell, %d round(s); '
          'latency medians over rounds in µs; guest cost per round trip.'
          % (p['count'], p['warmup'], p['rounds']), '']
    md += table(['size B', 'config', 'p50 µs', 'mean µs', 'insn/rt', 'halt/rt', 'irq/rt',
                 'idle insn/s'], rows)
    md += ['A/B cost (fastpath=1 → fastpath=0), medians over rounds, spread = (max-min)/mean:',
           '']
    md += table(['cell', 'insn A', 'insn B', 'delta', 'spread A / B', 'unit'], ab)
    if top:
        md += ['Top 10 ringside functions of a 64 B round trip (fastpath=1, first round; '
               'idle wake-ups inside the cell included):', '']
        md += table(['function', 'insn/rt'], [[n, fmt(v, 1)] for n, v in top])
    md += plot_pairs(outdir, 'seed000.png', 'Seed 000: ping-pong', plot, 'size B',
                     ('p50 µs', 'guest insn / round trip'))
    return md, {'ab': ab, 'top': top}


# ------------------------------------------------------------------- 004

def seed004(p, outdir):
    rows, ab, plot = [], [], {}
    for key, (va, vb) in SWITCHES_004:
        res = vsock_json('seed004-%s' % key,
                         ['--no-pingpong', '--lengths', p['lengths'], '--streams', '1',
                          '--time', str(p['time']), '--rounds', str(p['rounds']),
                          '--ab', '%s=%s,%s' % (key, va, vb)], outdir)
        st = res['stream']
        for d, length in sorted({(r['dir'], r['len']) for _, r in st}):
            sides = []
            for v in (va, vb):
                conf = '%s=%s' % (key, v)
                rs = [r for c, r in st if c == conf and (r['dir'], r['len']) == (d, length)]
                sides.append(rs)
                gbps = median(r['gbps'] for r in rs)
                rows.append([conf, d, length, fmt(gbps, 3),
                             fmt(median(r.get('mbps_per_cpu_percent', 0) for r in rs), 2),
                             fmt(median(cost_of(rs)), 0), fmt(median(cost_of(rs, 'halts')), 4),
                             fmt(median(cost_of(rs, 'irqs')), 4)])
                plot.setdefault('%s %s' % (d, length // 1024), []).append(
                        (conf, gbps, median(cost_of(rs))))
            ab.append(ab_row('%s=%s→%s %s %d B' % (key, va, vb, d, length), sides[0], sides[1],
                             'insn/KiB'))
    md = ['## Seed 004: stream with credit, rxbuf and smallcopy switches', '',
          'bench-vsock stream, one stream, %g s per cell, %d round(s), one switch at a time '
          '(the others at their defaults); efficiency is Mb/s per CPU %% of ringside-bench '
          'plus QEMU (back end excluded); guest cost per KiB moved.' % (p['time'], p['rounds']),
          '']
    md += table(['config', 'dir', 'buffer B', 'Gb/s', 'Mb/s per CPU %', 'insn/KiB',
                 'halt/KiB', 'irq/KiB'], rows)
    md += ['A/B cost per switch, medians over rounds:', '']
    md += table(['cell', 'insn A', 'insn B', 'delta', 'spread A / B', 'unit'], ab)
    md += plot_bars(outdir, 'seed004.png', 'Seed 004: stream', plot,
                    ('Gb/s', 'guest insn / KiB'))
    return md, {'ab': ab}


# ------------------------------------------------------------------- 001

def seed001(p, outdir):
    path = os.path.join(outdir, 'seed001.json')
    argv = ['--cost', '--json', '--count', str(p['pkts']), '--rounds', str(p['net_rounds'])]
    print('bench-seeds: seed001 %s' % ' '.join(argv), file=sys.stderr)
    with open(path, 'w') as f, contextlib.redirect_stdout(f):
        status = bench_net.main(argv)
    if status:
        raise SystemExit('bench-seeds: bench-net failed (%s)' % status)
    with open(path) as f:
        text = f.read()
    start = text.find('{\n')     # anything printed before the JSON is not ours
    res = json.loads(text[max(start, 0):])
    rows, plot = [], {}
    for t in res['summary']:
        rows.append(['ringside', t['ring'], t['txpoll'], fmt(t['mpps_median'], 4),
                     '%s..%s' % (fmt(t['mpps_min'], 4), fmt(t['mpps_max'], 4)),
                     fmt(t.get('insns_per_packet'), 0), fmt(t.get('insns_min'), 0),
                     fmt(t.get('insns_spread'), 1) + ' %',
                     fmt(t.get('halts_per_packet'), 4), fmt(t.get('irqs_per_packet'), 4)])
        plot.setdefault('Mpps', []).append(('%s tp=%d' % (t['ring'], t['txpoll']),
                                            t['mpps_median'], t.get('insns_per_packet')))
    for t in res['linux_summary']:
        rows.append(['Linux', t['ring'], '-', fmt(t['mpps_median'], 4),
                     '%s..%s' % (fmt(t['mpps_min'], 4), fmt(t['mpps_max'], 4)),
                     fmt(t.get('insns_per_packet'), 0), fmt(t.get('insns_min'), 0),
                     fmt(t.get('insns_spread'), 1) + ' %',
                     fmt(t.get('halts_per_packet'), 4), fmt(t.get('irqs_per_packet'), 4)])
        plot.setdefault('Mpps', []).append(('Linux %s' % t['ring'], t['mpps_median'],
                                            t.get('insns_per_packet')))
    ab = []
    by = {}
    for r in res['runs']:
        by.setdefault((r['ring'], r['txpoll']), []).append(r)
    for ring in ('split', 'packed'):
        if (ring, 1) in by and (ring, 0) in by:
            ab.append(ab_row('%s txpoll=1→0' % ring, by[(ring, 1)], by[(ring, 0)], 'insn/pkt'))
    for tp in (1, 0):
        if ('split', tp) in by and ('packed', tp) in by:
            ab.append(ab_row('txpoll=%d split→packed' % tp, by[('split', tp)],
                             by[('packed', tp)], 'insn/pkt'))
    md = ['## Seed 001: pktgen Mpps, split/packed, txpoll on/off', '',
          'bench-net: pktgen → dpdk-testpmd rxonly over vhost-user-net, %d × %d B frames, '
          'burst %d, %d round(s); Linux %s pktgen on the same QEMU options; guest cost per '
          'packet sent.' % (p['pkts'], res['params']['size'], res['params']['burst'],
                            p['net_rounds'], res.get('linux_kernel') or ''), '']
    md += table(['guest', 'ring', 'txpoll', 'Mpps', 'min..max', 'insn/pkt', 'insn/pkt min',
                 'spread', 'halt/pkt', 'irq/pkt'], rows)
    md += ['pktgen never waits: when the TX ring is full it polls for completions, so '
           'its instructions per packet grow when the host consumes more slowly (a busy '
           'host); the minimum over rounds is closest to the work per packet.', '']
    md += ['A/B cost, medians over rounds:', '']
    md += table(['cell', 'insn A', 'insn B', 'delta', 'spread A / B', 'unit'], ab)
    md += plot_bars(outdir, 'seed001.png', 'Seed 001: pktgen', plot, ('Mpps', 'guest insn / pkt'))
    return md, {'ab': ab}


# ------------------------------------------------------------------- Linux

def versus_linux(p, outdir):
    """bench-compare --cost once per round (each round boots both guests):
    medians over rounds, and the spread of the instruction counts."""
    by = {}
    for rnd in range(p['rounds']):
        path = os.path.join(outdir, 'linux-%d.json' % rnd)
        run_tool('linux-%d' % rnd, bench_compare.main,
                 ['--cost', '--configs', 'split sleep', '--sizes', '64,4096', '--count',
                  str(p['cmp_count']), '--warmup', str(p['warmup']), '--time', str(p['time']),
                  '--json', path], outdir)
        with open(path) as f:
            # [config, [metric, size, dir], ringside, linux, ratio, ...]
            for row in json.load(f)['rows']:
                (metric, size, d), r, lx = row[1:4]
                by.setdefault((metric, size, d), []).append((r, lx))

    def get(metric, size, d):
        pairs = by.get((metric, size, d), [])
        if not pairs:
            return None, None, None, None
        rs, ls = [a for a, _ in pairs], [b for _, b in pairs]
        return median(rs), median(ls), spread(rs), spread(ls)
    rows, plot = [], {}
    cells = (('ping-pong 64 B', 64, '', 'rt', 'p50 ns'), ('ping-pong 4 KiB', 4096, '', 'rt',
                                                          'p50 ns'),
             ('stream h2g 64 KiB', 65536, 'h2g', 'KiB', 'Gb/s'),
             ('stream g2h 64 KiB', 65536, 'g2h', 'KiB', 'Gb/s'))
    for name, size, d, unit, perf in cells:
        ir, il, sr, sl = get('insn/' + unit, size, d)
        pr, pl = get(perf, size, d)[:2]
        hr, hl = get('hlt/' + unit, size, d)[:2]
        qr, ql = get('irq/' + unit, size, d)[:2]
        scale = 1000.0 if perf == 'p50 ns' else 1.0
        rows.append([name, '%s %s' % (fmt(pr / scale if pr else None, 3 if scale == 1 else 1),
                                      'µs' if scale > 1 else 'Gb/s'),
                     '%s %s' % (fmt(pl / scale if pl else None, 3 if scale == 1 else 1),
                                'µs' if scale > 1 else 'Gb/s'),
                     fmt(ir, 0), fmt(il, 0), fmt(ir / il if ir and il else None, 3),
                     '%s %% / %s %%' % (fmt(sr, 1), fmt(sl, 1)),
                     '%s / %s' % (fmt(hr, 3), fmt(hl, 3)), '%s / %s' % (fmt(qr, 3), fmt(ql, 3)),
                     'insn/' + unit])
        plot.setdefault('insn', []).append((name, ir, il))
    md = ['## ringside vs Linux, same QEMU, back end and client', '',
          'bench-compare --cost (split ring, back end sleeping on eventfds): ringside '
          '(irq=msix idle=halt) and Debian\'s Linux on the same QEMU; ping-pong %d round '
          'trips, stream one 64 KiB-buffer stream for %g s; medians over %d round(s) (both '
          'guests booted per round), spread of the instruction counts over rounds; guest '
          'instructions per round trip or KiB (Linux counts its user-space server too).'
          % (p['cmp_count'], p['time'], p['rounds']), '']
    md += table(['cell', 'ringside', 'Linux', 'ringside insn', 'Linux insn', 'ratio',
                 'spread r / L', 'halts r / L', 'irqs r / L', 'unit'], rows)
    md += plot_versus(outdir, 'linux.png', plot['insn'])
    return md, {}


# ------------------------------------------------------------------- plots

def pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def plot_pairs(outdir, name, title, series, xlabel, ylabels):
    """Two panels over x (e.g. size): latency and cost, one line per config."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for conf, pts in series.items():
        xs = [x for x, _, _ in pts]
        for i, ax in enumerate(axes):
            ax.plot(xs, [pt[i + 1] for pt in pts], marker='o', label=conf)
    for ax, yl in zip(axes, ylabels):
        ax.set_xscale('log', base=2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(yl)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    return ['![%s](%s)' % (title, name), '']


def plot_bars(outdir, name, title, groups, ylabels):
    """Two panels of bars: performance and cost, one bar per config."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    labels, perf, insn = [], [], []
    for group, pts in groups.items():
        for conf, p, c in pts:
            labels.append(conf if len(groups) == 1 else '%s\n%s' % (group, conf))
            perf.append(p or 0)
            insn.append(c or 0)
    for ax, vals, yl in zip(axes, (perf, insn), ylabels):
        ax.bar(range(len(vals)), vals)
        ax.set_xticks(range(len(vals)))
        ax.set_xticklabels(labels, rotation=60, ha='right', fontsize=7)
        ax.set_ylabel(yl)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    return ['![%s](%s)' % (title, name), '']


def plot_versus(outdir, name, pts):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    xs = range(len(pts))
    ax.bar([x - 0.2 for x in xs], [r or 0 for _, r, _ in pts], 0.4, label='ringside')
    ax.bar([x + 0.2 for x in xs], [lx or 0 for _, _, lx in pts], 0.4, label='Linux')
    ax.set_xticks(list(xs))
    ax.set_xticklabels([n for n, _, _ in pts], fontsize=8)
    ax.set_yscale('log')
    ax.set_ylabel('guest instructions per operation')
    ax.legend()
    ax.set_title('ringside vs Linux: guest instructions per operation')
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    return ['![ringside vs Linux](%s)' % name, '']


# ------------------------------------------------------------------- main

SECTIONS = (('000', seed000), ('001', seed001), ('004', seed004), ('linux', versus_linux))


def main(argv):
    p = Parser(prog='bench-seeds', description=__doc__.split('\n')[0])
    p.add_argument('--quick', action='store_true',
                   help='every table with short cells and one round (a few minutes)')
    p.add_argument('--only', default=','.join(s for s, _ in SECTIONS),
                   help='sections, comma separated (000,001,004,linux)')
    p.add_argument('--out', default=OUT, help='output directory (build/bench)')
    opts = p.parse_args(argv)
    only = opts.only.split(',')
    if any(o not in dict(SECTIONS) for o in only):
        p.error('--only takes 000, 001, 004, linux')
    params = QUICK if opts.quick else FULL
    os.makedirs(opts.out, exist_ok=True)
    if not shutil.which('dpdk-testpmd') and '001' in only:
        p.error('seed 001 needs dpdk-testpmd (package dpdk); leave it out with --only')
    started = time.time()
    md = ['# The seeds\' tables with guest cost', '',
          'Generated by `host/bench-seeds%s` on %s (%s run, accel tcg). Guest cost is '
          'counted by the ringside-cost QEMU plugin: instructions the guest executed per '
          'operation, the idle rate (measured before each cell) taken off where it is '
          'noise; halts and interrupts per operation are the plugin\'s halts and the '
          'guest\'s own interrupt counters.' % (
              ' --quick' if opts.quick else '', time.strftime('%Y-%m-%d %H:%M UTC',
                                                              time.gmtime()),
              'quick' if opts.quick else 'full'), '']
    data = {}
    for key, section in SECTIONS:
        if key in only:
            lines, data[key] = section(params, opts.out)
            md += lines
    md += ['Total time: %.0f s.' % (time.time() - started), '']
    with open(os.path.join(opts.out, 'seeds.md'), 'w') as f:
        f.write('\n'.join(md))
    with open(os.path.join(opts.out, 'seeds.json'), 'w') as f:
        json.dump(data, f, indent=1)
    print('bench-seeds: %s' % os.path.relpath(os.path.join(opts.out, 'seeds.md'), REPO))
    return 0
