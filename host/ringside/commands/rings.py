# SPDX-License-Identifier: MIT
"""rings: ns per buffer of the guest's split and packed rings against the
back end's device-side ring code, in one host process (no QEMU).

Builds build/unit/bench_rings (the guest's ring code at -O2, no
sanitizers) and runs it: add + kick_prepare + device + get_used per
buffer, queue size 256, chain lengths 1 and 2, EVENT_IDX on and off, in
interrupt mode (callbacks on) and polling mode (disable_cb); every
configuration once per round, interleaved, the median of the rounds.
"""

import json
import os
import subprocess
import sys

from .. import measure
from ..cli import Parser, positive_int
from ..images import REPO
from ..results import Cells, add_options, publish
from ..table import Column, Table

NAME = 'rings'
SUMMARY = "ns per buffer of the guest's rings (host build, no QEMU)"
GROUP = 'measure'
ALIASES = ('bench-rings',)
PROG = 'ringside rings'
BINARY = os.path.join('build', 'unit', 'bench_rings')


def main(argv):
    p = Parser(prog=PROG, description=__doc__.split('\n\n')[0], usage='%(prog)s [options]')
    p.add_argument('-n', '--buffers', type=positive_int, default=2000000, metavar='N',
                   help='buffers per round and configuration (2000000)')
    p.add_argument('-b', '--batch', type=positive_int, default=32, metavar='N',
                   help='buffers added before the device takes them (32, at most 256)')
    measure.add(p, rounds=7)
    add_options(p)
    opts = p.parse_args(argv)
    opts.argv = argv
    if opts.rounds > 64 or opts.batch > 256:
        p.error('--rounds takes 1..64, --batch 1..256')
    built = subprocess.run(['make', '-s', '--no-print-directory', BINARY], cwd=REPO,
                           stdout=sys.stderr)
    if built.returncode:
        print('%s: make %s failed' % (PROG, BINARY), file=sys.stderr)
        return 1
    run = subprocess.run([os.path.join(REPO, BINARY), '-n', str(opts.buffers), '-r',
                          str(opts.rounds), '-b', str(opts.batch), '--json'],
                         capture_output=True, text=True)
    if run.returncode:
        print('%s: %s' % (PROG, run.stderr.strip()), file=sys.stderr)
        return run.returncode
    rows = json.loads(run.stdout)
    t = Table([Column('ring', 7, left=True), Column('chain', 5, '%d'),
               Column('event_idx', 9), Column('irq ns/buf', 13, '%.2f'),
               Column('poll ns/buf', 13, '%.2f')],
              title='%s: %d buffers per round, batch %d, median of %d rounds'
                    % (PROG, opts.buffers, opts.batch, opts.rounds))
    cells = Cells()
    for r in rows:
        t.row(r['ring'], r['chain'], 'on' if r['event_idx'] else 'off', r['irq_ns_per_buf'],
              r['poll_ns_per_buf'])
        config = {'cell': 'rings', 'ring': r['ring'], 'chain': r['chain'],
                  'event_idx': r['event_idx']}
        cells.extend(config, 'irq ns/buf', 'ns', r['irq_runs'], 'lower')
        cells.extend(config, 'poll ns/buf', 'ns', r['poll_runs'], 'lower')
    t.print()
    publish(PROG, opts, {'buffers': opts.buffers, 'batch': opts.batch, 'rounds': opts.rounds,
                         'rows': rows}, cells)
    return 0
