# SPDX-License-Identifier: MIT
"""--cost per vCPU: the cost block's counters split per vCPU into
instructions per operation (bench-rr's transactions), and the table
that puts each vCPU beside the total and the total beside shape 1x1."""

from ringside import cost
from ringside.commands import rr as bench_rr


def counters(*insns):
    vcpus = [dict({f: 0 for f in cost.VCPU_FIELDS}, insns=n) for n in insns]
    return cost.Counters(vcpus, {}, cost.STATE_RUNNING)


def test_delta_per_vcpu_per_transaction():
    delta = counters(5000, 3000) - counters(1000, 1000)
    got = bench_rr.insns_per_txn(delta, 100)
    assert got == {'guest_insns': 6000, 'insns_per_txn': 60.0, 'insns_per_txn_vcpu': [40.0, 20.0]}


def test_no_transactions_no_figure():
    got = bench_rr.insns_per_txn(counters(10), 0)
    assert got['insns_per_txn'] is None and got['insns_per_txn_vcpu'] == [None]


def row(shape, total, per):
    return {'guest': 'ringside', 'shape': shape, 'transport': 'udp', 'backend': '-',
            'sessions': 4, 'size': 1, 'insns_per_txn': total, 'insns_per_txn_vcpu': per}


def test_table_has_a_column_per_vcpu_and_the_ratio_to_one_cpu(capsys):
    bench_rr.print_vcpu_cost([row('1x1', 1000.0, [1000.0]), row('2x2', 1100.0, [600.0, 500.0]),
                              {'guest': 'linux', 'shape': '1x1'}])
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split() == ['guest', 'shape', 'trans', 'back', 'sess', 'size', 'total',
                                'vs', '1x1', 'cpu0', 'cpu1']
    assert lines[3].split()[-4:] == ['1000', '1.00', '1000', '-']
    assert lines[4].split()[-4:] == ['1100', '1.10', '600', '500']
    assert len(lines) == 5      # the row without cost is left out


def test_no_cost_no_table(capsys):
    bench_rr.print_vcpu_cost([{'guest': 'ringside', 'shape': '1x1', 'insns_per_txn': None}])
    assert capsys.readouterr().out == ''
