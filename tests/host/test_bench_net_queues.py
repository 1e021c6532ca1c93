# SPDX-License-Identifier: MIT
"""ringside net --queues N and --pair-cpu spread,cpu0: what they parse and
refuse, the boot keys and vCPUs they give the guests, pktgen's per-CPU
lines (ringside's and the Linux guest server's), and the tables with the
owner layout, each CPU's Mpps, the spread/cpu0 ratio and Linux beside
the first layout."""


import pytest

from ringside import linux_guest, netguest, testpmd, vhost_net
from ringside.commands import net as bench_net
from conftest import PrintedConsole, usage_error

NET = ['-netdev', 'vhost-user,id=n0,chardev=vhu0']


def parse(*argv):
    return bench_net.build_parser().parse_args(list(argv))


def test_defaults_one_queue_no_layouts():
    opts = parse()
    assert opts.queues == 1 and opts.pair_cpu is None


@pytest.mark.parametrize('argv,error', [
    (['--queues', '4'], '--queues: ringside takes at most 3 queue pairs (its net_queues key)'),
    (['--pair-cpu', 'spread', '--guests', 'ringside'], '--pair-cpu takes spread and/or cpu0, '
                                                       'each once, with --queues 2 or more'),
    (['--queues', '2', '--pair-cpu', 'cpu0,cpu0', '--guests', 'ringside'],
     '--pair-cpu takes spread and/or cpu0, each once, with --queues 2 or more'),
    (['--pair-cpu', 'cpu1'], "argument --pair-cpu: 'cpu1' not one of ('spread', 'cpu0')"),
])
def test_bad_queues_are_one_line(capsys, argv, error):
    assert usage_error(capsys, bench_net.main, argv) == \
        'ringside net: error: %s (see --help)\n' % error


def test_queues_boot_keys_and_vcpus():
    words = bench_net.ringside_cmdline(queues=2, pair_cpu='cpu0').split()
    assert 'net_queues=2' in words and 'net_pair_cpu=cpu0' in words
    assert 'net_pair_cpu=spread' in bench_net.ringside_cmdline(queues=2).split()
    assert 'net_queues' not in bench_net.ringside_cmdline()
    assert bench_net.guest_qemu_args(NET, queues=2) == ['-smp', '2'] + NET
    assert bench_net.guest_qemu_args(NET, 'own', queues=3) == ['-smp', '3'] + NET


def test_peers_offer_the_queues():
    pmd = testpmd.TestPmd('/tmp/x.sock', queues=2)
    assert '--rxq=2' in pmd.argv() and 'mq=on' in ' '.join(pmd.net_args(False, 'm'))
    tap = vhost_net.TapSink('qemu', queues=2)
    args = ' '.join(tap.net_args(False, '52:54:00:12:34:56'))
    assert 'vhost=on,queues=2' in args and 'mq=on,vectors=6' in args
    assert 'queues' not in ' '.join(vhost_net.TapSink('qemu').net_args(False, 'm'))


class JsonConsole:
    """A guest console that answers every command with `line`."""

    def __init__(self, line):
        self.line, self.sent = line, []

    def command(self, cmd, timeout):
        self.sent.append(cmd)
        return self.line


def test_pktgen_json_gives_each_cpus_rate():
    con = JsonConsole('pktgen-json: {"count":1000,"sent":1000,"size":64,"bytes":64000,'
                      '"ns":400000,"kicks":10,"ring_full":2,"burst":256,"stalled":false,'
                      '"queues":[500,500],"cpus":[{"cpu":0,"sent":500,"ns":250000},'
                      '{"cpu":1,"sent":500,"ns":200000}]}')
    r = netguest.pktgen(con, 1000, 64, 256, 60, queues=2)
    assert con.sent == ['pktgen count=1000 size=64 burst=256 dst=10.0.2.2,02:00:00:00:00:02 '
                        'queues=2 json']
    assert r['packets'] == 1000 and r['cpu_mpps'] == {0: 2.0, 1: 2.5}
    assert r['mpps'] == 2.5 and r['kicks_per_packet'] == 0.01 and r['ring_full'] == 2


def test_pktgen_of_one_cpu_has_no_split():
    con = JsonConsole('pktgen-json: {"count":10,"sent":10,"size":64,"bytes":640,"ns":5000,'
                      '"kicks":1,"ring_full":0,"burst":1,"stalled":false,"queues":[10],'
                      '"cpus":[{"cpu":0,"sent":10,"ns":4000}]}')
    assert netguest.pktgen(con, 10, 64, 1, 60)['cpu_mpps'] == {}


def test_pktgen_refused_is_the_guests_line():
    con = JsonConsole('error: pktgen: no network device')
    with pytest.raises(netguest.NetError, match='no network device'):
        netguest.pktgen(con, 10, 64, 1, 60)


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


LINUX_TWO = ('pktgen-queues: 0=600/400000 1=400/200000\r\n'
             'pktgen-result: sent 1000 of 1000 in 400000 usec 2500 pps errors 0 size 64 '
             'burst 256 runs 1 queues 2\r\npktgen-done\r\n')


def test_linux_pktgen_queues_line():
    con = PrintedConsole(LINUX_TWO)
    r = linux_guest.pktgen(con, netguest.PEER_IP, netguest.PEER_MAC, 1000, 64, 256, 60,
                           queues=2)
    assert con.sent[0].startswith('pktgen ') and con.sent[0].endswith(' 1000 64 256 2\n')
    assert r['packets'] == 1000 and r['cpu_mpps'] == {0: 600 / 400000, 1: 400 / 200000}
    assert abs(r['mpps'] - 1000 / 400000) < 1e-12


def test_linux_pktgen_one_queue_as_before():
    con = PrintedConsole('pktgen-result: sent 10 of 10 in 5 usec 2000000 pps errors 0 '
                         'size 64 burst 1 runs 1\r\npktgen-done\r\n')
    r = linux_guest.pktgen(con, netguest.PEER_IP, netguest.PEER_MAC, 10, 64, 1, 60)
    assert con.sent[0].endswith(' 10 64 1\n') and r['cpu_mpps'] == {} and r['packets'] == 10


def test_linux_pktgen_error_is_one_line():
    con = PrintedConsole('pktgen error: no /proc/net/pktgen/kpktgend_1: 2 queues need 2 '
                         'CPUs\r\npktgen-done\r\n')
    with pytest.raises(linux_guest.PktgenError, match='^Linux guest: pktgen error: no '):
        linux_guest.pktgen(con, netguest.PEER_IP, netguest.PEER_MAC, 10, 64, 1, 60, queues=2)


def test_linux_beside_the_first_layout(capsys):
    table = bench_net.summarize([run('spread', 3.0, {0: 1.0, 1: 2.0}), run('cpu0', 2.0, {})])
    lx = dict(run(None, 1.5, {0: 0.5, 1: 1.0}), errors=0)
    del lx['txpoll']
    linux_table = bench_net.summarize_linux([lx])
    assert linux_table[0]['cpu_mpps_median'] == {0: 0.5, 1: 1.0}
    cmp = bench_net.compare(table, linux_table, [run('spread', 3.0, {}), run('cpu0', 2.0, {})],
                            [lx], Opts())
    assert cmp[0]['ringside_txpoll1_mpps'] == 3.0 and cmp[0]['ratio_txpoll1'] == 2.0
    bench_net.print_linux(linux_table, cmp, Opts())
    out = capsys.readouterr().out.splitlines()
    assert '2 kpktgend threads, each on its CPU and queue' in out[0]
    assert out[2].split()[:4] == ['split', '0=0.5000', '1=1.0000', '1.5000']
