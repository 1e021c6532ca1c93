# SPDX-License-Identifier: MIT
"""Where results go (host/ringside/results.py) and host/compare: a run
saved with its metadata, --json - on stdout with the tables moved to
stderr, --csv rows, and two saved runs compared number by number."""

import csv
import json
import os
import subprocess
import types

from conftest import REPO
from ringside import results

COMPARE = os.path.join(REPO, 'host', 'compare')
RUN = {'accel': 'tcg',
       'pingpong': [['default', {'size': 64, 'p50': 1000, 'p99': 2000}],
                    ['default', {'size': 4096, 'p50': 1500, 'p99': 2600}]],
       'stream': [{'dir': 'h2g', 'len': 65536, 'gbps': 2.0}]}


def opts(**kw):
    base = {'json': None, 'csv': None, 'no_save': True, 'argv': ['--count', '5']}
    return types.SimpleNamespace(**dict(base, **kw))


def test_json_file_keeps_the_result_and_adds_metadata(tmp_path):
    path = tmp_path / 'r.json'
    assert results.publish('bench-x', opts(json=str(path)), RUN, accel='tcg') is None
    doc = json.loads(path.read_text())
    assert doc['pingpong'] == RUN['pingpong'] and doc['stream'] == RUN['stream']
    meta = doc['meta']
    assert meta['prog'] == 'bench-x' and meta['argv'] == ['--count', '5']
    assert meta['accel'] == 'tcg' and len(meta['host_load']) == 3
    assert meta['qemu_version'].startswith('QEMU emulator version'), meta
    assert meta['git'], meta
    assert results.load(str(path)) == (meta, RUN)


def test_csv_holds_every_table_row(tmp_path):
    path = tmp_path / 'r.csv'
    results.publish('bench-x', opts(csv=str(path)), RUN)
    rows = list(csv.DictReader(path.open()))
    assert [(r['table'], r.get('config'), r.get('size'), r.get('gbps')) for r in rows] == [
        ('pingpong', 'default', '64', ''), ('pingpong', 'default', '4096', ''),
        ('stream', '', '', '2.0')]


def test_saved_run_under_build_bench(tmp_path, monkeypatch):
    monkeypatch.setattr(results, 'SAVE_DIR', str(tmp_path))
    first = results.publish('bench-x', opts(no_save=False), RUN)
    second = results.publish('bench-x', opts(no_save=False), RUN)
    assert first != second and os.path.dirname(first) == str(tmp_path)
    assert results.load(second)[1] == RUN


def test_compare_two_runs(tmp_path):
    a, b = tmp_path / 'a.json', tmp_path / 'b.json'
    results.publish('bench-x', opts(json=str(a)), RUN)
    faster = json.loads(json.dumps(RUN))
    faster['pingpong'][0][1]['p50'] = 500
    results.publish('bench-x', opts(json=str(b)), faster)
    p = subprocess.run([COMPARE, str(a), str(b), '--changed', '1'], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = [line.split() for line in p.stdout.splitlines()]
    assert ['pingpong.[default/64].p50', '1000', '500', '0.500'] in lines, p.stdout
    assert not any(line and line[0].endswith('p99') for line in lines), p.stdout
    p = subprocess.run([COMPARE, str(a), str(tmp_path / 'none.json')], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1 and 'no such file' in p.stderr, p.stderr
