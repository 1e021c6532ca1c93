# SPDX-License-Identifier: MIT
"""ringside under KVM with the kernel's vhost-vsock: echo at every size
byte-exact, streams both ways, a connection the guest opens, and the VM
exits counted (host/ringside/kvm_exits.py) agreeing with the guest's own
kicks and interrupts. test_kernel_peers.py has the Linux guest and the
scripts on the same path."""

import os
import re
import socket
import subprocess
import time

import pytest

from ringside import kvm_exits
from ringside.benchlib import wait_vsock_cid
from ringside.commands.exits import ringside_counters
from ringside.process import vhost_workers
from ringside_qemu import REPO, Guest
from vsockhost import HostPeer, pattern

CID = 3
ECHO, SINK, SOURCE = 1234, 1235, 1236
BENCH = os.path.join(REPO, 'build', 'host', 'ringside-bench')
IO_TIMEOUT = 120
SIZES = [1, 64, 512, 4096, 65536, 262144]
KERNEL_ARGS = ('--vsock', '--vsock-transport', 'kernel', '--accel', 'kvm',
               '--vsock-cid', str(CID))


@pytest.fixture(scope='module')
def kguest():
    g = Guest('--boot', 'elf', *KERNEL_ARGS, name='kvm-ringside')
    try:
        g.start()
        wait_vsock_cid(CID, ECHO)
        yield g
    finally:
        g.stop()


def own_cid_guest(name):
    """A ringside guest on the kernel's vhost-vsock under a CID of its own
    (g.cid), not one another guest here has; for a module fixture."""
    cid = 1000 + os.getpid() % 10000
    g = Guest('--boot', 'elf', '--vsock', '--vsock-transport', 'kernel', '--accel', 'kvm',
              '--vsock-cid', str(cid), name=name)
    try:
        g.start()
        g.cid = cid
        yield g
    finally:
        g.stop()


def vsock_connect(port):
    s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    s.settimeout(IO_TIMEOUT)
    s.connect((CID, port))
    return s


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(n - len(buf), 1 << 20))
        assert chunk, 'connection closed after %d of %d bytes' % (len(buf), n)
        buf += chunk
    return bytes(buf)


def echo_checked(sizes):
    with vsock_connect(ECHO) as s:
        for size in sizes:
            data = pattern(size, size)
            s.sendall(data)
            assert recv_exact(s, size) == data, 'echo of %d bytes differs' % size


def holds_vhost_vsock(pid):
    fd_dir = '/proc/%d/fd' % pid
    return any(os.readlink(os.path.join(fd_dir, fd)) == '/dev/vhost-vsock'
               for fd in os.listdir(fd_dir))


def test_guest_runs_on_kvm_and_the_kernel_back_end(kguest):
    assert kguest.launch.accel == 'kvm'
    assert holds_vhost_vsock(kguest.launch.qemu.pid), 'QEMU does not hold /dev/vhost-vsock'
    assert vhost_workers(kguest.launch.qemu.pid), \
        'no vhost worker thread for QEMU %d' % kguest.launch.qemu.pid


@pytest.mark.parametrize('size', SIZES)
def test_echo_byte_exact(kguest, size):
    echo_checked([size])


def test_four_connections_at_once(kguest):
    socks = [vsock_connect(ECHO) for _ in range(4)]
    try:
        for i, s in enumerate(socks):
            s.sendall(pattern(10000 + i, i))
        for i, s in enumerate(socks):
            assert recv_exact(s, 10000 + i) == pattern(10000 + i, i)
    finally:
        for s in socks:
            s.close()


@pytest.mark.parametrize('direction', ['h2g', 'g2h'])
def test_streams_checked(kguest, direction):
    """ringside-bench checks every byte against the pattern (exit 3 if not)."""
    port = SINK if direction == 'h2g' else SOURCE
    out = subprocess.run([BENCH, 'stream', '--cid', str(CID), '--port', str(port), '--dir',
                          direction, '-P', '4', '--time', '2'], capture_output=True,
                         text=True, timeout=IO_TIMEOUT)
    assert out.returncode == 0, out.stderr
    assert re.search(r'total:\s+[1-9]\d* bytes', out.stdout), out.stdout


def vsock_listener(port, mode):
    """An AF_VSOCK listener on the host (this L1): guest connections to
    CID 2 port P land here."""
    sock = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    sock.bind((socket.VMADDR_CID_ANY, port))
    return HostPeer(sock, mode)


def test_guest_initiated_pingpong_and_stream(kguest):
    echo = vsock_listener(5000, 'echo')
    try:
        out = kguest.command('vsock pingpong 2 5000 4096 200', timeout=300)
        assert re.search(r'pingpong 4096 B x 200: p1 \d+ ns', out), out
    finally:
        echo.close()
    sink = vsock_listener(5001, 'check')
    try:
        sink.check_guest_stream(kguest, 5001)
    finally:
        sink.close()


def test_exits_agree_with_the_guests_counters(kguest):
    """Around 500 round trips: every guest kick is a notify exit, every
    queue interrupt the guest counts was injected."""
    rts = 500
    with kvm_exits.ExitCounter() as counter:
        kicks0, irqs0 = ringside_counters(kguest.console)
        before = counter.snapshot()
        out = subprocess.run([BENCH, 'pingpong', '--cid', str(CID), '--size', '64',
                              '--count', str(rts), '--warmup', '0'], capture_output=True,
                             text=True, timeout=IO_TIMEOUT)
        after = counter.snapshot()
        kicks1, irqs1 = ringside_counters(kguest.console)
    assert out.returncode == 0, out.stderr
    per_rt = kvm_exits.delta(before, after, rts)
    kicks, irqs = (kicks1 - kicks0) / rts, (irqs1 - irqs0) / rts
    assert 0.9 <= kicks <= 2.1, 'guest kicks per round trip %.2f' % kicks
    assert abs(per_rt['notify'] - kicks) <= 0.1, (per_rt, kicks)
    # the queue's vector: one injection for every interrupt the guest took
    injected = [v for k, v in per_rt.items() if k.startswith('inj:')]
    assert any(abs(v - irqs) <= 0.02 for v in injected), (per_rt, irqs)
    assert per_rt['exits'] >= per_rt['notify'] + per_rt['hlt'], per_rt


def test_exit_budget(kguest):
    """What ringside asks of KVM (docs/own-stack.md, VM exits): per 64 B round
    trip the halt and the kick and next to nothing else, no UART read and,
    with x2APIC or KVM's PV EOI offered, no xAPIC page access; idle, the
    guard's wake-up a second."""
    info = kguest.command('info')
    assert 'hypervisor: KVM' in info, info
    rts = 500
    with kvm_exits.ExitCounter() as counter:
        before = counter.snapshot()
        out = subprocess.run([BENCH, 'pingpong', '--cid', str(CID), '--size', '64',
                              '--count', str(rts), '--warmup', '20'], capture_output=True,
                             text=True, timeout=IO_TIMEOUT)
        after = counter.snapshot()
        time.sleep(1)
        idle0 = counter.snapshot()
        time.sleep(5)
        idle1 = counter.snapshot()
    assert out.returncode == 0, out.stderr
    per_rt = kvm_exits.delta(before, after, rts)
    why = kvm_exits.details(per_rt)
    assert per_rt['pio'] <= 0.02, why
    if 'eoi xapic-mmio' not in info:
        assert per_rt['apic'] <= 0.02, why
    assert per_rt['exits'] <= 3.0, why
    idle = kvm_exits.delta(idle0, idle1, 5)
    assert idle['exits'] <= 10, kvm_exits.details(idle)
