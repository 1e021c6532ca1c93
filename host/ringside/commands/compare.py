# SPDX-License-Identifier: MIT
"""compare: two saved runs side by side, cell by cell, with B/A, its 95 %
confidence interval from the cells' samples (their rounds), and whether
the change is beyond the noise: better, worse or no change.

Runs are saved under build/bench/ by every command that measures (and
written by --json FILE); A and B are paths or names in build/bench/. A
cell is a configuration's metric (results.py); the two runs' cells are
matched by configuration and metric. A file from before the schema has
no cells: then every number both hold is shown, with B/A and no verdict.
"""

import json
import math
import os
import re
import sys

from .. import noise
from ..cli import Parser
from ..results import SAVE_DIR, cell_key, json_target, load
from ..table import Column, Table

NAME = 'compare'
SUMMARY = 'two saved runs: B/A, its 95 % interval, a verdict'
GROUP = 'results'
ALIASES = ('compare',)
PROG = 'ringside compare'

META_SHOWN = ('prog', 'date', 'git', 'qemu_version', 'accel', 'host_load')
# Fields that say which row of a table a number is, for files without cells.
IDENTITY = ('size', 'length', 'len', 'streams', 'sessions', 'parallel', 'queues', 'cpus',
            'burst', 'txpoll')


def resolve(path):
    """A file, or a saved run's name without its folder."""
    if os.path.exists(path):
        return path
    saved = os.path.join(SAVE_DIR, path)
    if os.path.exists(saved):
        return saved
    raise SystemExit('%s: error: %s: no such file (nor in %s)'
                     % (PROG, path, os.path.relpath(SAVE_DIR)))


def parse_args(argv):
    p = Parser(prog=PROG, description=__doc__.split('\n\n')[0],
               usage='%(prog)s A B [options]')
    p.add_argument('a', metavar='A', help='the first run (the base of the ratio)')
    p.add_argument('b', metavar='B', help='the second run')
    p.add_argument('--grep', metavar='REGEX', type=re.compile,
                   help='only the cells whose name matches REGEX')
    p.add_argument('--changed', action='store_true',
                   help='only the cells beyond the noise (better, worse, up, down)')
    p.add_argument('--json', type=json_target, metavar='FILE',
                   help='the comparison as JSON to FILE (- : stdout, instead of the table)')
    return p.parse_args(argv)


def cell_name(cell):
    """'ping-pong size=64 switch=fastpath=1 p50': the configuration's
    values (the cell's kind first) and the metric."""
    config = dict(cell['config'])
    words = [str(config.pop('cell'))] if 'cell' in config else []
    words += ['%s=%s' % kv for kv in sorted(config.items())]
    return ' '.join(words + [cell['metric']])


def compare_cells(ca, cb):
    """Rows for the cells both runs hold, in A's order."""
    by_b = {cell_key(c['config'], c['metric']): c for c in cb}
    rows = []
    for c in ca:
        other = by_b.get(cell_key(c['config'], c['metric']))
        if other is None:
            continue
        r = noise.ratio(c['samples'], other['samples'])
        rows.append({'cell': cell_name(c), 'unit': c.get('unit', ''),
                     'better': c.get('better'), 'a': _mean(c['samples']),
                     'b': _mean(other['samples']), 'ratio': r['ratio'], 'low': r['low'],
                     'high': r['high'], 'n_a': r['n_a'], 'n_b': r['n_b'],
                     'verdict': noise.verdict(r, c.get('better'))})
    return rows


def _mean(samples):
    return sum(samples) / len(samples)


# ----------------------------------------------- files from before the schema

def _label(item):
    parts = [str(v) for k, v in item.items()
             if isinstance(v, str) or (k in IDENTITY and isinstance(v, int)
                                       and not isinstance(v, bool))]
    return '/'.join(parts)


def _row(item):
    if isinstance(item, dict):
        return item
    if (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
            and isinstance(item[1], dict)):
        return item[1]
    return None


def _name(item):
    if isinstance(item, dict):
        return _label(item)
    return '%s/%s' % (item[0], _label(item[1])) if _row(item) is not None else ''


def numbers(obj, prefix=''):
    """Every number in a result, by path; list rows named by their words
    and identity numbers when the names are unique, else by index."""
    out = {}
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, list):
        names = [_name(x) for x in obj]
        if all(names) and len(set(names)) == len(names):
            items = zip(('[%s]' % n for n in names), (_row(x) for x in obj))
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


def compare_numbers(ra, rb):
    na, nb = numbers(ra), numbers(rb)
    return [{'cell': k, 'unit': '', 'better': None, 'a': na[k], 'b': nb[k],
             'ratio': nb[k] / na[k] if na[k] else None, 'low': None, 'high': None,
             'n_a': 1, 'n_b': 1, 'verdict': '?'} for k in na if k in nb]


# ------------------------------------------------------------------- output

def fmt(v):
    if v is None:
        return '-'
    if isinstance(v, int) or float(v).is_integer() and abs(v) >= 1000:
        return '%d' % v
    return '%.6g' % v


def print_rows(rows):
    width = max(len(r['cell']) for r in rows)
    t = Table([Column('cell', width, left=True), Column('unit', 7, left=True),
               Column('A', 12), Column('B', 12), Column('B/A', 7, '%.3f'),
               Column('95 % interval', 15), Column('n', 5), Column('verdict', 9, left=True)])
    for r in rows:
        span = '%.3f-%.3f' % (r['low'], r['high']) if r['low'] is not None else '-'
        t.row(r['cell'], r['unit'], fmt(r['a']), fmt(r['b']), r['ratio'], span,
              '%d/%d' % (r['n_a'], r['n_b']), r['verdict'])
    t.print()


def main(argv):
    opts = parse_args(argv)
    runs = []
    for path in (resolve(opts.a), resolve(opts.b)):
        try:
            runs.append((path,) + load(path))
        except (OSError, ValueError) as e:
            raise SystemExit('%s: error: %s: not a saved run (%s)' % (PROG, path, e))
    out = sys.stderr if opts.json == '-' else sys.stdout
    for tag, (path, meta, _, _) in zip('AB', runs):
        shown = ', '.join('%s %s' % (k, meta[k]) for k in META_SHOWN if meta.get(k))
        print('%s: %s%s' % (tag, path, ' (%s)' % shown if shown else ''), file=out)
    (_, _, ra, ca), (_, _, rb, cb) = runs
    if ca and cb:
        rows = compare_cells(ca, cb)
    else:
        print('(a run from before the results schema: every number both hold, no verdict)',
              file=out)
        rows = compare_numbers(ra, rb)
    rows = [r for r in rows if (not opts.grep or opts.grep.search(r['cell']))
            and (not opts.changed or r['verdict'] in ('better', 'worse', 'up', 'down'))]
    if not rows:
        print('no cells in common%s' % (' that match' if opts.grep or opts.changed else ''),
              file=out)
        return 1
    if opts.json:
        doc = {'a': runs[0][0], 'b': runs[1][0], 'rows': rows}
        if opts.json == '-':
            json.dump(doc, sys.stdout, indent=1)
            sys.stdout.write('\n')
        else:
            with open(opts.json, 'w') as f:
                json.dump(doc, f, indent=1)
    if opts.json != '-':
        print()
        print_rows(rows)
        verdicts = [r['verdict'] for r in rows]
        print('\n%d cells: %s' % (len(rows), ', '.join(
                '%d %s' % (verdicts.count(v), v) for v in
                ('better', 'worse', 'no change', 'up', 'down', '?') if v in verdicts)))
        if '?' in verdicts:
            print('?: one sample on a side, no interval (measure with --rounds 2 or more)')
    return 0
