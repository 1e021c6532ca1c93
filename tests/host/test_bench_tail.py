# SPDX-License-Identifier: MIT
"""bench-tail's guest work per round trip: instructions less a wake-up per
halt, the wake-up's cost taken from the round trips themselves."""


from ringside.commands.tail import halt_cost, summarize


def trips(halts, base=919, per_halt=100):
    return [{'ns': 1000 + i, 'insns': base + per_halt * h, 'halts': h, 'idle_ns': 0}
            for i, h in enumerate(halts)]


def test_halt_cost_is_the_slope_of_instructions_on_halts():
    rows = trips([1, 1, 2, 1, 3, 1, 1, 2] * 25)
    assert abs(halt_cost(rows) - 100) < 1e-9
    s = summarize(rows, halt_cost(rows))
    assert s['mid_work'] == s['slow_work'] == 919


def test_work_never_below_zero_from_an_idle_estimate():
    """An idle wake-up that costs 15,000 instructions (periodic work) must
    not be taken off a 919-instruction round trip."""
    rows = trips([1, 2, 1, 1] * 50)
    s = summarize(rows, halt_cost(rows))
    assert s['mid_work'] > 0 and min(r['work'] for r in rows) > 0


def test_no_work_column_for_a_spinning_guest():
    rows = trips([0] * 100)
    assert halt_cost(rows) == 0
    assert 'mid_work' not in summarize(rows, 0)
