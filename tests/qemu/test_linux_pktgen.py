# SPDX-License-Identifier: MIT
"""The Linux baseline of ringside net: Debian's kernel (build/linux-guest)
with its own virtio_net driver and pktgen module, on virtio-net-pci over
vhost-user to dpdk-testpmd (rxonly), split and packed rings.

The guest's `pktgen DSTIP DSTMAC COUNT SIZE BURST [QUEUES]` console command
must send exactly COUNT frames, and testpmd must count exactly those (frames
and bytes); with two vCPUs and two queue pairs (ringside net --queues 2), each
CPU's kpktgend thread sends its half on its own queue, counted per queue.
QEMU options, testpmd and the console handling come from ringside net,
so this tests what the benchmark runs. Every process is stopped by its PID.
"""

import os
import shutil
import subprocess
import tempfile

import pytest

import ringside
from ringside import linux_guest as lg
from ringside.commands import net as bench
from ringside.netguest import PEER_IP, PEER_MAC

from conftest import REPO


pytestmark = [
        pytest.mark.slow,
        pytest.mark.skipif(not shutil.which('dpdk-testpmd'),
                           reason='dpdk-testpmd not installed (package dpdk-dev)'),
        pytest.mark.skipif(not os.path.isdir('/lib/modules') or not os.listdir('/lib/modules'),
                           reason='no Debian kernel (package linux-image-amd64)'),
]

BOOT_TIMEOUT = 300.0     # TCG on two busy cores; ~11 s when idle
PKTGEN_TIMEOUT = 300.0
COUNT = 20000
LOG_DIR = os.path.join(REPO, 'build', 'qemu-test-logs')


@pytest.fixture(scope='module')
def linux_images():
    subprocess.run(['make', '-s', 'linux-guest'], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL)
    assert os.path.exists(bench.LINUX_KERNEL) and os.path.exists(bench.LINUX_INITRD)


def linux_guest(name, ring, queues=1):
    """(Launch, TestPmd, ring): the Linux guest booted against testpmd,
    with `queues` pairs on as many vCPUs as ringside net --queues boots it."""
    rr = ringside
    os.makedirs(LOG_DIR, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix='ringside-linux-pktgen-')
    sock = os.path.join(workdir, 'vhost-net.sock')
    pmd_log = open(os.path.join(LOG_DIR, name + '.testpmd.log'), 'w')
    serial_log = open(os.path.join(LOG_DIR, name + '.serial.log'), 'wb')
    qemu_err = open(os.path.join(LOG_DIR, name + '.stderr.log'), 'w')
    pmd = bench.TestPmd(sock, mode='rxonly', log=pmd_log, queues=queues)
    launch = None
    try:
        pmd.start()
        accel = os.environ.get('RINGSIDE_TEST_ACCEL', 'tcg')
        net = bench.guest_qemu_args(pmd.net_args(ring == 'packed', bench.GUEST_MAC),
                                    queues=queues)
        opts = rr.parse_args(bench.linux_guest_argv(sock, ring == 'packed', accel, net=net))
        launch = rr.Launch(opts, accel, qemu_stderr=qemu_err, log=serial_log)
        launch.start()
        launch.wait_ready(BOOT_TIMEOUT, linux=True)
        yield launch, pmd, ring
    finally:
        if launch:
            launch.stop()
        pmd.stop()
        for f in (pmd_log, serial_log, qemu_err):
            f.close()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope='module', params=['split', 'packed'])
def linux_pmd(request, linux_images):
    yield from linux_guest('linux-pktgen-%s' % request.param, request.param)


@pytest.fixture(scope='module')
def linux_pmd_two(linux_images):
    """Two vCPUs, two queue pairs, split ring."""
    yield from linux_guest('linux-pktgen-two', 'split', queues=2)


def test_pktgen_count_reaches_testpmd(linux_pmd):
    """COUNT 64-byte frames in bursts of 256: all sent, all counted."""
    launch, pmd, _ = linux_pmd
    base = pmd.port_stats()
    r = lg.pktgen(launch.console, PEER_IP, PEER_MAC, COUNT, 64, 256, PKTGEN_TIMEOUT)
    assert r['count'] == COUNT
    assert r['packets'] == COUNT, r
    st = pmd.wait_rx(COUNT, base, timeout=120)
    assert st['rx'] == COUNT, 'Linux pktgen sent %d, testpmd received %d' % (COUNT, st['rx'])
    assert st['rx_bytes'] == COUNT * 64
    assert r['mpps'] > 0


def test_pktgen_bad_arguments_report_an_error(linux_pmd):
    launch, pmd, _ = linux_pmd
    base = pmd.port_stats()
    with pytest.raises(lg.PktgenError, match='pktgen error: need'):
        lg.pktgen(launch.console, PEER_IP, PEER_MAC, 10, 20, 1, PKTGEN_TIMEOUT)
    assert pmd.wait_rx(0, base)['rx'] == 0


def test_pktgen_two_queues_each_from_its_cpu(linux_pmd_two):
    """QUEUES 2: kpktgend_0 sends the larger half on queue 0, kpktgend_1
    the rest on queue 1; testpmd counts each half on its own queue."""
    launch, pmd, _ = linux_pmd_two
    n = COUNT + 1
    assert lg.queue_pairs(launch.console) == 2
    base, qbase = pmd.port_stats(), pmd.queue_stats()
    r = lg.pktgen(launch.console, PEER_IP, PEER_MAC, n, 64, 256, PKTGEN_TIMEOUT, queues=2)
    assert r['packets'] == n, r
    assert sorted(r['cpu_mpps']) == [0, 1] and all(v > 0 for v in r['cpu_mpps'].values()), r
    st = pmd.wait_rx(n, base, timeout=120)
    assert st['rx'] == n, 'Linux pktgen sent %d, testpmd received %d' % (n, st['rx'])
    q = pmd.queue_stats()
    assert [q['rx'][i] - qbase['rx'][i] for i in range(2)] == [n // 2 + 1, n // 2]


def test_pktgen_one_queue_after_two(linux_pmd_two):
    """QUEUES 1 after a run with 2: only queue 0 sends; kpktgend_1's
    device from the run before does not send its share again."""
    launch, pmd, _ = linux_pmd_two
    base, qbase = pmd.port_stats(), pmd.queue_stats()
    r = lg.pktgen(launch.console, PEER_IP, PEER_MAC, COUNT, 64, 256, PKTGEN_TIMEOUT)
    assert r['packets'] == COUNT and r['cpu_mpps'] == {}, r
    st = pmd.wait_rx(COUNT, base, timeout=120)
    assert st['rx'] == COUNT, 'Linux pktgen sent %d, testpmd received %d' % (COUNT, st['rx'])
    q = pmd.queue_stats()
    assert [q['rx'][i] - qbase['rx'][i] for i in range(2)] == [COUNT, 0]


def test_pktgen_more_queues_than_cpus_is_refused(linux_pmd_two):
    launch, pmd, _ = linux_pmd_two
    base = pmd.port_stats()
    with pytest.raises(lg.PktgenError, match=r'^Linux guest: pktgen error: no '
                       r'/proc/net/pktgen/kpktgend_2: 3 queues need 3 CPUs$'):
        lg.pktgen(launch.console, PEER_IP, PEER_MAC, 10, 64, 1, PKTGEN_TIMEOUT, queues=3)
    assert pmd.wait_rx(0, base)['rx'] == 0
