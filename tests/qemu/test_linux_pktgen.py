# SPDX-License-Identifier: MIT
"""The Linux baseline of host/bench-net: Debian's kernel (build/linux-guest)
with its own virtio_net driver and pktgen module, on virtio-net-pci over
vhost-user to dpdk-testpmd (rxonly), split and packed rings.

The guest's `pktgen DSTIP DSTMAC COUNT SIZE BURST` console command must send
exactly COUNT frames, and testpmd must count exactly those (frames and
bytes). QEMU options, testpmd and the console handling come from
host/bench-net, so this tests what the benchmark runs. Every process is
stopped by its PID.
"""

import os
import shutil
import subprocess
import tempfile

import pytest

import ringside
from ringside import bench_net as bench

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


@pytest.fixture(scope='module', params=['split', 'packed'])
def linux_pmd(request, linux_images):
    """(Launch, TestPmd, ring) for a booted Linux guest against testpmd."""
    ring = request.param
    rr = ringside
    os.makedirs(LOG_DIR, exist_ok=True)
    name = 'linux-pktgen-%s' % ring
    workdir = tempfile.mkdtemp(prefix='ringside-linux-pktgen-')
    sock = os.path.join(workdir, 'vhost-net.sock')
    pmd_log = open(os.path.join(LOG_DIR, name + '.testpmd.log'), 'w')
    serial_log = open(os.path.join(LOG_DIR, name + '.serial.log'), 'wb')
    qemu_err = open(os.path.join(LOG_DIR, name + '.stderr.log'), 'w')
    pmd = bench.TestPmd(sock, mode='rxonly', log=pmd_log)
    launch = None
    try:
        pmd.start()
        accel = os.environ.get('RINGSIDE_TEST_ACCEL', 'tcg')
        opts = rr.parse_args(bench.linux_guest_argv(sock, ring == 'packed', accel))
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


def test_pktgen_count_reaches_testpmd(linux_pmd):
    """COUNT 64-byte frames in bursts of 256: all sent, all counted."""
    launch, pmd, _ = linux_pmd
    base = pmd.port_stats()
    r = bench.linux_pktgen(launch.console, COUNT, 64, 256, PKTGEN_TIMEOUT)
    assert r['count'] == COUNT
    assert r['packets'] == COUNT, r
    st = pmd.wait_rx(COUNT, base, timeout=120)
    assert st['rx'] == COUNT, 'Linux pktgen sent %d, testpmd received %d' % (COUNT, st['rx'])
    assert st['rx_bytes'] == COUNT * 64
    assert r['mpps'] > 0


def test_pktgen_bad_arguments_report_an_error(linux_pmd):
    launch, pmd, _ = linux_pmd
    base = pmd.port_stats()
    with pytest.raises(bench.TestPmdError, match='pktgen error: need'):
        bench.linux_pktgen(launch.console, 10, 20, 1, PKTGEN_TIMEOUT)
    assert pmd.wait_rx(0, base)['rx'] == 0
