# SPDX-License-Identifier: MIT
"""./ringside seeds --quick: every seed's table lands in the report with
numbers in its cost cells, the plots are PNGs, and the cost figures agree
with what the guest can possibly execute (ringside ping-pong a few thousand
instructions per round trip, Linux many more on the same QEMU)."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from ringside_qemu import FRONT_DOOR, REPO

LINUX = os.path.join(REPO, 'build', 'linux-guest', 'initrd')
LINUX612 = os.path.join(REPO, 'build', 'linux-guest-6.12', 'initrd')

pytestmark = pytest.mark.slow

SECTIONS = ('## Seed 000', '## Seed 001', '## Seed 004', '## ringside vs Linux')
NUMBER = re.compile(r'^-?\d+(\.\d+)?( %)?$')
# a markdown table's line under its header: |---|:--:|---:|
RULE = re.compile(r'^\|(\s*:?-+:?\s*\|)+$')


def tables(md):
    """{section heading: [[header], [row], ...] per table}. A table must
    sit under a '## ' heading and have its rule line right under its header."""
    out, section, current = {}, None, None
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith('## '):
            section, current = line, None
            out[section] = []
        elif not line.startswith('|'):
            current = None
        elif RULE.match(line):
            assert current is not None and len(current) == 1, 'a stray rule line: %r' % line
        else:
            assert section is not None, 'a table before the first section: %r' % line
            cells = [c.strip() for c in line.strip('|').split('|')]
            if current is None:
                assert i + 1 < len(lines) and RULE.match(lines[i + 1]), \
                        'no rule line under %r' % line
                current = [cells]
                out[section].append(current)
            else:
                current.append(cells)
    return out


def test_tables_parse():
    md = '# t\n## A\n| x | y |\n|---|--:|\n| 1 | 2 |\n\n| z |\n|---|\n'
    assert tables(md) == {'## A': [[['x', 'y'], ['1', '2']], [['z']]]}


def cost_columns(header):
    return [i for i, h in enumerate(header) if 'insn' in h]


@pytest.fixture(scope='module')
def report(tmp_path_factory):
    """The quick report; what it needs is built or installed (make test),
    so a missing one fails."""
    for path, how in ((LINUX, 'make linux-guest'), (LINUX612, 'make linux-guest-6.12')):
        if not os.path.exists(path):
            pytest.fail('%s missing: run %s' % (os.path.relpath(path, REPO), how),
                        pytrace=False)
    if not shutil.which('dpdk-testpmd'):
        pytest.fail('dpdk-testpmd missing (seed 001): run make deps', pytrace=False)
    out = tmp_path_factory.mktemp('bench-seeds')
    proc = subprocess.run([sys.executable, FRONT_DOOR, 'seeds', '--quick', '--out', str(out)],
                          capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / 'seeds.md') as f:
        return out, f.read()


def test_every_table_has_cost_cells(report):
    out, md = report
    found = tables(md)
    for s in SECTIONS:
        heading = next((h for h in found if h.startswith(s)), None)
        assert heading, '%s missing from the report' % s
        costed = [t for t in found[heading] if cost_columns(t[0])]
        assert costed, '%s: no table with a cost column' % heading
        for t in costed:
            assert len(t) > 1, '%s: empty table %r' % (heading, t[0])
            for row in t[1:]:
                for i in cost_columns(t[0]):
                    assert NUMBER.match(row[i]), '%s: cost cell %r in %r' % (heading, row[i], row)


def test_plots_are_png(report):
    out, md = report
    pngs = re.findall(r'!\[[^]]*\]\(([^)]+\.png)\)', md)
    assert len(pngs) == 4
    for name in pngs:
        with open(out / name, 'rb') as f:
            assert f.read(8) == b'\x89PNG\r\n\x1a\n', name


def test_costs_are_plausible(report):
    """Ringside's 64 B round trip is a few thousand guest instructions;
    Linux on the same QEMU, back end and client needs several times more;
    the top functions account for part of ringside's round trip."""
    out, md = report
    rows = next(t for h, ts in tables(md).items() if h.startswith('## ringside vs Linux')
                for t in ts)
    pp64 = next(r for r in rows[1:] if r[0] == 'ping-pong 64 B')
    ringside, linux = float(pp64[3]), float(pp64[4])
    assert 500 < ringside < 50000, pp64
    assert linux > 2 * ringside, pp64
    with open(out / 'seeds.json') as f:
        top = json.load(f)['000']['top']
    assert len(top) == 10
    assert 0 < sum(n for _, n in top) < ringside * 2, top


def test_directions_against_the_seeds(report):
    """The direction table has our after/before for every change the quick
    run measures, with a verdict; seed 003's and Linux 6.1/6.12's own
    tables are there."""
    out, md = report
    rows = next(t for h, ts in tables(md).items() if h.startswith('## Direction') for t in ts)
    by = {r[0]: r for r in rows[1:]}
    for key in ('000', '001 split', '001 packed', '003', '004 rxbuf'):
        assert key in by, (key, rows)
        assert NUMBER.match(by[key][3]) and float(by[key][3]) > 0, by[key]
        assert re.match(r'(same direction|opposite direction|no change)', by[key][4]), by[key]
    # bench-rr's poll against sleep line, and bench-compare's two kernels
    assert re.search(r'^ringside\s+1x1\s+1\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+', md, re.M), md
    assert re.search(r'^split sleep\s+p50 ns\s+64\s+[\d.]+\s+[\d.]+\s+[\d.]+', md, re.M), md
