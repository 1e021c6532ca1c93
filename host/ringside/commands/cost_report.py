# SPDX-License-Identifier: MIT
"""cost-report: print a ringside-cost block (live or recorded): counters and
the guest functions that executed the most instructions, per operation.

    ringside cost-report build/guest.cost
    ringside cost-report --base before.cost --ops 10000 after.cost
    ringside cost-report --system-map kallsyms.txt linux.cost   # Linux guest
"""

import os
import sys

from ..cli import Parser, positive_float, positive_int
from .. import cost
from ..images import repo_path
from ..results import Cells, add_options, publish

NAME = 'cost-report'
SUMMARY = 'a cost block: counters, top functions per operation'
GROUP = 'results'
ALIASES = ('cost-report',)
PROG = 'ringside cost-report'

DEFAULT_ELF = repo_path('build', 'ringside.elf')


def parse_args(argv):
    p = Parser(
        prog=PROG,
        description='Counters and top guest functions of a ringside-cost block.')
    p.add_argument('block', help='cost block file (the plugin\'s shm=PATH, or a copy)')
    p.add_argument('--base', metavar='FILE',
                   help='subtract this earlier copy of the block (a delta)')
    p.add_argument('--ops', type=positive_float, default=1.0, metavar='N',
                   help='operations in the measured span: print per operation')
    p.add_argument('--what', default='op', metavar='NAME',
                   help='name of one operation in headings (default op)')
    p.add_argument('--top', type=positive_int, default=10, metavar='N',
                   help='functions to list (default 10)')
    sym = p.add_mutually_exclusive_group()
    sym.add_argument('--elf', metavar='PATH',
                     help='symbols from this ELF (default build/ringside.elf)')
    sym.add_argument('--system-map', metavar='PATH',
                     help="symbols from a Linux System.map or the guest's /proc/kallsyms")
    add_options(p)
    opts = p.parse_args(argv)
    if opts.ops <= 0:
        p.error('--ops must be > 0')
    return opts


def load_symbols(opts):
    if opts.system_map:
        try:
            return cost.system_map_symbols(opts.system_map)
        except (OSError, ValueError) as e:
            sys.exit('%s: %s' % (PROG, e))
    path = opts.elf or DEFAULT_ELF
    if not os.path.exists(path):
        if opts.elf:
            sys.exit('%s: %s: no such file' % (PROG, path))
        return None
    return cost.elf_symbols(path)


def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    opts.argv = argv
    try:
        counters = cost.read_file(opts.block)
        if opts.base:
            counters = counters - cost.read_file(opts.base)
    except (OSError, cost.CostFormatError) as e:
        sys.exit('%s: %s' % (PROG, e))
    symbols = load_symbols(opts)
    for line in cost.report(counters, symbols, opts.ops, opts.top, opts.what):
        print(line)
    cells = Cells()
    for key, value in counters.totals.items():
        cells.add({'cell': 'cost-report', 'what': opts.what}, key + '/' + opts.what, key,
                  value / opts.ops, 'lower')
    publish(PROG, opts, {'ops': opts.ops, 'totals': counters.totals, 'vcpus': counters.vcpus,
                         'functions': cost.by_function(counters.profile, symbols)}, cells)
    return 0
