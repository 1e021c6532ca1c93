# SPDX-License-Identifier: MIT
"""bench-net --queues N and --pair-cpu spread,cpu0: what they parse and
refuse, the boot keys and vCPUs they give ringside, pktgen's per-CPU
line, and the table with the owner layout, each CPU's Mpps and the
spread/cpu0 ratio."""

import pytest

from ringside import bench_net
from ringside import testpmd
from ringside import vhost_net
from conftest import usage_error

NET = ['-netdev', 'vhost-user,id=n0,chardev=vhu0']


def parse(*argv):
    return bench_net.build_parser().parse_args(list(argv))


def test_defaults_one_queue_no_layouts():
    opts = parse()
    assert opts.queues == 1 and opts.pair_cpu is None


@pytest.mark.parametrize('argv,error', [
    (['--queues', '2'], "--queues: the Linux guest's pktgen sends from one kpktgend thread "
                        "on one queue; --guests ringside"),
    (['--queues', '4', '--guests', 'ringside'], '--queues: ringside takes at most 3 queue '
                                                'pairs (its net_queues key)'),
    (['--pair-cpu', 'spread', '--guests', 'ringside'], '--pair-cpu takes spread and/or cpu0, '
                                                       'each once, with --queues 2 or more'),
    (['--queues', '2', '--pair-cpu', 'cpu0,cpu0', '--guests', 'ringside'],
     '--pair-cpu takes spread and/or cpu0, each once, with --queues 2 or more'),
    (['--pair-cpu', 'cpu1'], "argument --pair-cpu: 'cpu1' not one of ('spread', 'cpu0')"),
])
def test_bad_queues_are_one_line(capsys, argv, error):
    assert usage_error(capsys, bench_net.main, argv) == \
        'bench-net: error: %s (see --help)\n' % error


def test_queues_boot_keys_and_vcpus():
    words = bench_net.ringside_cmdline(queues=2, pair_cpu='cpu0').split()
    assert 'net_queues=2' in words and 'net_pair_cpu=cpu0' in words
    assert 'net_pair_cpu=spread' in bench_net.ringside_cmdline(queues=2).split()
    assert 'net_queues' not in bench_net.ringside_cmdline()
    assert bench_net.ringside_qemu_args(NET, queues=2) == ['-smp', '2'] + NET
    assert bench_net.ringside_qemu_args(NET, 'own', queues=3) == ['-smp', '3'] + NET


def test_peers_offer_the_queues():
    pmd = testpmd.TestPmd('/tmp/x.sock', queues=2)
    assert '--rxq=2' in pmd.argv() and 'mq=on' in ' '.join(pmd.net_args(False, 'm'))
    tap = vhost_net.TapSink('qemu', queues=2)
    args = ' '.join(tap.net_args(False, '52:54:00:12:34:56'))
    assert 'vhost=on,queues=2' in args and 'mq=on,vectors=6' in args
    assert 'queues' not in ' '.join(vhost_net.TapSink('qemu').net_args(False, 'm'))


def test_per_cpu_line():
    out = ('pktgen: per queue 0=500 1=500\r\n'
           'pktgen: per cpu 0=1.6942 1=2.5044 Mpps\r\n')
    assert bench_net.parse_per_cpu(out) == {0: 1.6942, 1: 2.5044}
    assert bench_net.parse_per_cpu('pktgen: 1000 packets') == {}


def run(pair_cpu, mpps, per, rnd=0):
    return {'round': rnd, 'ring': 'split', 'txpoll': 1, 'irq_cpu': None, 'pair_cpu': pair_cpu,
            'mpps': mpps, 'cpu_mpps': per, 'kicks_per_packet': 0.01, 'ring_full': 0,
            'packets': 1000, 'testpmd_rx': 1000}


class Opts:
    peer, count, size, burst, rounds, accel, pin = 'testpmd', 1000, 64, 256, 2, 'tcg', 0
    lcores, queues, pair_cpu = '0-1', 2, ['spread', 'cpu0']
    rings, txpoll, irq_cpu = ['split'], [1], None


def test_table_has_the_layout_each_cpu_and_the_ratio(capsys):
    table = bench_net.summarize([run('spread', 3.0, {0: 1.0, 1: 2.0}),
                                 run('spread', 5.0, {0: 3.0, 1: 4.0}, rnd=1),
                                 run('cpu0', 2.0, {})])
    assert table[0]['cpu_mpps_median'] == {0: 2.0, 1: 3.0}
    bench_net.print_table(table, Opts())
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(', 2 queue pairs on 2 vCPUs')
    assert out[1].split()[:6] == ['ring', 'txpoll', 'pairs', 'Mpps', 'per', 'cpu']
    assert out[2].split()[:5] == ['split', '1', 'spread', '0=2.0000', '1=3.0000']
    assert out[3].split()[:4] == ['split', '1', 'cpu0', '-']
    assert 'split txpoll=1: net_pair_cpu=spread / cpu0 = 2.00x' in out
