# SPDX-License-Identifier: MIT
"""The kernel's vsock_perf (make vsock-perf) against ringside on the
kernel's vhost-vsock: what it says it sent is what ringside's sink counted,
and what ringside sent connecting out is what it says it received."""

import os
import re
import subprocess

import pytest

from ringside import guest_stats
from ringside.bench_vsock_perf import (HOST_CID, SENDER_RE, VSOCK_PERF, Receiver,
                                       receiver_port)
from ringside.guest_stats import StatsError, json_of
from ringside.wait import poll_for, until
from ringside_qemu import REPO
from test_kernel_vsock import ECHO, SINK, own_cid_guest

BYTES = 4 << 20
BUF = 65536


@pytest.fixture(scope='module')
def pguest():
    assert os.access(VSOCK_PERF, os.X_OK), '%s missing: run make vsock-perf' % VSOCK_PERF
    yield from own_cid_guest('kvm-vsock-perf')


def sink_counters(guest):
    sink = guest_stats(guest, 60, 'services')['services']['sink']
    return [sink[k] for k in ('conns', 'accepted', 'closed', 'bytes_in')]


def test_vsock_perf_sender_bytes_are_the_sinks(pguest):
    _, accepted, closed, before = sink_counters(pguest)
    out = subprocess.run([VSOCK_PERF, '--sender', str(pguest.cid), '--port', str(SINK),
                          '--bytes', str(BYTES), '--buf-size', str(BUF)],
                         capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr + out.stdout
    sent = int(SENDER_RE['bytes'].search(out.stdout).group(1))
    assert sent == BYTES, out.stdout
    assert float(SENDER_RE['gbps'].search(out.stdout).group(1)) > 0, out.stdout
    # the sink has the bytes once it has seen the close that follows them
    poll_for(lambda: sink_counters(pguest)[2] == closed + 1, 60, interval=0.2)
    conns, acc, cl, now = sink_counters(pguest)
    assert (acc, cl, conns) == (accepted + 1, closed + 1, 0)
    assert now - before == sent


def test_vsock_perf_receiver_gets_what_ringside_sent(pguest):
    with Receiver(receiver_port(), BUF) as rx:
        # vsock_perf prints nothing when it listens: connect until it answers
        def streamed():
            try:
                return json_of(pguest, 'vsock stream %d %d %d 1' % (HOST_CID, rx.port, BUF),
                               120)
            except StatsError as e:
                assert 'connect to' in str(e), e
                return rx.exited() and {'bytes': None, 'refused': str(e)}
        sent = until(streamed, 60, 'a listening vsock_perf', interval=0)
        assert sent['bytes'], sent
        got = rx.result()['bytes']
    assert got == sent['bytes'] > 0, (sent, got)


def test_bench_vsock_perf_rows():
    """bench --vsock-perf: one row per direction, vsock_perf beside
    ringside-bench, each a positive Gb/s."""
    out = subprocess.run(['/usr/bin/python3', os.path.join(REPO, 'ringside'), 'bench',
                          '--vsock-perf', '--no-pingpong', '--no-stream', '--length', '64k',
                          '--time', '1', '--vsock-perf-bytes', '4m', '--no-save', '--',
                          '--vsock-transport', 'kernel'],
                         capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    for d in ('h2g', 'g2h'):
        m = re.search(r'^ringside\s+%s\s+65536\s+1\s+([\d.]+)\s+\S+\s+\S+\s+([\d.]+)\s+[\d.]+$'
                      % d, out.stdout, re.M)
        assert m and float(m.group(1)) > 0 and float(m.group(2)) > 0, (d, out.stdout)
    assert 'vsock_perf read' not in out.stdout, out.stdout


def test_socat_vsock_connect_echo(pguest):
    """socat's own AF_VSOCK client (VSOCK-CONNECT) against ringside's echo:
    the bytes come back as sent."""
    data = bytes((i * 13 + 5) & 0xff for i in range(100000))
    out = subprocess.run(['socat', '-t', '30', '-T', '120', '-',
                          'VSOCK-CONNECT:%d:%d' % (pguest.cid, ECHO)], input=data,
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == data, (len(out.stdout), len(data))
