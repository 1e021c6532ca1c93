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

Absolute numbers under TCG mean little; compare ratios within one run.
"""

import argparse
import json
import os
import re
import statistics
import time

import ringside as rr

from .bench_tools import forward_args, print_tools, run_tools
from .benchlib import BENCH, REPO, Parser, run_bench, wait_vsock_up

PROG = 'bench-vsock'
QUEUE_RE = re.compile(r'^\s+(rxq|txq|evq): added (\d+) completed (\d+) kicks (\d+) '
                      r'suppressed (\d+) interrupts (\d+)', re.M)


def size_list(text):
    out = []
    for word in text.split(','):
        word = word.strip().lower()
        scale = 1
        if word.endswith('k'):
            scale, word = 1024, word[:-1]
        elif word.endswith('m'):
            scale, word = 1 << 20, word[:-1]
        try:
            value = int(word) * scale
        except ValueError:
            raise argparse.ArgumentTypeError('bad size %r' % word)
        if value <= 0:
            raise argparse.ArgumentTypeError('sizes must be positive')
        out.append(value)
    return out


def int_list(text):
    try:
        values = [int(w) for w in text.split(',')]
    except ValueError:
        raise argparse.ArgumentTypeError('expected numbers like 1,4')
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError('expected positive numbers')
    return values


def ab_switch(text):
    key, sep, values = text.partition('=')
    choices = values.split(',')
    if not sep or not key or len(choices) < 2 or not all(choices):
        raise argparse.ArgumentTypeError('expected KEY=A,B (e.g. fastpath=1,0)')
    return key, choices


def parse_args(argv):
    p = Parser(
            prog='bench-vsock',
            description='Boot ringside with vsock and print ping-pong and stream tables.',
            epilog='Launcher options after "--" go to host/ringside-run '
                   '(e.g. -- --machine pc --firmware uefi).')
    p.add_argument('--sizes', type=size_list, default=size_list('64,512,4k'),
                   help='ping-pong sizes (default 64,512,4k)')
    p.add_argument('--count', type=int, default=300, help='round trips per size (300)')
    p.add_argument('--warmup', type=int, default=30, help='unmeasured round trips (30)')
    p.add_argument('--lengths', type=size_list, default=size_list('4k,64k'),
                   help='stream buffer lengths (default 4k,64k)')
    p.add_argument('--streams', type=int_list, default=[1, 4],
                   help='parallel streams (default 1,4)')
    p.add_argument('--dirs', default='h2g,g2h', help='stream directions (h2g,g2h)')
    p.add_argument('--time', type=float, default=3.0, help='seconds per stream cell (3)')
    p.add_argument('--ab', type=ab_switch, action='append', default=[],
                   help='switch KEY between values, interleaved (repeatable)')
    p.add_argument('--rounds', type=int, default=1,
                   help='repeat every A/B cell this many times (1)')
    p.add_argument('--no-pingpong', action='store_true')
    p.add_argument('--no-stream', action='store_true')
    p.add_argument('--tools', action='store_true',
                   help='also sockperf through the TCP forward, ringside-bench forwarded '
                        'vs hybrid (the forwarder\'s overhead)')
    p.add_argument('--json', metavar='FILE', help='also write all results as JSON')
    p.add_argument('--boot', choices=['iso', 'elf'], default='iso',
                   help='boot the ISO (default) or the ELF via -kernel')
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    dirs = opts.dirs.split(',')
    if any(d not in ('h2g', 'g2h') for d in dirs):
        p.error('--dirs takes h2g and/or g2h')
    opts.dirs = dirs
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

    def command(self, cmd, timeout=60):
        out = self.launch.console.command(cmd, timeout)
        if out.lstrip().startswith('error:'):
            raise SystemExit('bench-vsock: guest rejected %r: %s' % (cmd, out.strip()))
        return out

    def queue_counters(self):
        out = self.command('stats virtio-vsock')
        return {m[0]: [int(x) for x in m[1:]] for m in QUEUE_RE.findall(out)}

    def apply(self, combo, uds):
        changed = False
        for key, value in combo:
            before = self.command('get %s' % key).strip()
            self.command('set %s=%s' % (key, value))
            changed |= before != '%s=%s' % (key, value)
        if changed and uds:
            wait_vsock_up(uds, prog=PROG)


def pingpong_cell(guest, target, opts, size):
    before = guest.queue_counters()
    res = run_bench(['pingpong'] + target + ['--size', str(size), '--count', str(opts.count),
                                             '--warmup', str(opts.warmup)], 600, PROG)['results'][0]
    after = guest.queue_counters()
    rounds = opts.count + opts.warmup
    for q in ('txq', 'rxq'):
        if q in before and q in after:
            res[q + '_kicks_per_rt'] = (after[q][2] - before[q][2]) / rounds
            res[q + '_irqs_per_rt'] = (after[q][4] - before[q][4]) / rounds
    return res


def stream_cell(target, opts, direction, length, streams):
    port = '1235' if direction == 'h2g' else '1236'
    return run_bench(['stream'] + target + ['--port', port, '--dir', direction, '-l', str(length),
                                            '-P', str(streams), '--time', str(opts.time)],
                     opts.time * 10 + 120, PROG)


def print_pingpong(rows):
    print('\nping-pong (host-guest-host round trip), ns')
    print('%-28s %7s %7s %9s %9s %10s %9s %9s %9s %8s %8s' % (
            'config', 'size', 'rounds', '1st perc', '50th', 'mean', '99th', '99.9th', 'max',
            'kick/rt', 'irq/rt'))
    for conf, r in rows:
        kicks = r.get('txq_kicks_per_rt', 0) + r.get('rxq_kicks_per_rt', 0)
        irqs = r.get('txq_irqs_per_rt', 0) + r.get('rxq_irqs_per_rt', 0)
        print('%-28s %7d %7d %9.0f %9.0f %10.1f %9.0f %9.0f %9.0f %8.2f %8.2f' % (
                conf, r['size'], r['count'], r['p1'], r['p50'], r['mean'], r['p99'],
                r['p99_9'], r['max'], kicks, irqs))


def print_stream(rows):
    print('\nstream throughput, Gb/s (G = 10^9)')
    print('%-28s %4s %7s %3s %9s %6s %8s  %s' % ('config', 'dir', 'len', 'P', 'total', 'jain',
                                                 'slowest', 'per stream'))
    for conf, r in rows:
        print('%-28s %4s %7d %3d %9.3f %6.3f %8.3f  %s' % (
                conf, r['dir'], r['len'], r['parallel'], r['gbps'], r.get('jain', 0),
                r.get('slowest_gbps', 0), ' '.join('%.3f' % g for g in r['streams_gbps'])))


def kicks(r):
    return r.get('txq_kicks_per_rt', 0) + r.get('rxq_kicks_per_rt', 0)


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
                    statistics.median(map(kicks, b))))
        cells = sorted({(r['dir'], r['len'], r['parallel']) for _, r in results['stream']})
        for d, length, par in cells:
            def gbps(conf):
                return statistics.median(r['gbps'] for c, r in results['stream']
                                         if c == conf and (r['dir'], r['len'], r['parallel'])
                                         == (d, length, par))
            a, b = gbps(base), gbps(other)
            print('  stream %s %6d B x%d  %.3f -> %.3f Gb/s  ratio %.2f' % (
                    d, length, par, a, b, b / a if a else float('nan')))


def main(argv):
    opts = parse_args(argv)
    if not os.access(BENCH, os.X_OK):
        raise SystemExit('bench-vsock: %s not found (run make)' % BENCH)
    fwd_args, fwd_ports = forward_args() if opts.tools else ([], {})
    lopts = rr.parse_args(['--vsock', '--boot', opts.boot, '--accel', 'auto']
                          + fwd_args + opts.launcher_args)
    accel = rr.choose_accel(lopts)
    log = open(os.path.join(REPO, 'build', 'bench-vsock-qemu.log'), 'w')
    results = {'pingpong': [], 'stream': []}
    with rr.Launch(lopts, accel, qemu_stderr=log) as launch:
        launch.wait_ready()
        guest = Guest(rr, launch)
        if rr.vsock_kernel(lopts, accel):
            # the host kernel's vhost-vsock: AF_VSOCK to the guest's CID
            uds, target = None, ['--cid', str(lopts.vsock_cid)]
        else:
            uds = launch.opts.vsock_uds
            target = ['--uds', uds]
            wait_vsock_up(uds, prog=PROG)
        print('ringside vsock benchmark: accel %s, %s boot, %s, %s' % (
                accel, opts.boot, 'kernel vhost-vsock' if uds is None else
                'back end ' + os.path.basename(lopts.vsock_backend),
                time.strftime('%Y-%m-%d %H:%M')))
        print(guest.command('config').rstrip())
        combos = variants(opts.ab)
        for r in range(opts.rounds):
            if not opts.no_pingpong:
                for size in opts.sizes:
                    for combo in combos:
                        guest.apply(combo, uds)
                        res = pingpong_cell(guest, target, opts, size)
                        results['pingpong'].append((label(combo), res))
            if not opts.no_stream:
                for d in opts.dirs:
                    for length in opts.lengths:
                        for streams in opts.streams:
                            for combo in combos:
                                guest.apply(combo, uds)
                                res = stream_cell(target, opts, d, length,
                                                  streams)
                                results['stream'].append((label(combo), res))
        if opts.tools and uds:
            results['tools'] = run_tools(opts, uds, fwd_ports, PROG)
        elif opts.tools:
            print('%s: --tools needs the vhost-user back end (its TCP forwarding)' % PROG)
        stats = guest.command('stats')
        launch.poweroff()
    if results['pingpong']:
        print_pingpong(results['pingpong'])
    if results['stream']:
        print_stream(results['stream'])
    if opts.ab:
        print_ratios(results, variants(opts.ab))
    if results.get('tools'):
        print_tools(results['tools'])
    print('\nguest counters at the end:\n' + stats.rstrip())
    if opts.json:
        with open(opts.json, 'w') as f:
            json.dump(results, f, indent=1)
    return 0
