# SPDX-License-Identifier: MIT
"""bench-seeds' direction of change: the verdict against a seed's own
change, and the side-by-side report of --host both, from known figures."""

import types

from ringside.commands import seeds as bench_seeds
from ringside.commands.seeds import SEED_CHANGE, direction, report_both, verdict


def test_verdict():
    assert verdict(1.6, 1.63, 0.05) == 'same direction, similar size'
    assert verdict(1.1, 1.63, 0.05) == 'same direction, smaller'
    assert verdict(0.85, 1.63, 0.05) == 'opposite direction'
    assert verdict(1.03, 1.63, 0.05).startswith('no change beyond the noise (±5 %')
    # a latency the seed lowers: lower is its direction
    assert verdict(0.5, 13.57 / 16.78, 0.02) == 'same direction, larger'
    assert verdict(0.7, 13.57 / 16.78, 0.02) == 'same direction, similar size'
    assert verdict(None, 1.5, 0.1) == '-'


def test_direction_is_after_over_before_with_spread():
    d = direction('001 split', [1.0, 1.0, 1.0], [2.0, 1.8, 2.2])
    assert d['key'] == '001 split' and d['ours'] == 2.0
    assert abs(d['noise'] - 0.2) < 1e-9   # (2.2 - 1.8) / 2.0
    assert direction('003', [], [1.0])['ours'] is None
    assert direction('000', [1], [1], cost=([], [3.0]))['cost'] is None


def test_report_both_side_by_side(tmp_path):
    here = {'000': {'direction': [direction('000', [20.0], [16.0],
                                            cost=([1000, 1100], [900, 920]))]}}
    nested = {'000': {'direction': [direction('000', [20.0], [21.0])]},
              '003': {'direction': [direction('003', [100.0], [150.0], noise=0.05)]}}
    report_both(types.SimpleNamespace(out=str(tmp_path), quick=True), here, nested)
    md = (tmp_path / 'seeds-both.md').read_text()
    rows = {line.split('|')[1].strip(): [c.strip() for c in line.split('|')[1:-1]]
            for line in md.splitlines() if line.startswith('| ') and 'seed after' not in line}
    assert set(rows) == set(SEED_CHANGE)
    assert rows['000'][3:] == ['0.80', 'same direction, similar size', '0.87', '1.05',
                               'opposite direction', '-']
    assert rows['003'][3:] == ['-', '-', '-', '1.50', 'same direction, larger', '-']
    assert '(nested/seeds.md)' in md and bench_seeds.OUT
