# SPDX-License-Identifier: MIT
"""bench-vsock --vsock-perf without a KVM host: vsock_perf's output read
back, and the option refused where there is no kernel vhost-vsock (AF_VSOCK
is never opened here)."""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, 'host'))
from ringside import bench_vsock_perf as bvp  # noqa: E402

SENDER_OUT = '''Run as sender
Connect to 3:1235
Send 4194304 bytes
TX buffer 65536 bytes
total bytes sent: 4194304
tx performance: 0.250000 Gbits/s
total time in tx loop: 0.136000 sec
time in 'send()': 0.134000 sec
'''
RECEIVER_OUT = '''Run as receiver
Listen port 41000
total bytes received: 1048576
rx performance: 0.125000 Gbits/s
total time in 'read()': 0.010000 sec
average time in 'read()': 600.000000 ns
POLLIN wakeups: 17
'''


def test_outputs_parse():
    assert bvp.parse(SENDER_OUT, bvp.SENDER_RE, 'sender') == {
        'bytes': 4194304, 'gbps': 0.25, 'loop_s': 0.136}
    assert bvp.parse(RECEIVER_OUT, bvp.RECEIVER_RE, 'receiver') == {
        'bytes': 1048576, 'gbps': 0.125, 'wakeups': 17}
    with pytest.raises(SystemExit):
        bvp.parse('Run as sender\n', bvp.SENDER_RE, 'sender')


@pytest.mark.skipif(os.path.exists('/dev/vhost-vsock'), reason='a KVM host: it would run')
def test_refused_without_the_kernels_vhost_vsock():
    out = subprocess.run([sys.executable, os.path.join(REPO, 'ringside'), 'bench',
                          '--vsock-perf', '--no-pingpong', '--no-stream'],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stdout == '', out.stderr
    assert 'error: --vsock-perf: ' in out.stderr, out.stderr
