# SPDX-License-Identifier: MIT
"""cost: the standard table of guest instructions per operation.

Boots ringside (and with --guests linux the Linux guest of make
linux-guest) with the vsock back end and the ringside-cost plugin, then
measures with the counters bracketed tightly around each workload (idle,
64 B and 4 KiB echo round trips, a stream each way). What the guest does
while it waits is measured as an idle rate just before each workload and
taken off, so the numbers are the work of the operations themselves
(ringside/cost_measure.py).
"""

import os
import statistics
import sys
import tempfile

import ringside as rr

from .. import cost, linux_guest, measure
from ..benchlib import hybrid_connect
from ..cli import Parser, nonneg_float, nonneg_int, positive_int
from ..cost_measure import (CMDLINE, ECHO, IO_TIMEOUT, idle_rate, pingpong, roundtrips, spread,
                            stream_g2h, stream_h2g)
from ..images import COST_PLUGIN, LINUX_INITRD, LINUX_KERNEL, REPO
from ..results import Cells, add_options, publish
from ..table import Column, Table
from ..wait import until

NAME = 'cost'
SUMMARY = 'guest instructions per operation, the standard table'
GROUP = 'measure'
ALIASES = ('cost-measure',)
PROG = 'ringside cost'
BOOT_TIMEOUT = 300
ELF = os.path.join(REPO, 'build', 'ringside.elf')


class CostTable:
    """The guest instructions table: printed as it grows, kept for --json."""

    def __init__(self):
        self.rows = []
        self.table = Table([Column('guest instructions', 30, left=True),
                            Column('mean', 10, '%.1f'), Column('min', 10, '%.1f'),
                            Column('max', 10, '%.1f'), Column('spread', 8, '%.2f%%')])
        print('\n'.join(self.table.head()))

    def row(self, name, vals):
        r = {'what': name, 'mean': statistics.mean(vals), 'min': min(vals), 'max': max(vals),
             'spread_pct': spread(vals), 'runs': list(vals)}
        self.rows.append(r)
        print(self.table.format(name, r['mean'], r['min'], r['max'], r['spread_pct']))


def launch(guest, opts, block_path, log_dir):
    """A started Launch with the vsock back end and the plugin counting
    into block_path: ringside by PVH, or the Linux guest."""
    args = ['--boot', 'elf', '--vsock', '--accel', 'tcg', '--cost-block',
            block_path + ',prof=on']
    if guest == 'linux':
        args += linux_guest.linux_launch_args('linux')
    else:
        args += ['--cmdline', opts.cmdline]
    err = open(os.path.join(log_dir, 'qemu.stderr.log'), 'wb')
    ser = open(os.path.join(log_dir, 'serial.log'), 'wb')
    la = rr.Launch(rr.parse_args(args), 'tcg', qemu_stderr=err, log=ser)
    la.start()

    def echo_answers():
        try:
            hybrid_connect(la.opts.vsock_uds, ECHO, IO_TIMEOUT).close()
            return True
        except OSError:
            return False
    try:
        la.wait_ready(BOOT_TIMEOUT, linux=guest == 'linux')
        # the back end takes connections once it has the rings
        until(echo_answers, 60, "the guest's echo", interval=0.2)
    except BaseException:
        la.stop()
        raise
    return la


def read_kallsyms(console, path):
    """The Linux guest's /proc/kallsyms (kernel and modules) into path:
    Debian's /boot/System.map is a stub. Returns the symbols."""
    console.send('kallsyms\n')
    m = console.wait_for(r'kallsyms-begin\r?\n((?:.|\n)*?)kallsyms-end\r?\n', 600,
                         what='kallsyms')
    with open(path, 'w') as f:
        f.write(m.group(1).replace('\r', ''))
    return cost.system_map_symbols(path)


def measure_linux(opts, la, block, tmp):
    symbols = read_kallsyms(la.console, os.path.join(tmp, 'kallsyms'))
    uds = la.opts.vsock_uds
    print('%s: Linux guest; %d rounds; round trips: %d per round, %g s apart; symbols: %s'
          % (PROG, opts.rounds, opts.count, opts.gap, os.path.join(tmp, 'kallsyms')))
    table = CostTable()
    table.row('idle, per second', [idle_rate(block, 2.0) for _ in range(opts.rounds)])
    last = None
    for size in (64, 4096):
        vals = []
        with hybrid_connect(uds, ECHO, IO_TIMEOUT) as s:
            pingpong(block, None, size, 200, sock=s, gap=opts.gap)
            for _ in range(opts.rounds):
                v, span = pingpong(block, None, size, opts.count, 0, s, opts.gap)
                vals.append(v)
                last = last or span
        table.row('%d B round trip, total' % size, vals)
    total = opts.mib << 20
    table.row('h2g stream 64 KiB, per KiB',
              [stream_h2g(block, uds, total)[0] for _ in range(opts.rounds)])
    table.row('g2h stream 64 KiB, per KiB',
              [stream_g2h(block, uds, total)[0] for _ in range(opts.rounds)])
    print('\ntop functions of a 64 B round trip (first run; idle included):')
    for line in cost.report(last.delta, symbols, opts.count, opts.top, 'rt')[10:]:
        print(line)
    return table.rows


def measure_ringside(opts, la, block, tmp):
    symbols = cost.elf_symbols(ELF)
    uds = la.opts.vsock_uds
    print('%s: ringside %s; %d rounds; round trips: %d per round, %g s apart, one connection'
          % (PROG, opts.cmdline, opts.rounds, opts.count, opts.gap))
    table = CostTable()
    rates = [idle_rate(block, 2.0) for _ in range(opts.rounds)]
    table.row('idle, per second', rates)
    table.row('idle, per wake-up', [r.per_halt for r in rates])
    spans64 = None
    for size in (64, 4096):
        rows, spans = roundtrips(block, uds, symbols, size, opts.count, opts.rounds, opts.gap)
        spans64 = spans64 or spans
        for key, vals in rows.items():
            table.row('%d B round trip, %s' % (size, key), vals)
    total = opts.mib << 20
    streams = {}
    for name, fn in (('h2g', stream_h2g), ('g2h', stream_g2h)):
        runs = [fn(block, uds, total) for _ in range(opts.rounds)]
        table.row('%s stream 64 KiB, per KiB' % name, [r[0] for r in runs])
        streams[name] = runs[-1][1]
    print('\ntop functions of a 64 B round trip (last run; idle wake-ups included):')
    for line in cost.report(spans64[-1].delta, symbols, opts.count, opts.top, 'rt')[10:]:
        print(line)
    if opts.stream_top:
        for name, span in streams.items():
            print('\ntop functions of a %s stream per 64 KiB (last run):' % name)
            for line in cost.report(span.delta, symbols, total >> 16, opts.stream_top,
                                    '64K')[10:]:
                print(line)
    return table.rows


def build_parser():
    p = Parser(prog=PROG, usage='%(prog)s [options]',
               description='Guest instructions per operation (idle, echo round trips, '
                           'streams), counted by\nthe ringside-cost plugin under TCG.')
    measure.add(p, guests='ringside', rounds=3, count=2000)
    p.add_argument('--gap', type=nonneg_float, default=0.0005, metavar='S',
                   help='seconds after each reply (0: back to back)')
    p.add_argument('--mib', type=positive_int, default=32, metavar='N',
                   help='MiB per stream round (32)')
    p.add_argument('--cmdline', default=CMDLINE, metavar='KEYS',
                   help='ringside kernel command line (%(default)r)')
    p.add_argument('--top', type=positive_int, default=10, metavar='N', more=True,
                   help='functions listed for the 64 B round trip (10)')
    p.add_argument('--stream-top', type=nonneg_int, default=0, metavar='N', more=True,
                   help='also the top N functions of each stream, per 64 KiB')
    add_options(p)
    return p


def main(argv=None):
    p = build_parser()
    opts = p.parse_args(argv)
    opts.argv = argv
    if set(opts.guests) - {'ringside', 'linux'}:
        p.error('--guests: cost measures ringside and linux (6.1)')
    need = [COST_PLUGIN] + ([LINUX_KERNEL, LINUX_INITRD] if 'linux' in opts.guests else []) + \
        ([ELF] if 'ringside' in opts.guests else [])
    missing = [path for path in need if not os.path.exists(path)]
    if missing:
        print('%s: %s missing (run make%s)' % (PROG, os.path.relpath(missing[0], REPO),
                                               ' linux-guest' if 'linux' in missing[0] else ''),
              file=sys.stderr)
        return 1
    status, out, cells = 0, {}, Cells()
    for guest in opts.guests:
        tmp = tempfile.mkdtemp(prefix='ringside-cost-')
        path = os.path.join(tmp, 'guest.cost')
        la = launch(guest, opts, path, tmp)
        try:
            block = cost.CostBlock(path)
            rows = (measure_linux if guest == 'linux' else measure_ringside)(opts, la, block,
                                                                             tmp)
            if guest != 'linux' and la.poweroff() != 0:
                status = 1
        finally:
            la.stop()
        out[guest] = rows
        for r in rows:
            cells.extend({'cell': 'cost', 'guest': guest, 'what': r['what']}, 'insn', 'insn',
                         r['runs'], 'lower')
    publish(PROG, opts, {'guests': out, 'cmdline': opts.cmdline, 'rounds': opts.rounds,
                         'count': opts.count}, cells, accel='tcg')
    return status
