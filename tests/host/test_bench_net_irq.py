# SPDX-License-Identifier: MIT
"""ringside net --irq-cpu own,other: what it parses and refuses, the boot
keys and QEMU arguments each placement gives ringside, the check that
the guest took net_irq (its own error when it does not know the key),
and the table and ratios with the placement as a column; --pin none/-1."""

import pytest

from ringside.commands import net as bench_net
from ringside.netguest import NetError
from conftest import usage_error

NET = ['-netdev', 'vhost-user,id=n0,chardev=vhu0']


def parse(*argv):
    return bench_net.build_parser().parse_args(list(argv))


def test_default_is_no_placement():
    assert parse().irq_cpu is None


@pytest.mark.parametrize('text,placements', [
    ('own,other', ['own', 'other']), ('other', ['other']), ('other,own', ['other', 'own'])])
def test_placements_parse_in_order(text, placements):
    assert parse('--irq-cpu', text).irq_cpu == placements


@pytest.mark.parametrize('argv,error', [
    (['--irq-cpu', 'mine'], "argument --irq-cpu: 'mine' not one of ('own', 'other')"),
    (['--irq-cpu', ''], 'argument --irq-cpu: empty list'),
    (['--irq-cpu', 'own,own'], '--irq-cpu takes own and/or other, each once, for ringside '
                               '(in --guests)'),
    (['--irq-cpu', 'own', '--guests', 'linux'], '--irq-cpu takes own and/or other, each once, '
                                                'for ringside (in --guests)'),
])
def test_bad_placements_are_one_line(capsys, argv, error):
    assert usage_error(capsys, bench_net.main, argv) == \
        'ringside net: error: %s (see --help)\n' % error


def test_default_boot_keys_unchanged():
    assert bench_net.ringside_cmdline() == 'ip=10.0.2.15 gw=10.0.2.2 irq=poll idle=poll'
    assert bench_net.ringside_cmdline(cost=True).endswith(' irq=poll idle=halt')
    assert bench_net.guest_qemu_args(NET) == NET


@pytest.mark.parametrize('where', ['own', 'other'])
def test_placement_boots_two_vcpus_with_msix_and_net_irq(where):
    words = bench_net.ringside_cmdline(irq_cpu=where).split()
    assert 'irq=msix' in words and 'net_irq=%s' % where in words and 'irq=poll' not in words
    assert bench_net.guest_qemu_args(NET, where) == ['-smp', '2'] + NET


class Console:
    """Answers `get KEY` as a guest would."""

    def __init__(self, answer):
        self.answer, self.sent = answer, []

    def command(self, cmd, timeout):
        self.sent.append(cmd)
        return self.answer


def test_a_guest_that_took_the_key_passes():
    con = Console('net_irq=other')
    bench_net.check_key(con, 'net_irq', 'other', 5)
    assert con.sent == ['get net_irq']


@pytest.mark.parametrize('answer', ["error: unknown key 'net_irq' (try 'config')",
                                    'net_irq=own'])
def test_a_guest_without_it_fails_with_its_own_words(answer):
    with pytest.raises(NetError) as e:
        bench_net.check_key(Console(answer), 'net_irq', 'other', 5)
    assert str(e.value) == 'ringside did not take net_irq=other: %s' % answer


def run(irq_cpu, mpps, rnd=0, txpoll=0, vcpus=None):
    r = {'round': rnd, 'ring': 'split', 'txpoll': txpoll, 'irq_cpu': irq_cpu, 'mpps': mpps,
         'kicks_per_packet': 0.01, 'ring_full': 0, 'packets': 1000, 'testpmd_rx': 1000}
    if vcpus:
        r['cost'] = {'insns': sum(vcpus), 'insns_raw': sum(vcpus), 'insns_raw_vcpu': vcpus,
                     'halts': 0, 'irqs': 1, 'io': 0, 'notify': 0, 'idle_rate': 0}
    return r


class Opts:
    peer, count, size, burst, rounds, accel, pin = 'testpmd', 1000, 64, 256, 1, 'tcg', 0
    lcores, queues, pair_cpu = '0-1', 1, None
    rings, txpoll, irq_cpu = ['split'], [0], ['own', 'other']


def test_table_has_the_placement_and_the_ratio(capsys):
    table = bench_net.summarize([run('own', 1.0), run('other', 1.5)])
    assert [(t['irq_cpu'], t['mpps_median']) for t in table] == [('own', 1.0), ('other', 1.5)]
    bench_net.print_table(table, Opts())
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:3] == ['ring', 'txpoll', 'irq']
    rows = [line.split()[:3] for line in out[2:4]]
    assert rows == [['split', '0', 'own'], ['split', '0', 'other']]
    assert 'split txpoll=0: net_irq=other / net_irq=own = 1.50x' in out


def test_no_placement_no_column(capsys):
    opts = Opts()
    opts.irq_cpu = None
    bench_net.print_table(bench_net.summarize([run(None, 1.0)]), opts)
    assert capsys.readouterr().out.splitlines()[1].split()[:3] == ['ring', 'txpoll', 'Mpps']


def test_compare_with_linux_takes_the_first_placement():
    results = [run('own', 1.0), run('other', 3.0)]
    linux = [{'round': 0, 'ring': 'split', 'mpps': 2.0}]
    cmp = bench_net.compare(bench_net.summarize(results),
                            [{'ring': 'split', 'mpps_median': 2.0}], results, linux, Opts())
    assert cmp[0]['ratio_txpoll0'] == 0.5 and cmp[0]['round_ratios_txpoll0'] == [0.5]


def test_cost_per_vcpu_table(capsys):
    table = bench_net.summarize([run('own', 1.0, vcpus=[900.0, 100.0]),
                                 run('own', 1.0, rnd=1, vcpus=[1100.0, 300.0])])
    assert table[0]['insns_raw_vcpu_per_packet'] == [1000.0, 200.0]
    bench_net.print_vcpu_cost(table)
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ['ring', 'txpoll', 'irq', 'insn/pkt', 'cpu0', 'cpu1']
    assert out[2].split() == ['split', '0', 'own', '1200', '1000', '200']


@pytest.mark.parametrize('text,cpu', [('-1', -1), ('none', -1), ('0', 0), ('1', 1)])
def test_pin_takes_a_cpu_or_none(text, cpu):
    assert parse('--pin', text).pin == cpu


def test_pin_refuses_other_negatives(capsys):
    with pytest.raises(SystemExit):
        parse('--pin', '-2')
    assert "argument --pin: expected a non-negative number, got '-2'" in capsys.readouterr().err
