# SPDX-License-Identifier: MIT
"""ringside rr's --shape axis (vCPUs x virtio-net queue pairs): what it
parses and refuses, the QEMU and guest command lines each shape boots
with, how the guests' queue pairs are read back, and the tables that
put ringside beside Linux in the same shape."""


import pytest

from ringside import linux_guest, netns
from ringside.commands import rr as bench_rr
from ringside.cli import shape_list
from conftest import PrintedConsole, usage_error


class FakeNs:
    """Enough of netns.NetNs for guest_args (it only asks whether one is there)."""


def qemu_args(args):
    return [a[len('--qemu-arg='):] for a in args if a.startswith('--qemu-arg=')]


def cmdline(args):
    return args[args.index('--cmdline') + 1]


@pytest.mark.parametrize('text,shapes', [
    ('1x1', [(1, 1)]),
    ('1x1,2x1,2x2', [(1, 1), (2, 1), (2, 2)]),
    ('4x3', [(4, 3)]),
])
def test_shapes_parse(text, shapes):
    assert shape_list(text) == shapes


@pytest.mark.parametrize('argv,error', [
    (['--shape', '2y2'], "argument --shape: expected SMPxQUEUES like 1x1,2x2, got '2y2'"),
    (['--shape', '0x1'], "argument --shape: expected SMPxQUEUES like 1x1,2x2, got '0x1'"),
    (['--shape', '2x2,2x2'], "argument --shape: a shape twice in '2x2,2x2'"),
    (['--shape', '1x1,2x4'], '--shape: 2x4: ringside takes at most 3 virtio-net queue pairs '
                             '(its net_queues key)'),
    (['--shape', '65x1'], '--shape: 65x1: ringside takes at most 64 vCPUs (its cpus key)'),
    (['--shape', '2x2', '--no-udp'], '--shape: queue pairs need the UDP cells (virtio-net on '
                                     'a tap: root, no --no-udp)'),
])
def test_bad_shapes_are_one_line_before_anything_boots(capsys, argv, error):
    assert usage_error(capsys, bench_rr.main, argv) == \
        'ringside rr: error: %s (see --help)\n' % error


def test_pairs_without_a_namespace_are_refused(capsys, monkeypatch):
    """Not root: no UDP cells, so no virtio-net to give queue pairs to."""
    monkeypatch.setattr(netns, 'usable', lambda: False)
    with pytest.raises(SystemExit):
        bench_rr.main(['--shape', '1x1,2x2'])
    assert capsys.readouterr().err == ('ringside rr: error: --shape: queue pairs need the UDP '
                                       'cells (virtio-net on a tap: root, no --no-udp) '
                                       '(see --help)\n')


def test_linux_alone_is_not_held_to_ringside_limits():
    assert bench_rr.shape_refused([(2, 4)], ['linux'], True) is None
    assert 'net_queues' in bench_rr.shape_refused([(2, 4)], ['ringside', 'linux'], True)


def test_default_shape_boots_as_before():
    """1x1 is the command line rr has always used: no -smp, one pair."""
    args = bench_rr.guest_args('ringside', False, FakeNs())
    assert args == ['--vsock', '--boot', 'elf',
                    '--cmdline', 'ip=10.0.2.15 prefix=24 gw=10.0.2.2',
                    '--qemu-arg=-netdev',
                    '--qemu-arg=tap,id=n0,ifname=rstap0,script=no,downscript=no',
                    '--qemu-arg=-device',
                    '--qemu-arg=virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56']


def test_ringside_two_by_two():
    args = bench_rr.guest_args('ringside', False, FakeNs(), shape=(2, 2))
    q = qemu_args(args)
    assert q[q.index('-smp') + 1] == '2'
    assert cmdline(args).split()[-1] == 'net_queues=2'
    assert 'tap,id=n0,ifname=rstap0,script=no,downscript=no,queues=2' in q
    assert 'virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56,mq=on,vectors=6' in q


def test_linux_gets_the_same_machine_and_picks_its_pairs_itself():
    ringside = qemu_args(bench_rr.guest_args('ringside', False, FakeNs(), shape=(2, 2)))
    args = bench_rr.guest_args('linux', False, FakeNs(), shape=(2, 2))
    assert 'net_queues' not in cmdline(args)
    q = qemu_args(args)
    assert q[:2] == ['-smp', '2']
    assert q[-4:] == ringside[-4:]    # -netdev and -device alike


def test_vhost_net_with_queues():
    q = qemu_args(bench_rr.guest_args('ringside', False, FakeNs(), poll_us=50, shape=(2, 3)))
    assert 'tap,id=n0,ifname=rstap0,script=no,downscript=no,vhost=on,poll-us=50,queues=3' in q
    assert any(a.endswith(',mq=on,vectors=8') for a in q)


def test_one_cpu_many_pairs_has_no_smp():
    q = qemu_args(bench_rr.guest_args('ringside', False, FakeNs(), shape=(1, 2)))
    assert '-smp' not in q


def test_multi_queue_tap_only_for_pairs():
    assert netns.tuntap_add(1) == ('tuntap', 'add', 'dev', 'rstap0', 'mode', 'tap')
    assert netns.tuntap_add(2) == ('tuntap', 'add', 'dev', 'rstap0', 'mode', 'tap',
                                   'multi_queue')


INTERRUPTS = """\
           CPU0       CPU1
  1:          9          0   IO-APIC   1-edge      i8042
 24:          0          0   PCI-MSIX-0000:00:03.0   0-edge      virtio1-config
 25:        120          3   PCI-MSIX-0000:00:03.0   1-edge      virtio1-input.0
 26:         40          0   PCI-MSIX-0000:00:03.0   2-edge      virtio1-output.0
 27:          2        300   PCI-MSIX-0000:00:03.0   3-edge      virtio1-input.1
 28:          0          1   PCI-MSIX-0000:00:03.0   4-edge      virtio1-output.1
 29:          5          0   PCI-MSIX-0000:00:04.0   1-edge      virtio0-rx
"""


def test_rx_queue_interrupts_summed_over_cpus():
    assert linux_guest.rx_queue_irqs(INTERRUPTS) == {0: 123, 1: 302}


def row(guest, shape, tps, transport='udp', sessions=1, size=1, **extra):
    r = {'guest': guest, 'shape': shape, 'transport': transport, 'backend': '-',
         'sessions': sessions, 'size': size, 'tps': tps, 'tps_per_session': tps / sessions,
         'p50': 1000.0, 'p99': 2000.0, 'jain': 1.0, 'slowest_tps': tps}
    r.update(extra)
    return r


def test_ratios_pair_ringside_and_linux_of_the_same_shape(capsys):
    rows = [row('ringside', '1x1', 100.0), row('ringside', '2x2', 300.0),
            row('linux', '1x1', 50.0), row('linux', '2x2', 100.0)]
    bench_rr.print_ratios(rows)
    lines = capsys.readouterr().out.splitlines()
    ratio = {line.split()[0]: line.split()[-2] for line in lines
             if line.split() and line.split()[0] in ('1x1', '2x2')}
    assert ratio == {'1x1': '2.00', '2x2': '3.00'}


@pytest.mark.parametrize('text,pairs', [
    ('queues\r\nqueues rx 2 tx 2\r\n', 2),
    ('queues rx 1 tx 1\n', 1),
    ('queues error: /sys/class/net/eth0/queues: No such file or directory\n', None),
    ('commands: connect|sconnect PORT BYTES | ... | reboot\n', None),   # an older initrd
])
def test_linux_pairs_from_its_sysfs_queues(text, pairs):
    con = PrintedConsole(text)
    assert linux_guest.queue_pairs(con) == pairs
    assert con.sent == ['queues\n']


def test_pairs_that_took_interrupts():
    assert bench_rr.irq_pairs({0: 10, 1: 5}, {0: 20, 1: 5}) == 1
    assert bench_rr.irq_pairs({0: 10, 1: 5}, {0: 11, 1: 6}) == 2


def test_pairs_note():
    assert bench_rr.pairs_note('linux', (2, 2), 2, 1) == (
        '  linux 2x2: 2 queue pair(s) offered, 2 enabled (/sys/class/net/eth0/queues), '
        '1 took RX interrupts in the UDP cells')
    assert bench_rr.pairs_note('ringside', (1, 1), None, None) == (
        "  ringside 1x1: 1 queue pair(s) offered, ? enabled (the guest's `net`)")


def test_rows_show_shape_and_pairs(capsys):
    bench_rr.print_rows([row('linux', '2x2', 10.0, pairs=2),
                         row('ringside', '1x1', 10.0, transport='vsock')])
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[:3] == ['guest', 'shape', 'pairs']
    assert lines[3].split()[:4] == ['linux', '2x2', '2', 'udp']
    assert lines[4].split()[:4] == ['ringside', '1x1', '-', 'vsock']


def test_report_reads_rows_from_before_shapes(tmp_path, capsys):
    old = row('ringside', None, 10.0)
    del old['shape']

    class Opts:
        plots = str(tmp_path)
    assert bench_rr.report(Opts(), 'tcg', [old]) == 0
    assert old['shape'] == '1x1'
    assert (tmp_path / 'rr.md').exists()
