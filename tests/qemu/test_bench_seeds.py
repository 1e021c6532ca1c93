# SPDX-License-Identifier: MIT
"""host/bench-seeds --quick: every seed's table lands in the report with
numbers in its cost cells, the plots are PNGs, and the cost figures agree
with what the guest can possibly execute (ringside ping-pong a few thousand
instructions per round trip, Linux many more on the same QEMU)."""

import json
import os
import re
import shutil
import subprocess

import pytest

from ringside_qemu import REPO

SEEDS = os.path.join(REPO, 'host', 'bench-seeds')
LINUX = os.path.join(REPO, 'build', 'linux-guest', 'initrd')
LINUX612 = os.path.join(REPO, 'build', 'linux-guest-6.12', 'initrd')

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not shutil.which('dpdk-testpmd'),
                       reason='seed 001 needs dpdk-testpmd (package dpdk)'),
    pytest.mark.skipif(not os.path.exists(LINUX),
                       reason='the Linux columns need make linux-guest'),
    pytest.mark.skipif(not os.path.exists(LINUX612),
                       reason='Linux 6.1 against 6.12 needs make linux-guest-6.12'),
]

SECTIONS = ('## Seed 000', '## Seed 001', '## Seed 004', '## ringside vs Linux')
NUMBER = re.compile(r'^-?\d+(\.\d+)?( %)?$')


def tables(md):
    """{section heading: [[header], [row], ...] per table}."""
    out, section, current = {}, None, None
    for line in md.splitlines():
        if line.startswith('## '):
            section, current = line, None
            out[section] = []
        elif line.startswith('|') and section:
            cells = [c.strip() for c in line.strip('|').split('|')]
            if current is None:
                current = [cells]
                out[section].append(current)
            elif not set(''.join(cells)) <= set('-'):
                current.append(cells)
        else:
            current = None
    return out


def cost_columns(header):
    return [i for i, h in enumerate(header) if 'insn' in h]


@pytest.fixture(scope='module')
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp('bench-seeds')
    proc = subprocess.run([SEEDS, '--quick', '--out', str(out)], capture_output=True,
                          text=True, timeout=3600)
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
