# SPDX-License-Identifier: MIT
"""On the kernel's vhost-vsock under KVM, after test_kernel_vsock's guest
has gone (each guest here takes CID 3 in turn): the Linux guests' echo on
the same path (Debian's 6.1 and 6.12, seed 000's before and after), the
benchmark commands unchanged (ringside bench, exits,
--tools, --attach cid:N), and the launcher's packed=on guard against the
device's own features."""

import os
import re
import subprocess

import pytest

import ringside as rr
from ringside.benchlib import wait_vsock_cid
from ringside.images import LINUX_READY, linux_guest, linux_missing
from ringside_qemu import Guest, run_command, run_launcher
from test_kernel_vsock import CID, ECHO, KERNEL_ARGS, SIZES, echo_checked


@pytest.mark.parametrize('which', ['linux', 'linux-6.12'])
def test_linux_guest_echo_on_the_same_path(which):
    """Each Linux guest boots under KVM on the kernel's vhost-vsock and
    echoes every size byte for byte."""
    assert not linux_missing(which), linux_missing(which)
    kernel, initrd = linux_guest(which)
    g = Guest('--boot', 'elf', '--kernel', kernel, '--cmdline',
              'console=ttyS0 quiet panic=-1', '--qemu-arg=-initrd',
              '--qemu-arg=' + initrd, *KERNEL_ARGS, name='kvm-' + which)
    try:
        g.start(wait_ready=False)
        g.wait_for(LINUX_READY, 300)
        wait_vsock_cid(CID, ECHO)
        echo_checked(SIZES)
    finally:
        g.stop()


def _script(name, *args, timeout=600):
    return run_command(name, *args, timeout=timeout)


def test_bench_vsock_on_the_kernel_path():
    """The benchmark, unchanged: KVM, AF_VSOCK, both tables, and
    --exits: every round trip at least its kick and every MiB its exits."""
    out = _script('bench', '--exits', '--sizes', '64,4k', '--count', '100',
                  '-l', '64k', '-P', '1', '--time', '1', '--no-save', '--',
                  '--vsock-transport', 'kernel')
    assert out.returncode == 0, out.stderr
    assert re.search(r'^ringside bench: accel kvm, .*kernel vhost-vsock',
                     out.stdout, re.M), out.stdout
    line = re.search(r'^default\s+64\s+100\s.*$', out.stdout, re.M)
    assert line, out.stdout
    # size rounds p1 p50 mean p99 p99.9 max kick/rt irq/rt miss/rt exit/rt hlt notify ...
    cols = line.group(0).split()[1:]
    kicks, exits, notify = float(cols[8]), float(cols[11]), float(cols[13])
    assert kicks >= 0.9 and abs(notify - kicks) <= 0.1 and exits >= notify, line.group(0)
    assert re.search(r'^default\s+g2h\s+65536\s+1\s+\d', out.stdout, re.M), out.stdout


def test_exit_cost_table():
    out = _script('exits', '--guests', 'ringside', '--count', '200', '--time', '1',
                  '--idle', '1', '--no-save')
    assert out.returncode == 0, out.stderr
    for row in ('idle/s', '64 B rt', '4 KiB rt', 'h2g MiB', 'g2h MiB'):
        m = re.search(r'^ringside\s+%s\s+([\d.]+)' % re.escape(row), out.stdout, re.M)
        assert m, (row, out.stdout)
    rt = re.search(r'^ringside\s+64 B rt\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)', out.stdout, re.M)
    exits, hlt, notify = map(float, rt.groups())
    assert notify >= 0.9 and exits >= hlt + notify, out.stdout


def test_tools_through_socat_on_the_kernel_path():
    """--tools: sockperf, iperf3 and ringside-bench through socat's TCP to
    AF_VSOCK forwards, beside ringside-bench on AF_VSOCK; no socat left."""
    out = _script('bench', '--tools', '--sizes', '64', '--count', '50', '-l',
                  '64k', '-P', '1', '--dirs', 'h2g', '--time', '1', '--no-save', '--',
                  '--vsock-transport', 'kernel')
    assert out.returncode == 0, out.stderr
    for tool in ('sockperf tcp fwd', 'ringside-bench tcp fwd', 'ringside-bench AF_VSOCK'):
        assert re.search(r'^%s\s+64\s+[1-9]' % tool, out.stdout, re.M), (tool, out.stdout)
    for tool in ('iperf3 tcp fwd', 'ringside-bench tcp fwd', 'ringside-bench AF_VSOCK'):
        assert re.search(r'^%s\s+h2g\s+1\s+[\d.]+' % tool, out.stdout, re.M), (tool, out.stdout)
    left = subprocess.run(['pgrep', '-x', 'socat'], capture_output=True, text=True)
    assert left.stdout == '', 'socat still running: %s' % left.stdout


def test_kernel_packed_guard_matches_the_device():
    """packed=on with the kernel's device: refused in one line exactly when
    VHOST_GET_FEATURES lacks VIRTIO_F_RING_PACKED (Linux 6.1's vhost)."""
    packed = rr.vhost_features() >> 34 & 1
    r = run_launcher('--vsock', '--vsock-transport', 'kernel', '--qemu-arg=-global',
                     '--qemu-arg=vhost-vsock-pci.packed=on', '--boot', 'elf', '--cmd', 'uptime',
                     timeout=300)
    if packed:
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode == 2 and r.stdout == '', r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith('ringside run: error: '), r.stderr
        assert 'needs VIRTIO_F_RING_PACKED (bit 34)' in lines[0], r.stderr


def test_attach_cid_on_the_kernel_device():
    cid = 1000 + os.getpid() % 10000   # not a CID another guest here has
    with Guest('--boot', 'elf', '--vsock', '--vsock-transport', 'kernel', '--vsock-cid',
               str(cid), name='attach-cid') as g:
        g.start()
        r = _script('bench', '--attach', 'cid:%d' % cid, '--count', '50', '--time', '1',
                    '-l', '64k', '-P', '1', '--no-save')
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith('ringside bench: attach cid:%d, ' % cid)
        assert len(re.findall(r'^default\s+(\d+)\s+50\s', r.stdout, re.M)) == 3, r.stdout
        assert len(re.findall(r'^default\s+(h2g|g2h)\s', r.stdout, re.M)) == 2, r.stdout
        assert g.poweroff() == 0
