# SPDX-License-Identifier: MIT
"""compare: two saved runs (build/bench/*.json, or any script's --json
file) side by side: every number both hold, with B/A."""

import math
import os
import re

from .cli import Parser
from .results import SAVE_DIR, load
from .table import Column, Table

PROG = 'compare'
# Fields that say which cell a row of a table is, beside its words.
IDENTITY = ('size', 'length', 'len', 'streams', 'sessions', 'parallel', 'queues', 'cpus',
            'burst', 'txpoll')
META_SHOWN = ('prog', 'date', 'git', 'qemu_version', 'accel', 'host_load')


def label(item):
    """A table row's name: its words and identity numbers, e.g. 'split/64'."""
    parts = [str(v) for k, v in item.items()
             if isinstance(v, str) or (k in IDENTITY and isinstance(v, int)
                                       and not isinstance(v, bool))]
    return '/'.join(parts)


def pair(item):
    """A [configuration, row] pair, as bench-vsock keeps its cells: the row."""
    if (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
            and isinstance(item[1], dict)):
        return item[1]
    return None


def row_name(item):
    if isinstance(item, dict):
        return label(item)
    row = pair(item)
    return '%s/%s' % (item[0], label(row)) if row is not None else ''


def numbers(obj, prefix=''):
    """Every number in a result, by path; list rows named by label() when
    the names are unique, else by index."""
    out = {}
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, list):
        names = [row_name(x) for x in obj]
        if all(names) and len(set(names)) == len(names):
            items = zip(('[%s]' % n for n in names),
                        (x if pair(x) is None else pair(x) for x in obj))
        else:
            items = enumerate(obj)
    else:
        return out
    for k, v in items:
        key = '%s%s' % (prefix, k)
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            if not (isinstance(v, float) and math.isnan(v)):
                out[key] = v
        else:
            out.update(numbers(v, key + '.'))
    return out


def ratio(a, b):
    if a == 0:
        return '' if b == 0 else 'new'
    return '%.3f' % (b / a)


def fmt(v):
    if isinstance(v, int):
        return str(v)
    return '%.6g' % v


def resolve(path):
    """A file, or a saved run's name without its folder."""
    if os.path.exists(path):
        return path
    saved = os.path.join(SAVE_DIR, path)
    if os.path.exists(saved):
        return saved
    raise SystemExit('%s: %s: no such file (nor in %s)'
                     % (PROG, path, os.path.relpath(SAVE_DIR)))


def parse_args(argv):
    p = Parser(prog=PROG, description='Two saved runs side by side: every number both '
               'hold, with the ratio B/A.',
               epilog='Runs are saved in build/bench/ by every benchmark script (see their '
                      '--no-save); --json files work too. Give names from build/bench/ or '
                      'paths.')
    p.add_argument('a', metavar='A', help='the first run (the base of the ratio)')
    p.add_argument('b', metavar='B', help='the second run')
    p.add_argument('--grep', metavar='REGEX', type=re.compile,
                   help='only the numbers whose path matches REGEX')
    p.add_argument('--changed', metavar='PCT', type=float, default=None,
                   help='only the numbers that differ by more than PCT percent')
    return p.parse_args(argv)


def main(argv):
    opts = parse_args(argv)
    runs = []
    for path in (resolve(opts.a), resolve(opts.b)):
        try:
            runs.append((path,) + load(path))
        except (OSError, ValueError) as e:
            raise SystemExit('%s: %s: not a saved run (%s)' % (PROG, path, e))
    for tag, (path, meta, _) in zip('AB', runs):
        shown = ', '.join('%s %s' % (k, meta[k]) for k in META_SHOWN if meta.get(k))
        print('%s: %s%s' % (tag, path, ' (%s)' % shown if shown else ''))
    na, nb = numbers(runs[0][2]), numbers(runs[1][2])
    keys = [k for k in na if k in nb and (not opts.grep or opts.grep.search(k))]
    if opts.changed is not None:
        keys = [k for k in keys if na[k] != nb[k] and
                (na[k] == 0 or abs(nb[k] / na[k] - 1) * 100 > opts.changed)]
    if not keys:
        print('no numbers in common%s' % (' that match' if opts.grep or opts.changed else ''))
        return 1
    width = max(len(k) for k in keys)
    t = Table([Column('value', width, left=True), Column('A', 14), Column('B', 14),
               Column('B/A', 8)])
    for k in keys:
        t.row(k, fmt(na[k]), fmt(nb[k]), ratio(na[k], nb[k]))
    print()
    t.print()
    only = len(set(na) ^ set(nb))
    if only:
        print('\n%d number(s) in only one of the runs' % only)
    return 0
