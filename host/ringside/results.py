# SPDX-License-Identifier: MIT
"""Where every command's results go, one way for all: the run saved under
build/bench/ with what it ran on, --json FILE (- for stdout) and --csv FILE,
all in one versioned schema (SCHEMA):

    {"schema": "ringside-results/1",
     "meta":   {prog, argv, date, git, qemu, accel, host load, ...},
     "cells":  [{"config": {"cell": "ping-pong", "size": 64, ...},
                 "metric": "p50", "unit": "ns", "better": "lower",
                 "samples": [812345, 798211, 803050]}, ...],
     "result": the command's own object, every figure it printed}

A cell is one configuration's one metric with its samples (a value per
round); `ringside compare A B` matches cells by configuration and metric.
"""

import argparse
import csv
import datetime
import json
import math
import os
import shutil
import subprocess
import sys

from .cli import output_file
from .images import REPO

SAVE_DIR = os.path.join(REPO, 'build', 'bench')
STDOUT = '-'
SCHEMA = 'ringside-results/1'


def json_target(text):
    """--json FILE: a file whose folder exists, or - for stdout."""
    return text if text == STDOUT else output_file(text)


def add_options(p):
    """--json, --csv and --no-save, the same in every script."""
    p.add_argument('--json', type=json_target, metavar='FILE', action=_JsonOption,
                   help='the results as JSON to FILE too (-: stdout)')
    p.add_argument('--csv', type=output_file, metavar='FILE', more=True,
                   help='the result rows as CSV to FILE too')
    p.add_argument('--no-save', action='store_true', more=True,
                   help='do not keep the run under build/bench/')


_json_out = []  # stdout as it was when --json - took it


class _JsonOption(argparse.Action):
    """--json FILE; with -, the JSON takes stdout and everything the run
    prints (tables, notes) goes to stderr from the moment it is parsed
    until publish() writes the JSON and gives stdout back."""

    def __call__(self, parser, namespace, value, option_string=None):
        if value == STDOUT:
            _json_out.append(sys.stdout)
            sys.stdout = sys.stderr
        setattr(namespace, self.dest, value)


def _first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[0] if out.returncode == 0 and lines else None


def _qemu():
    return os.environ.get('RINGSIDE_QEMU') or shutil.which('qemu-system-x86_64')


def metadata(prog, argv, **known):
    """What a result needs beside it to mean anything later: when, which
    build, which QEMU, how the host was loaded, and the exact command (the
    guest's configuration, back end and its arguments are in it). Scripts
    add what they know (accel, guest cmdline) as keyword arguments."""
    qemu = _qemu()
    meta = {
        'prog': prog,
        'argv': list(argv),
        'date': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        'git': _first_line(['git', '-C', REPO, 'describe', '--always', '--dirty']),
        'qemu': qemu,
        'qemu_version': _first_line([qemu, '--version']) if qemu else None,
        'host_load': [round(x, 2) for x in os.getloadavg()],
        'host_cpus': os.cpu_count(),
    }
    meta.update(known)
    return meta


def _row(item):
    """A table row: an object, or a [label, object] pair (configuration first)."""
    if isinstance(item, dict):
        return flat(item)
    if (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)
            and isinstance(item[1], dict)):
        return dict(config=item[0], **flat(item[1]))
    return None


def rows_of(result):
    """The rows a CSV holds: every list of rows in the result, each row
    tagged with the list's name (table), else the result's own scalar
    fields as one row."""
    if isinstance(result, list):
        rows = [_row(x) for x in result]
        return rows if rows and None not in rows else []
    rows = []
    for name, v in result.items():
        table = rows_of(v) if isinstance(v, list) else []
        rows += [dict(table=name, **r) for r in table]
    return rows or [{k: v for k, v in result.items() if not isinstance(v, (dict, list))}]


def flat(obj, prefix=''):
    """{'a': {'b': 1}} -> {'a.b': 1}; lists are indexed: 'cells.0.p50'."""
    out = {}
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for k, v in items:
        key = '%s%s' % (prefix, k)
        if isinstance(v, (dict, list)):
            out.update(flat(v, key + '.'))
        else:
            out[key] = v
    return out


def write_csv(path, rows):
    fields = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


class Cells:
    """The cells of a run, in the order they were measured: add() a sample
    of a configuration's metric; the same configuration and metric again
    is another sample of the same cell (another round)."""

    def __init__(self):
        self._cells = {}

    def add(self, config, metric, unit, value, better=None):
        """`config` a dict of the cell's settings (str/int values), `better`
        'lower' or 'higher' (None: neither, e.g. a count). None values
        (a cell that did not run) are left out."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return
        key = cell_key(config, metric)
        cell = self._cells.setdefault(key, {'config': dict(config), 'metric': metric,
                                            'unit': unit, 'better': better, 'samples': []})
        cell['samples'].append(value)

    def extend(self, config, metric, unit, values, better=None):
        """Several samples of a cell at once (the rounds of a table row)."""
        for v in values:
            self.add(config, metric, unit, v, better)

    def list(self):
        return list(self._cells.values())


def cell_key(config, metric):
    """A cell's identity: its configuration and metric, in one string."""
    return ' '.join(['%s=%s' % kv for kv in sorted(config.items())] + [metric])


def publish(prog, opts, result, cells=None, **known):
    """Write the run where it was asked for, and keep it under build/bench/
    unless --no-save. Returns the saved path (or None). `cells` (a Cells,
    or a list of cell dicts) are the run's figures for `compare`; the
    command line recorded is opts.argv (set by the command's main), else
    this process's."""
    meta = metadata(prog, getattr(opts, 'argv', sys.argv[1:]), **known)
    if isinstance(cells, Cells):
        cells = cells.list()
    doc = {'schema': SCHEMA, 'meta': meta, 'cells': cells or [], 'result': result}
    if opts.json == STDOUT:
        if _json_out:
            sys.stdout.flush()
            sys.stdout = _json_out.pop()
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write('\n')
    elif opts.json:
        with open(opts.json, 'w') as f:
            json.dump(doc, f, indent=1)
    if opts.csv:
        write_csv(opts.csv, rows_of(result))
    if opts.no_save:
        return None
    os.makedirs(SAVE_DIR, exist_ok=True)
    stamp = meta['date'].replace(':', '').replace('+0000', 'Z')
    name = prog.replace('ringside ', '')
    path = os.path.join(SAVE_DIR, '%s-%s.json' % (name, stamp))
    n = 1
    while os.path.exists(path):
        n += 1
        path = os.path.join(SAVE_DIR, '%s-%s-%d.json' % (name, stamp, n))
    with open(path, 'w') as f:
        json.dump(doc, f, indent=1)
    print('%s: results saved in %s' % (prog, os.path.relpath(path)), file=sys.stderr)
    return path


def load(path):
    """A saved run or --json file: (meta, result, cells); meta is {} and
    cells [] for a file from before the schema."""
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict):
        return {}, doc, []
    if doc.get('schema') == SCHEMA:
        return doc.get('meta', {}), doc.get('result'), doc.get('cells', [])
    if 'schema' in doc:
        raise ValueError('schema %r, not %r' % (doc['schema'], SCHEMA))
    meta = doc.pop('meta', {})
    return meta, doc.pop('result') if set(doc) == {'result'} else doc, []
