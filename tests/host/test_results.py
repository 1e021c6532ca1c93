# SPDX-License-Identifier: MIT
"""Where results go (host/ringside/results.py) and `ringside compare`: a
run saved with its metadata in one versioned schema (cells of samples,
the command's own result), --json - on stdout with the tables moved to
stderr, --csv rows, and two saved runs compared cell by cell with the
interval of B/A and a verdict."""

import csv
import json
import os
import subprocess
import types

import pytest

from conftest import REPO
from ringside import noise, results

FRONT_DOOR = os.path.join(REPO, 'ringside')
RUN = {'accel': 'tcg',
       'pingpong': [['default', {'size': 64, 'p50': 1000, 'p99': 2000}],
                    ['default', {'size': 4096, 'p50': 1500, 'p99': 2600}]],
       'stream': [{'dir': 'h2g', 'len': 65536, 'gbps': 2.0}]}


def opts(**kw):
    base = {'json': None, 'csv': None, 'no_save': True, 'argv': ['--count', '5']}
    return types.SimpleNamespace(**dict(base, **kw))


def cells(p50s, gbps):
    """A run's cells: a p50 and a Gb/s per round."""
    c = results.Cells()
    c.extend({'cell': 'ping-pong', 'size': 64}, 'p50', 'ns', p50s, 'lower')
    c.extend({'cell': 'stream', 'dir': 'h2g'}, 'total', 'Gb/s', gbps, 'higher')
    return c


def test_json_file_holds_schema_meta_cells_and_result(tmp_path):
    path = tmp_path / 'r.json'
    assert results.publish('ringside x', opts(json=str(path)), RUN, cells([1000, 1010], [2.0]),
                           accel='tcg') is None
    doc = json.loads(path.read_text())
    assert doc['schema'] == results.SCHEMA == 'ringside-results/1'
    assert doc['result'] == RUN
    meta = doc['meta']
    assert meta['prog'] == 'ringside x' and meta['argv'] == ['--count', '5']
    assert meta['accel'] == 'tcg' and len(meta['host_load']) == 3
    assert meta['qemu_version'].startswith('QEMU emulator version'), meta
    assert meta['git'], meta
    assert doc['cells'][0] == {'config': {'cell': 'ping-pong', 'size': 64}, 'metric': 'p50',
                               'unit': 'ns', 'better': 'lower', 'samples': [1000, 1010]}
    assert results.load(str(path)) == (meta, RUN, doc['cells'])


def test_a_file_from_before_the_schema_still_loads(tmp_path):
    path = tmp_path / 'old.json'
    path.write_text(json.dumps(dict(RUN, meta={'prog': 'bench-vsock'})))
    assert results.load(str(path)) == ({'prog': 'bench-vsock'}, RUN, [])
    path.write_text(json.dumps({'schema': 'ringside-results/9', 'cells': []}))
    with pytest.raises(ValueError, match='schema'):
        results.load(str(path))


def test_csv_holds_every_table_row(tmp_path):
    path = tmp_path / 'r.csv'
    results.publish('ringside x', opts(csv=str(path)), RUN)
    rows = list(csv.DictReader(path.open()))
    assert [(r['table'], r.get('config'), r.get('size'), r.get('gbps')) for r in rows] == [
        ('pingpong', 'default', '64', ''), ('pingpong', 'default', '4096', ''),
        ('stream', '', '', '2.0')]


def test_saved_run_under_build_bench(tmp_path, monkeypatch):
    monkeypatch.setattr(results, 'SAVE_DIR', str(tmp_path))
    first = results.publish('ringside x', opts(no_save=False), RUN)
    second = results.publish('ringside x', opts(no_save=False), RUN)
    assert first != second and os.path.dirname(first) == str(tmp_path)
    assert os.path.basename(first).startswith('x-')
    assert results.load(second)[1] == RUN


def test_a_cell_takes_a_sample_per_round():
    c = results.Cells()
    for rnd in range(3):
        c.add({'cell': 'a', 'size': 64}, 'p50', 'ns', 100 + rnd, 'lower')
    c.add({'cell': 'a', 'size': 64}, 'p99', 'ns', None)     # not measured: no cell
    assert [(x['metric'], x['samples']) for x in c.list()] == [('p50', [100, 101, 102])]


def test_the_interval_and_the_verdict():
    same = noise.ratio([100, 102, 98, 101], [101, 99, 100, 102])
    assert same['low'] < 1 < same['high'] and noise.verdict(same, 'lower') == 'no change'
    faster = noise.ratio([100, 102, 98, 101], [50, 51, 49, 50])
    assert faster['high'] < 1 and noise.verdict(faster, 'lower') == 'better'
    assert noise.verdict(faster, 'higher') == 'worse' and noise.verdict(faster, None) == 'down'
    one = noise.ratio([100], [50])
    assert one['ratio'] == 0.5 and one['low'] is None and noise.verdict(one, 'lower') == '?'
    # wider with fewer samples: Student's t, not the normal's 1.96
    few = noise.ratio([100, 110], [100, 110])
    many = noise.ratio([100, 110] * 10, [100, 110] * 10)
    assert few['high'] - few['low'] > many['high'] - many['low'] > 0


def compare(*argv):
    return subprocess.run([FRONT_DOOR, 'compare', *map(str, argv)], capture_output=True,
                          text=True, timeout=60)


def test_compare_two_runs(tmp_path):
    a, b = tmp_path / 'a.json', tmp_path / 'b.json'
    results.publish('ringside x', opts(json=str(a)), RUN, cells([1000, 1010, 990], [2.0, 2.1]))
    results.publish('ringside x', opts(json=str(b)), RUN, cells([500, 505, 495], [2.05, 2.0]))
    p = compare(a, b)
    assert p.returncode == 0, p.stderr
    p50 = next(line for line in p.stdout.splitlines() if line.startswith('ping-pong'))
    assert p50.split() == ['ping-pong', 'size=64', 'p50', 'ns', '1000', '500', '0.500',
                           '0.489-0.511', '3/3', 'better'], p.stdout
    gbps = next(line for line in p.stdout.splitlines() if line.startswith('stream'))
    assert gbps.split()[:4] == ['stream', 'dir=h2g', 'total', 'Gb/s'] and \
        gbps.endswith(' 2/2 no change'), p.stdout
    assert '2 cells: 1 better, 1 no change' in p.stdout
    p = compare(a, b, '--changed', '--json', tmp_path / 'c.json')
    rows = json.loads((tmp_path / 'c.json').read_text())['rows']
    assert [(r['cell'], r['verdict']) for r in rows] == [('ping-pong size=64 p50', 'better')]
    assert rows[0]['low'] < 0.5 < rows[0]['high'] < 1


def test_compare_files_from_before_the_schema(tmp_path):
    a, b = tmp_path / 'a.json', tmp_path / 'b.json'
    a.write_text(json.dumps(RUN))
    faster = json.loads(json.dumps(RUN))
    faster['pingpong'][0][1]['p50'] = 500
    b.write_text(json.dumps(faster))
    p = compare(a, b)
    assert p.returncode == 0, p.stderr
    lines = [line.split() for line in p.stdout.splitlines()]
    assert ['pingpong.[default/64].p50', '1000', '500', '0.500', '-', '1/1', '?'] \
        in lines, p.stdout


def test_compare_names_a_missing_run(tmp_path):
    p = compare(tmp_path / 'a.json', tmp_path / 'none.json')
    assert p.returncode == 1 and 'no such file' in p.stderr, p.stderr
