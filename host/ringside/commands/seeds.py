# SPDX-License-Identifier: MIT
"""seeds: the seeds' benchmark tables on this machine, with guest cost.

Runs the measuring commands (each as `./ringside COMMAND ... --json FILE`,
a process of its own) with --cost and writes one markdown report,
build/bench/seeds.md, with PNG plots next to it (python3-matplotlib) and
each command's own text output (build/bench/*.txt):

  000  ping-pong sizes with fastpath on/off           (bench --ab fastpath=1,0)
  001  pktgen Mpps, split/packed, txpoll on/off, Linux (net)
  003  request/response with busy polling             (rr)
  004  stream h2g/g2h with credit lazy/eager, rxbuf 4096/65580 and smallcopy
       on/off, one switch at a time, with efficiency  (bench --ab KEY=A,B)
  linux     ringside vs Linux: ping-pong 64 B / 4 KiB, stream 64 KiB buffers
                                                      (vs-linux --configs 'split sleep')
  linux612  seed 000 from Linux itself: the 6.1 guest against the 6.12 one
                                                      (vs-linux --guests linux,linux-6.12)

and, first, a table of the direction of each change against the seed's
own published one (SEED_CHANGE). Every cell has the guest's instructions
per operation (round trip, KiB, packet), measured by the ringside-cost
plugin with the idle rate taken off where it is noise
(ringside/cost_measure.py); A/B tables give the cost delta with its spread
over rounds. --quick runs every table with short cells and one round
(tests/qemu/test_bench_seeds.py).

On the kernel's back ends under KVM (launcher options after `--`, e.g.
`ringside nested seeds -- --vsock-transport kernel`, or `--host nested`,
which does just that) the vsock tables are measured on
vhost-vsock, seed 001 sends into a tap served by vhost-net, seed 003 is
vhost-net's busy polling with poll-us windows, and the cost of an
operation is its VM exits: exits where the tables say insn, HLT exits for
halts, injected interrupts for irqs. `--host both` writes both reports and
build/bench/seeds-both.md, each seed's direction under TCG and under
nested KVM side by side.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import time

import ringside as rr

from .. import vhost_net
from ..cli import Parser
from ..cost_measure import spread
from ..images import FRONT_DOOR, REPO, linux_missing
from ..process import run_to_end
from ..results import add_options, load, publish
from ..table import markdown as table

NAME = 'seeds'
SUMMARY = "the seeds' tables with guest cost, against the seeds'"
GROUP = 'measure'
ALIASES = ('bench-seeds',)
PROG = 'ringside seeds'

OUT = os.path.join(REPO, 'build', 'bench')
SWITCHES_004 = (('credit', ('lazy', 'eager')), ('rxbuf', ('4096', '65580')),
                ('smallcopy', ('1', '0')))
FULL = {'rounds': 3, 'count': 300, 'warmup': 30, 'sizes': '64,512,4k', 'time': 3.0,
        'lengths': '4k,64k', 'pkts': 200000, 'net_rounds': 3, 'cmp_count': 500,
        'rr_sizes': '1,64,256,1024', 'rr_sessions': '1,50,100,200', 'rr_time': 2.0,
        'fp_lengths': '4k,64k,128k', 'fp_streams': '1,4'}
QUICK = {'rounds': 1, 'count': 100, 'warmup': 10, 'sizes': '64,4k', 'time': 1.0,
         'lengths': '64k', 'pkts': 20000, 'net_rounds': 1, 'cmp_count': 100,
         'rr_sizes': '64', 'rr_sessions': '1', 'rr_time': 1.0,
         'fp_lengths': '64k', 'fp_streams': '1'}
# Each seed's own published change, after / before, that the direction
# table holds ours against: the figures of the upstream patch threads'
# own benchmark tables (docs/techniques.md names each thread).
SEED_CHANGE = {
    # the 1st percentile: the path itself, where a busy host's tail (which
    # the mean carries here) does not reach
    '000': ('64 B ping-pong 1st-percentile latency, fastpath 0 → 1', 9.77 / 12.91,
            'seed 000 v4: 12.91 → 9.77 µs'),
    '001 split': ('pktgen Mpps, split ring, txpoll 0 → 1', 10.5 / 6.45,
                  'seed 001: 6.45 → 10.5 Mpps'),
    '001 packed': ('pktgen Mpps, packed ring, txpoll 0 → 1', 12.5 / 7.8,
                   'seed 001: 7.8 → 12.5 Mpps'),
    '003': ('RR transactions/s, 1 session, busy polling off → on', 1.04,
            'seed 003 smp=1: 1 B, 1 session, +4 %'),
    '004 credit': ('h2g 4 KiB Gb/s, credit eager → lazy', 6.044 / 3.326,
                   'seed 004 p 2+3: 3.326 → 6.044 Gb/s'),
    # the guest's receive buffers act on host to guest; the seed's large
    # g2h gain is the guest sending 64 KiB packets, which rxbuf is not
    '004 rxbuf': ('h2g 64 KiB Gb/s, rxbuf 4096 → 65580', 21.879 / 20.973,
                  'seed 004 p 4+5, h2g: 20.973 → 21.879 Gb/s'),
    '004 smallcopy': ('h2g 4 KiB Gb/s, smallcopy 0 → 1', 3.326 / 3.378,
                      'seed 004 p 1: 3.378 → 3.326 Gb/s'),
}


def run_tool(name, command, argv, outdir):
    """`ringside COMMAND ARGV` with its text output into outdir/NAME.txt
    and its results into outdir/NAME.json (this report's, not a run of
    its own under build/bench/); the result object."""
    text = os.path.join(outdir, name + '.txt')
    path = os.path.join(outdir, name + '.json')
    argv = [command, '--no-save', '--json', path] + argv
    print('%s: %s' % (PROG, ' '.join(argv)), file=sys.stderr, flush=True)
    with open(text, 'w') as f:
        status = run_to_end(command, [sys.executable, FRONT_DOOR] + argv, stdout=f)
    if status:
        raise SystemExit('%s: %s failed (%s); see %s' % (PROG, name, status, text))
    return load(path)[1]


def vsock_json(name, argv, outdir, p):
    return run_tool(name, 'bench', argv + [p['cost_flag']] + launcher_tail(p), outdir)


def launcher_tail(p):
    return ['--'] + p['launcher'] if p['launcher'] else []


def median(values):
    values = list(values)
    return statistics.median(values) if values else float('nan')


def fmt(v, digits=0):
    if v is None or v != v:
        return '-'
    return '%.*f' % (digits, v)


# a cost key of the TCG plugin's cells -> the same column in exits (KVM)
EXITS_OF = {'insns': 'exits', 'halts': 'hlt', 'irqs': 'inj'}


def cost_of(rs, key='insns'):
    """The cells' cost `key`: the plugin's (TCG), or its exits counterpart."""
    return ([r['cost'][key] for r in rs if 'cost' in r]
            or [r['exits'][EXITS_OF[key]] for r in rs if 'exits' in r and key in EXITS_OF])


def ab_row(what, a, b, unit, digits=0):
    """One A/B line: medians of A and B cost per op, delta, spreads."""
    ia, ib = cost_of(a), cost_of(b)
    ma, mb = median(ia), median(ib)
    delta = fmt(100.0 * (mb - ma) / ma, 1) + ' %' if ma else '-'
    return [what, fmt(ma, digits), fmt(mb, digits), delta,
            '%s %% / %s %%' % (fmt(spread(ia), 1), fmt(spread(ib), 1)), unit]


def ratio(before, after):
    """median(after) / median(before), None where a side is missing."""
    mb, ma = median(before), median(after)
    return ma / mb if mb == mb and ma == ma and mb else None


def direction(key, before, after, noise=None, cost=None):
    """A row of the direction table: our after / before for the seed's
    change `key` (SEED_CHANGE), with the spread of our figures; `cost`,
    (before, after) lists of the guest's cost per operation (instructions
    under TCG, exits under KVM), adds its after / before: exact where
    time is not."""
    if noise is None:
        noise = max(spread(before) or 0, spread(after) or 0) / 100
    return {'key': key, 'ours': ratio(before, after), 'noise': noise,
            'cost': ratio(*cost) if cost else None}


def verdict(ours, seed, noise):
    """Whether our change goes the seed's way, and roughly as far."""
    if ours is None:
        return '-'
    change, want = ours - 1, seed - 1
    if abs(change) <= max(noise, 0.02):
        return 'no change beyond the noise (±%.0f %%)' % (100 * max(noise, 0.02))
    if (change > 0) != (want > 0):
        return 'opposite direction'
    return 'same direction, %s' % ('similar size' if 0.5 <= change / want <= 2 else
                                   'smaller' if change / want < 0.5 else 'larger')


def direction_table(rows, unit):
    out = []
    for d in rows:
        what, seed, source = SEED_CHANGE[d['key']]
        out.append([d['key'], what, '%.2f (%s)' % (seed, source),
                    fmt(d['ours'], 2), verdict(d['ours'], seed, d['noise']),
                    fmt(d.get('cost'), 2)])
    return table(['seed', 'change', 'seed after/before', 'ours', 'verdict',
                  '%s/op after/before' % unit], out)


def text_block(path):
    """A tool's text output, as a code block in the report."""
    with open(path) as f:
        return ['```', f.read().rstrip(), '```', '']


# ------------------------------------------------------------------- 000

def seed000(p, outdir):
    res = vsock_json('seed000', ['--no-stream', '--sizes', p['sizes'], '--count',
                                 str(p['count']), '--warmup', str(p['warmup']),
                                 '--rounds', str(p['rounds']), '--ab', 'fastpath=1,0'], outdir,
                     p)
    rows, ab, plot = [], [], {}
    pp = res['pingpong']
    for size in sorted({r['size'] for _, r in pp}):
        cells = {}
        for conf in ('fastpath=1', 'fastpath=0'):
            rs = [r for c, r in pp if c == conf and r['size'] == size]
            cells[conf] = rs
            rows.append([size, conf, fmt(median(r['p1'] for r in rs) / 1000, 1),
                         fmt(median(r['p50'] for r in rs) / 1000, 1),
                         fmt(median(r['mean'] for r in rs) / 1000, 1),
                         fmt(median(r['p99'] for r in rs) / 1000, 1),
                         fmt(median(cost_of(rs)), p['digits']),
                         fmt(median(cost_of(rs, 'halts')), 2),
                         fmt(median(cost_of(rs, 'irqs')), 2),
                         fmt(median(cost_of(rs, 'idle_rate')))])
            plot.setdefault(conf, []).append((size, median(r['p50'] for r in rs) / 1000,
                                              median(cost_of(rs))))
        ab.append(ab_row('%d B round trip' % size, cells['fastpath=1'], cells['fastpath=0'],
                         p['unit'] + '/rt', p['digits']))
    top = next((r['cost'].get('top') for c, r in pp
                if c == 'fastpath=1' and r['size'] == 64 and r.get('cost', {}).get('top')), None)
    md = ['## Seed 000: ping-pong sizes, fastpath on/off', '',
          'bench ping-pong, %d round trips (+%d warm-up) per cell, %d round(s); '
          'latency medians over rounds in µs; guest cost per round trip.'
          % (p['count'], p['warmup'], p['rounds']), '']
    md += table(['size B', 'config', 'p1 µs', 'p50 µs', 'mean µs', 'p99 µs', p['unit'] + '/rt',
                 'halt/rt', 'irq/rt', 'idle insn/s'], rows)
    md += ['A/B cost (fastpath=1 → fastpath=0), medians over rounds, spread = (max-min)/mean:',
           '']
    md += table(['cell', p['unit'] + ' A', p['unit'] + ' B', 'delta', 'spread A / B', 'unit'],
                ab)
    if top:
        md += ['Top 10 ringside functions of a 64 B round trip (fastpath=1, first round; '
               'idle wake-ups inside the cell included):', '']
        md += table(['function', 'insn/rt'], [[n, fmt(v, 1)] for n, v in top])
    md += plot_pairs(outdir, 'seed000.png', 'Seed 000: ping-pong', plot, 'size B',
                     ('p50 µs', '%s / round trip' % p['unit_long']))
    md += seed000_streams(p, outdir)
    at64 = {c: [r for cc, r in pp if cc == c and r['size'] == 64]
            for c in ('fastpath=0', 'fastpath=1')}
    dirs = [direction('000', [r['p1'] for r in at64['fastpath=0']],
                      [r['p1'] for r in at64['fastpath=1']],
                      cost=(cost_of(at64['fastpath=0']), cost_of(at64['fastpath=1'])))]
    return md, {'ab': ab, 'top': top, 'direction': dirs}


def seed000_streams(p, outdir):
    """The seed's throughput table: guest-to-host streams, buffer size by
    parallel streams, fastpath 1 against 0, with the cost per MiB or KiB."""
    res = vsock_json('seed000-stream', ['--no-pingpong', '--dirs', 'g2h', '--length',
                                        p['fp_lengths'], '--parallel', p['fp_streams'],
                                        '--time', str(p['time']), '--rounds', str(p['rounds']),
                                        '--ab', 'fastpath=1,0'], outdir, p)
    rows = []
    st = res['stream']
    for length, par in sorted({(r['len'], r['parallel']) for _, r in st}):
        cells = {c: [r for cc, r in st if cc == c and (r['len'], r['parallel']) == (length, par)]
                 for c in ('fastpath=1', 'fastpath=0')}
        g = {c: median(r['gbps'] for r in rs) for c, rs in cells.items()}
        rows.append([length, par] + [fmt(g[c], 3) for c in cells]
                    + [fmt(g['fastpath=1'] / g['fastpath=0'], 2) if g['fastpath=0'] else '-']
                    + [fmt(median(cost_of(rs)), p['digits']) for rs in cells.values()])
    md = ['Guest to host streams, %g s per cell, %d round(s); Gb/s medians over rounds and '
          'the cost per %s moved:' % (p['time'], p['rounds'], p['stream_unit']), '']
    per = '%s/%s' % (p['unit'], p['stream_unit'])
    return md + table(['buffer B', 'streams', 'Gb/s fp=1', 'Gb/s fp=0', 'fp=1 / fp=0',
                       per + ' fp=1', per + ' fp=0'], rows)


# ------------------------------------------------------------------- 004

def seed004(p, outdir):
    rows, ab, plot, dirs = [], [], {}, []
    for key, (va, vb) in SWITCHES_004:
        res = vsock_json('seed004-%s' % key,
                         ['--no-pingpong', '--length', p['lengths'], '--parallel', '1',
                          '--time', str(p['time']), '--rounds', str(p['rounds']),
                          '--ab', '%s=%s,%s' % (key, va, vb)], outdir, p)
        st = res['stream']
        want = {'credit': ('h2g', 4096), 'rxbuf': ('h2g', 65536), 'smallcopy': ('h2g', 4096)}
        cell = [[r for c, r in st if c == '%s=%s' % (key, v)
                 and (r['dir'], r['len']) == want[key]] for v in (va, vb)]
        if cell[0] and cell[1]:
            # before → after: eager → lazy, 4096 → 65580, 0 → 1
            before, after = (cell[1], cell[0]) if key in ('credit', 'smallcopy') else cell
            dirs.append(direction('004 ' + key, [r['gbps'] for r in before],
                                  [r['gbps'] for r in after],
                                  cost=(cost_of(before), cost_of(after))))
        for d, length in sorted({(r['dir'], r['len']) for _, r in st}):
            sides = []
            for v in (va, vb):
                conf = '%s=%s' % (key, v)
                rs = [r for c, r in st if c == conf and (r['dir'], r['len']) == (d, length)]
                sides.append(rs)
                gbps = median(r['gbps'] for r in rs)
                rows.append([conf, d, length, fmt(gbps, 3),
                             fmt(median(r.get('mbps_per_cpu_percent', 0) for r in rs), 2),
                             fmt(median(cost_of(rs)), p['digits']),
                             fmt(median(cost_of(rs, 'halts')), 4),
                             fmt(median(cost_of(rs, 'irqs')), 4)])
                plot.setdefault('%s %s' % (d, length // 1024), []).append(
                        (conf, gbps, median(cost_of(rs))))
            ab.append(ab_row('%s=%s→%s %s %d B' % (key, va, vb, d, length), sides[0], sides[1],
                             '%s/%s' % (p['unit'], p['stream_unit']), p['digits']))
    md = ['## Seed 004: stream with credit, rxbuf and smallcopy switches', '',
          'bench stream, one stream, %g s per cell, %d round(s), one switch at a time '
          '(the others at their defaults); efficiency is Mb/s per CPU %% of ringside-bench '
          'plus QEMU (back end excluded); guest cost per %s moved.' % (
              p['time'], p['rounds'], p['stream_unit']),
          '']
    per = '/' + p['stream_unit']
    md += table(['config', 'dir', 'buffer B', 'Gb/s', 'Mb/s per CPU %', p['unit'] + per,
                 'halt' + per, 'irq' + per], rows)
    md += ['A/B cost per switch, medians over rounds:', '']
    md += table(['cell', p['unit'] + ' A', p['unit'] + ' B', 'delta', 'spread A / B', 'unit'],
                ab)
    md += plot_bars(outdir, 'seed004.png', 'Seed 004: stream', plot,
                    ('Gb/s', '%s / %s' % (p['unit_long'], p['stream_unit'])))
    return md, {'ab': ab, 'direction': dirs}


# ------------------------------------------------------------------- 001

def seed001(p, outdir):
    # under KVM the peer is a tap on the kernel's vhost-net, and net counts
    # the exits by itself
    peer = ['--peer', 'vhost-net'] if p['kvm'] else ['--cost']
    res = run_tool('seed001', 'net', peer + ['--count', str(p['pkts']),
                                             '--rounds', str(p['net_rounds'])], outdir)
    rows, plot = [], {}
    u = p['unit']
    # the cost columns: the plugin's (TCG) or KVM's exits per packet
    key = 'exits_per_packet' if p['kvm'] else 'insns_per_packet'

    def row(guest, t, txpoll):
        rows.append([guest, t['ring'], txpoll, fmt(t['mpps_median'], 4),
                     '%s..%s' % (fmt(t['mpps_min'], 4), fmt(t['mpps_max'], 4)),
                     fmt(t.get(key), p['digits'] + 2 if p['kvm'] else 0),
                     fmt(t.get('insns_min'), 0), fmt(t.get('insns_spread'), 1) + ' %',
                     fmt(t.get('halts_per_packet'), 4), fmt(t.get('irqs_per_packet'), 4)])
    for t in res['summary']:
        row('ringside', t, t['txpoll'])
        plot.setdefault('Mpps', []).append(('%s tp=%d' % (t['ring'], t['txpoll']),
                                            t['mpps_median'], t.get(key)))
    for t in res['linux_summary']:
        row('Linux', t, '-')
        plot.setdefault('Mpps', []).append(('Linux %s' % t['ring'], t['mpps_median'],
                                            t.get(key)))
    ab, dirs = [], []
    by = {}
    for r in res['runs']:
        by.setdefault((r['ring'], r['txpoll']), []).append(r)
    for ring in ('split', 'packed'):
        if (ring, 1) in by and (ring, 0) in by:
            ab.append(ab_row('%s txpoll=1→0' % ring, by[(ring, 1)], by[(ring, 0)], u + '/pkt',
                             p['digits'] + 2 if p['kvm'] else 0))
            dirs.append(direction('001 ' + ring, [r['mpps'] for r in by[(ring, 0)]],
                                  [r['mpps'] for r in by[(ring, 1)]],
                                  cost=(cost_of(by[(ring, 0)]), cost_of(by[(ring, 1)]))))
    for tp in (1, 0):
        if ('split', tp) in by and ('packed', tp) in by:
            ab.append(ab_row('txpoll=%d split→packed' % tp, by[('split', tp)],
                             by[('packed', tp)], u + '/pkt'))
    peer = ('a tap served by the kernel\'s vhost-net (every frame counted by the tap; split '
            'ring only, the kernel\'s vhost has no packed ring)' if p['kvm'] else
            'dpdk-testpmd rxonly over vhost-user-net')
    md = ['## Seed 001: pktgen Mpps, split/packed, txpoll on/off', '',
          'net: pktgen → %s, %d × %d B frames, burst %d, %d round(s); Linux %s pktgen '
          'on the same QEMU options; guest cost per packet sent.'
          % (peer, p['pkts'], res['params']['size'], res['params']['burst'],
             p['net_rounds'], res.get('linux_kernel') or ''), '']
    md += table(['guest', 'ring', 'txpoll', 'Mpps', 'min..max', u + '/pkt', 'insn/pkt min',
                 'spread', 'halt/pkt', 'irq/pkt'], rows)
    md += ['pktgen never waits: when the TX ring is full it polls for completions, so '
           'its cost per packet grows when the host consumes more slowly (a busy '
           'host); the minimum over rounds is closest to the work per packet.', '']
    md += ['A/B cost, medians over rounds:', '']
    md += table(['cell', u + ' A', u + ' B', 'delta', 'spread A / B', 'unit'], ab)
    md += plot_bars(outdir, 'seed001.png', 'Seed 001: pktgen', plot,
                    ('Mpps', '%s / pkt' % p['unit_long']))
    return md, {'ab': ab, 'direction': dirs}


# ------------------------------------------------------------------- 003

def seed003(p, outdir):
    """Request/response with busy polling: the kernel's vhost-net with
    poll-us windows (KVM), or our back end's --poll against sleeping on
    eventfds (TCG, over vsock)."""
    cells = ['--sizes', p['rr_sizes'], '-P', p['rr_sessions'], '-t', str(p['rr_time']),
             '--plots', outdir]
    if p['kvm']:
        args = ['--net', 'vhost-net', '--guests', 'ringside,linux', '--poll-us', '0,50,rtt']
        how = ('rr --net vhost-net: UDP echo through a tap served by the kernel\'s '
               'vhost-net, one boot per busy-poll window (poll-us 0, 50 and rtt: the p50 '
               'round trip of the poll-us=0 boot\'s smallest cell; the seed\'s 50 µs is about '
               'one round trip on bare-metal KVM, a nested round trip is many times longer). '
               'Columns as the seed\'s: normalize is transactions/s per CPU of QEMU and its '
               'vhost workers, packets the tap\'s, exits KVM\'s per second.')
    else:
        args = ['--guests', 'ringside', '--no-udp', '--backends', 'sleep,poll']
        how = ('rr over vsock on our vhost-user back end: its --poll (busy polling the '
               'rings) against sleeping on eventfds; the analogue of the seed\'s vhost_net '
               'busy polling on our own back end.')
    res = run_tool('seed003', 'rr', args + cells + launcher_tail(p), outdir)
    one = [c for c in res['cells'] if c['sessions'] == min(c['sessions'] for c in res['cells'])
           and c['size'] == min(c['size'] for c in res['cells']) and c['guest'] == 'ringside']
    base, polled = ('pu0', 'pu%d' % res['rtt_windows']['ringside']['poll_us']) \
        if p['kvm'] and 'ringside' in res.get('rtt_windows', {}) else ('sleep', 'poll')
    before = [c for c in one if c['backend'] == base]
    after = [c for c in one if c['backend'] == polled]
    # exits per transaction where KVM counted them (TCG: no cost plugin here)
    dirs = [direction('003', [c['tps'] for c in before], [c['tps'] for c in after], noise=0.05,
                      cost=([c['exits_per_txn'] for c in before if c.get('exits_per_txn')],
                            [c['exits_per_txn'] for c in after if c.get('exits_per_txn')]))]
    dirs = dirs if before and after else []
    md = ['## Seed 003: request/response with busy polling', '', how, '']
    md += text_block(os.path.join(outdir, 'seed003.txt'))
    return md, {'direction': dirs, 'cells': res['cells'],
                'rtt_windows': res.get('rtt_windows')}


# ------------------------------------------------------------------- Linux

def versus_linux(p, outdir):
    """vs-linux --cost once per round (each round boots both guests):
    medians over rounds, and the spread of the instruction counts."""
    by = {}
    for rnd in range(p['rounds']):
        configs = [] if p['kvm'] else ['--configs', 'split sleep']
        res = run_tool('linux-%d' % rnd, 'vs-linux',
                       [p['cost_flag']] + configs + ['--sizes', '64,4096', '--count',
                                                     str(p['cmp_count']), '--warmup',
                                                     str(p['warmup']), '--time', str(p['time'])]
                       + launcher_tail(p), outdir)
        # [config, [metric, size, dir], ringside, linux, ratio, ...]
        for row in res['rows']:
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
             ('stream h2g 64 KiB', 65536, 'h2g', p['stream_unit'], 'Gb/s'),
             ('stream g2h 64 KiB', 65536, 'g2h', p['stream_unit'], 'Gb/s'))
    for name, size, d, unit, perf in cells:
        ir, il, sr, sl = get('%s/%s' % (p['unit'], unit), size, d)
        pr, pl = get(perf, size, d)[:2]
        hr, hl = get('hlt/' + unit, size, d)[:2]
        qr, ql = get('irq/' + unit, size, d)[:2]
        scale = 1000.0 if perf == 'p50 ns' else 1.0
        rows.append([name, '%s %s' % (fmt(pr / scale if pr else None, 3 if scale == 1 else 1),
                                      'µs' if scale > 1 else 'Gb/s'),
                     '%s %s' % (fmt(pl / scale if pl else None, 3 if scale == 1 else 1),
                                'µs' if scale > 1 else 'Gb/s'),
                     fmt(ir, p['digits']), fmt(il, p['digits']),
                     fmt(ir / il if ir and il else None, 3),
                     '%s %% / %s %%' % (fmt(sr, 1), fmt(sl, 1)),
                     '%s / %s' % (fmt(hr, 3), fmt(hl, 3)), '%s / %s' % (fmt(qr, 3), fmt(ql, 3)),
                     '%s/%s' % (p['unit'], unit)])
        plot.setdefault('insn', []).append((name, ir, il))
    md = ['## ringside vs Linux, same QEMU, back end and client', '',
          'vs-linux %s (%s): ringside (irq=msix idle=halt) and Debian\'s Linux on the '
          'same QEMU; ping-pong %d round trips, stream one 64 KiB-buffer stream for %g s; '
          'medians over %d round(s) (both guests booted per round), spread of the cost over '
          'rounds; %s per round trip or %s.'
          % (p['cost_flag'], 'the kernel\'s vhost-vsock under KVM' if p['kvm'] else
             'split ring, back end sleeping on eventfds', p['cmp_count'], p['time'],
             p['rounds'], p['unit_long'], p['stream_unit']), '']
    md += table(['cell', 'ringside', 'Linux', 'ringside ' + p['unit'], 'Linux ' + p['unit'],
                 'ratio', 'spread r / L', 'halts r / L', 'irqs r / L', 'unit'], rows)
    md += plot_versus(outdir, 'linux.png', plot['insn'])
    return md, {}


# ------------------------------------------------------------------- 6.12

def linux_before_after(p, outdir):
    """Seed 000 from Linux itself: Debian's 6.1 guest (before the fast
    path) against its 6.12 one (after), same QEMU and back end."""
    run_tool('linux612', 'vs-linux',
             [p['cost_flag'], '--guests', 'linux,linux-6.12', '--sizes', '64,4096',
              '--count', str(p['cmp_count']), '--warmup', str(p['warmup']),
              '--time', str(p['time']), '--rounds', str(p['rounds'])] + launcher_tail(p),
             outdir)
    md = ['## Seed 000 from Linux itself: 6.1 against 6.12', '',
          'vs-linux --guests linux,linux-6.12: the vsock fast path is in Linux from '
          'v6.12 (Debian\'s 6.1 lacks it); the two kernels also differ by two years of '
          'everything else, so this is the direction Linux users see, not the patch alone.',
          '']
    return md + text_block(os.path.join(outdir, 'linux612.txt')), {}


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

SECTIONS = (('000', seed000), ('001', seed001), ('003', seed003), ('004', seed004),
            ('linux', versus_linux), ('linux612', linux_before_after))


def report_here(opts, argv, only, params):
    """Run the sections on this host; seeds.md and seeds.json in opts.out."""
    kvm = params['kvm']
    started = time.time()
    command = ' '.join(['ringside seeds'] + argv)
    if kvm:
        how = ('accel kvm, the kernel\'s vhost-vsock and vhost-net. The cost of an operation '
               'is its VM exits, counted by KVM\'s tracepoints on the host '
               '(ringside/kvm_exits.py); halts are HLT exits, interrupts the ones KVM injected.')
    else:
        how = ('accel tcg, our back ends. Guest cost is counted by the ringside-cost QEMU '
               'plugin: instructions the guest executed per operation, the idle rate (measured '
               'before each cell) taken off where it is noise; halts and interrupts per '
               'operation are the plugin\'s halts and the guest\'s own interrupt counters.')
    md = ['# The seeds\' tables with guest cost', '',
          'Generated by `%s` on %s (%s run, %s' % (
              command, time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()),
              'quick' if opts.quick else 'full', how), '']
    data, body = {}, []
    for key, section in SECTIONS:
        if key in only:
            lines, data[key] = section(params, opts.out)
            body += lines
    dirs = [d for v in data.values() for d in v.get('direction', [])]
    if dirs:
        md += ['## Direction of change against the seeds', '',
               'Ours is after / before, medians over rounds; the noise is the larger spread '
               '(max-min)/mean of the two sides over rounds, at least 2 % (seed 003: one '
               'cell each side, 5 % taken as its noise).', '']
        md += direction_table(dirs, params['unit'])
    md += body + ['Total time: %.0f s.' % (time.time() - started), '']
    with open(os.path.join(opts.out, 'seeds.md'), 'w') as f:
        f.write('\n'.join(md))
    # the sections' data beside the report, as before the saved run had it too
    with open(os.path.join(opts.out, 'seeds.json'), 'w') as f:
        json.dump(data, f, indent=1)
    print('%s: %s' % (PROG, os.path.relpath(os.path.join(opts.out, 'seeds.md'), REPO)))
    return data


def report_nested(opts):
    """This command again inside `ringside nested`, on the kernel's back
    ends: its report in opts.out/nested; its data, or None if it failed."""
    out = os.path.join(opts.out, 'nested')
    os.makedirs(out, exist_ok=True)
    result = os.path.join(out, 'seeds.json')
    argv = [sys.executable, FRONT_DOOR, 'nested', '--timeout', '14400', FRONT_DOOR, 'seeds',
            '--no-save', '--json', result, '--out', out]
    argv += (['--quick'] if opts.quick else []) + ['--', '--vsock-transport', 'kernel']
    print('%s: nested: %s' % (PROG, ' '.join(os.path.relpath(a, REPO) if a.startswith(REPO)
                                             else a for a in argv)), file=sys.stderr)
    status = run_to_end('nested', argv)
    if status:
        print('%s: the nested run failed (%d)' % (PROG, status), file=sys.stderr)
        return None
    return load(result)[1]


def report_both(opts, here, nested):
    """seeds-both.md: the direction of every seed's change under TCG on our
    back ends and under nested KVM on the kernel's, beside the seed's."""
    def by_key(data):
        return {d['key']: d for v in data.values() for d in v.get('direction', [])}
    tcg, kvm = by_key(here), by_key(nested)
    rows = []
    for key, (what, seed, source) in SEED_CHANGE.items():
        a, b = tcg.get(key), kvm.get(key)
        rows.append([key, what, '%.2f (%s)' % (seed, source),
                     fmt(a['ours'] if a else None, 2),
                     verdict(a['ours'], seed, a['noise']) if a else '-',
                     fmt(a.get('cost') if a else None, 2),
                     fmt(b['ours'] if b else None, 2),
                     verdict(b['ours'], seed, b['noise']) if b else '-',
                     fmt(b.get('cost') if b else None, 2)])
    md = ['# The seeds, twice: our back ends under TCG, the kernel\'s under nested KVM', '',
          'Generated by `ringside seeds --host both%s` on %s. The tables: '
          '[TCG, our back ends](seeds.md), [nested KVM, the kernel\'s vhost-vsock and '
          'vhost-net](nested/seeds.md). Nested KVM figures are relative: ratios within '
          'one run.' % (' --quick' if opts.quick else '',
                        time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())), '']
    md += table(['seed', 'change', 'seed after/before', 'TCG ours', 'TCG verdict',
                 'TCG insn/op', 'nested KVM ours', 'nested KVM verdict', 'KVM exits/op'],
                rows)
    md += ['The insn/op and exits/op columns are the guest\'s cost per operation after / '
           'before (instructions under TCG, VM exits under KVM): exact where times are not.',
           '']
    path = os.path.join(opts.out, 'seeds-both.md')
    with open(path, 'w') as f:
        f.write('\n'.join(md))
    print('%s: %s' % (PROG, os.path.relpath(path, REPO)))


def main(argv):
    return seeds(argv)[0]


def seeds(argv):
    """(exit status, the sections' data)."""
    p = Parser(prog=PROG, description=__doc__.split('\n')[0],
               usage='%(prog)s [options] [-- launcher options]')
    p.add_argument('--quick', action='store_true',
                   help='every table with short cells and one round (a few minutes)')
    p.add_argument('--only', default=','.join(s for s, _ in SECTIONS),
                   help='sections, comma separated (%s)' % ','.join(s for s, _ in SECTIONS))
    p.add_argument('--host', choices=('here', 'nested', 'both'), default='here',
                   help='here: this host as it is (TCG and our back ends, or KVM and the '
                        'kernel\'s with -- --vsock-transport kernel); nested: all of it '
                        'inside ringside nested on the kernel\'s back ends (report in '
                        'OUT/nested); '
                        'both: here, then nested, and OUT/seeds-both.md side by side (here)')
    p.add_argument('--out', default=OUT, help='output directory (build/bench)')
    add_options(p)
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.host != 'here':
        if opts.launcher_args or opts.only != p.get_default('only'):
            p.error('--host %s takes no --only and no launcher options' % opts.host)
        os.makedirs(opts.out, exist_ok=True)
        here = None
        if opts.host == 'both':
            # --host both takes no --only and no launcher options: the run
            # here needs only these
            status, here = seeds(['--out', opts.out, '--no-save']
                                 + (['--quick'] if opts.quick else []))
            if status:
                return status, None
        nested = report_nested(opts)
        if nested is None:
            return 1, None
        if here is not None:
            report_both(opts, here, nested)
        publish(PROG, opts, {'here': here, 'nested': nested}, accel='kvm')
        return 0, nested
    kvm = rr.parse_args(['--vsock'] + opts.launcher_args).vsock_transport == 'kernel'
    only = opts.only.split(',')
    if any(o not in dict(SECTIONS) for o in only):
        p.error('--only takes %s' % ', '.join(s for s, _ in SECTIONS))
    params = dict(QUICK if opts.quick else FULL, kvm=kvm, launcher=opts.launcher_args,
                  cost_flag='--exits' if kvm else '--cost', unit='exits' if kvm else 'insn',
                  unit_long='VM exits' if kvm else 'guest insn',
                  stream_unit='MiB' if kvm else 'KiB', digits=2 if kvm else 0)
    os.makedirs(opts.out, exist_ok=True)
    if not kvm and not shutil.which('dpdk-testpmd') and '001' in only:
        p.error('seed 001 needs dpdk-testpmd (package dpdk); leave it out with --only')
    if kvm and ('001' in only or '003' in only) and vhost_net.usable():
        p.error('seeds 001 and 003 on KVM need vhost-net: %s' % vhost_net.usable())
    if 'linux612' in only and linux_missing('linux-6.12'):
        p.error(linux_missing('linux-6.12'))
    data = report_here(opts, argv, only, params)
    publish(PROG, opts, data, accel='kvm' if kvm else 'tcg')
    return 0, data
