# SPDX-License-Identifier: MIT
"""On the kernel's vhost-vsock under KVM, after test_kernel_vsock's guest
has gone (each guest here takes CID 3 in turn): the Linux guest's echo on
the same path, and the benchmark scripts unchanged (bench-vsock, exit-cost)."""

import os
import re
import subprocess

from ringside.bench_compare import LINUX_INITRD, LINUX_KERNEL, LINUX_READY
from ringside.exit_cost import wait_vsock_cid
from ringside_qemu import REPO, Guest
from test_kernel_vsock import CID, ECHO, KERNEL_ARGS, SIZES, echo_checked


def test_linux_guest_echo_on_the_same_path():
    for path in (LINUX_KERNEL, LINUX_INITRD):
        assert os.path.exists(path), '%s missing: run make linux-guest' % path
    g = Guest('--boot', 'elf', '--kernel', LINUX_KERNEL, '--cmdline',
              'console=ttyS0 quiet panic=-1', '--qemu-arg=-initrd',
              '--qemu-arg=' + LINUX_INITRD, *KERNEL_ARGS, name='kvm-linux')
    try:
        g.start(wait_ready=False)
        g.wait_for(LINUX_READY, 300)
        wait_vsock_cid(CID, ECHO)
        echo_checked(SIZES)
    finally:
        g.stop()


def _script(name, *args, timeout=600):
    return subprocess.run(['/usr/bin/python3', os.path.join(REPO, 'host', name), *args],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def test_bench_vsock_on_the_kernel_path():
    """The benchmark script, unchanged: KVM, AF_VSOCK, both tables."""
    out = _script('bench-vsock', '--sizes', '64,4k', '--count', '100', '--lengths', '64k',
                  '--streams', '1', '--time', '1', '--', '--vsock-transport', 'kernel')
    assert out.returncode == 0, out.stderr
    assert re.search(r'^ringside vsock benchmark: accel kvm, .*kernel vhost-vsock',
                     out.stdout, re.M), out.stdout
    assert re.search(r'^default\s+64\s+100\s', out.stdout, re.M), out.stdout
    assert re.search(r'^default\s+g2h\s+65536\s+1\s+\d', out.stdout, re.M), out.stdout


def test_exit_cost_table():
    out = _script('exit-cost', '--guests', 'ringside', '--count', '200', '--time', '1',
                  '--idle', '1')
    assert out.returncode == 0, out.stderr
    for row in ('idle/s', '64 B rt', '4 KiB rt', 'h2g MiB', 'g2h MiB'):
        m = re.search(r'^ringside\s+%s\s+([\d.]+)' % re.escape(row), out.stdout, re.M)
        assert m, (row, out.stdout)
    rt = re.search(r'^ringside\s+64 B rt\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)', out.stdout, re.M)
    exits, hlt, notify = map(float, rt.groups())
    assert notify >= 0.9 and exits >= hlt + notify, out.stdout
