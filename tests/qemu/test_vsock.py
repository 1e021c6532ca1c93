# SPDX-License-Identifier: MIT
"""ringside's vsock end to end: the guest's services through QEMU's
vhost-user-vsock-pci and our back end (build/host/ringside-vhost-vsock),
reached with the hybrid-vsock convention over Unix sockets.

One guest per ring layout (the device's packed=on|off); every payload is
compared byte for byte, and the guest's counters are checked after.
"""

import hashlib
import os
import re
import selectors
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from ringside import guest_stats
from ringside_qemu import Guest, REPO
from vsockhost import HostPeer, hybrid_connect, hybrid_connect_seq

BENCH = os.path.join(REPO, 'build', 'host', 'ringside-bench')
ECHO, SINK, SOURCE = 1234, 1235, 1236
IO_TIMEOUT = 120


def connect_when_up(uds, port, timeout=60):
    """hybrid_connect, retried while the device restarts: switches that
    change negotiated features reset the device, and the back end refuses
    connections until QEMU has handed it the new rings."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return hybrid_connect(uds, port)
        except (ConnectionError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def pattern(size, seed):
    base = hashlib.sha256(b'%d-%d' % (size, seed)).digest() * 8
    reps = size // len(base) + 1
    return (base * reps)[:size]


def echo_exchange(sock, data, timeout=IO_TIMEOUT):
    """Send `data` while reading the echo; both directions at once, so a
    transfer larger than all buffers on the way cannot deadlock."""
    sock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
    sent, got = 0, bytearray()
    deadline = time.monotonic() + timeout
    try:
        while len(got) < len(data):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError('echo: %d of %d bytes back' % (len(got), len(data)))
            if sent == len(data):
                sel.modify(sock, selectors.EVENT_READ)
            for _, ev in sel.select(min(left, 1.0)):
                if ev & selectors.EVENT_WRITE and sent < len(data):
                    sent += sock.send(data[sent:sent + 262144])
                if ev & selectors.EVENT_READ:
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        raise ConnectionError('echo: closed after %d bytes' % len(got))
                    got += chunk
    finally:
        sel.close()
        sock.setblocking(True)
    return bytes(got)


def stats(guest, section):
    """`stats json SECTION`: that section's counters as a dict."""
    return guest_stats(guest, IO_TIMEOUT, section)[section]


def counters(guest, section):
    """stats() flattened to {name: int}: nested groups (drops, queues)
    merged, a name in several (a counter of every queue) summed."""
    flat = {}

    def walk(d):
        for k, v in d.items():
            if isinstance(v, dict):
                walk(v)
            elif isinstance(v, int) and not isinstance(v, bool):
                flat[k] = flat.get(k, 0) + v
    walk(stats(guest, section))
    return flat


@pytest.fixture(scope='module', params=['off', 'on'], ids=['split', 'packed'])
def vguest(request):
    tmp = tempfile.mkdtemp(prefix='ringside-seq-')
    g = Guest('--boot', 'elf', '--vsock', '--qemu-arg=-global',
              '--qemu-arg=vhost-user-vsock-pci.packed=%s' % request.param,
              '--vsock-arg=--uds-seqpacket', '--vsock-arg=%s/seq' % tmp,
              name='vsock-%s' % request.param)
    try:
        g.start()
        g.ring = 'packed' if request.param == 'on' else 'split'
        g.uds_seq = tmp + '/seq'
        # the back end takes connections once QEMU handed it the rings
        connect_when_up(g.vsock_uds, ECHO).close()
        yield g
        status = g.poweroff() if g.alive else g.status
    finally:
        g.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    assert status == 0, 'QEMU exit status %r after poweroff' % status


def test_device_and_services_up(vguest):
    out = vguest.command('virtio')
    assert 'virtio-vsock' in out and 'running' in out
    assert re.search(r'queue 0: %s' % vguest.ring, out), out
    out = vguest.command('vsock')
    assert 'local cid 3' in out
    for port in (ECHO, SINK, SOURCE):
        assert re.search(r'stream listen\s+%d' % port, out), out
    assert re.search(r'seqpkt listen\s+%d' % ECHO, out), out


@pytest.mark.parametrize('size', [1, 44, 64, 4095, 4096, 4097, 65536, 65580, 1 << 20])
def test_echo_sizes(vguest, size):
    with hybrid_connect(vguest.vsock_uds, ECHO) as s:
        data = pattern(size, 1)
        assert echo_exchange(s, data) == data
        # a second message on the same connection
        assert echo_exchange(s, data[::-1]) == data[::-1]


def test_64_concurrent_connections_and_reconnects(vguest):
    socks = [hybrid_connect(vguest.vsock_uds, ECHO) for _ in range(64)]
    try:
        assert stats(vguest, 'services')['echo']['conns'] == 64
        for i, s in enumerate(socks):
            data = pattern(1000 + i, i)
            assert echo_exchange(s, data) == data
    finally:
        for s in socks:
            s.close()
    # endless reconnects: many short connections in a row
    for i in range(100):
        with hybrid_connect(vguest.vsock_uds, ECHO) as s:
            assert echo_exchange(s, b'x%d' % i) == b'x%d' % i
    # every connection is gone again once the guest saw the closes
    deadline = time.monotonic() + 60
    while True:
        echo = stats(vguest, 'services')['echo']
        if echo['conns'] == 0:
            break
        assert time.monotonic() < deadline, echo
        time.sleep(0.2)


def test_64mib_through_echo(vguest):
    data = os.urandom(1 << 20) * 64
    with hybrid_connect(vguest.vsock_uds, ECHO) as s:
        got = echo_exchange(s, data, timeout=600)
    assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest()


def test_64mib_from_source_checked(vguest):
    total, expect = 64 << 20, bytes(i % 251 for i in range(251)) * 300
    with hybrid_connect(vguest.vsock_uds, SOURCE) as s:
        got, off = 0, 0
        while got < total:
            chunk = s.recv(1 << 20)
            assert chunk, 'source closed after %d bytes' % got
            n = len(chunk)
            i = 0
            while i < n:  # compare against the pattern in 251-aligned pieces
                start = (off + i) % 251
                piece = min(n - i, len(expect) - start)
                assert chunk[i:i + piece] == expect[start:start + piece], \
                    'pattern mismatch near offset %d' % (off + i)
                i += piece
            off += n
            got += n


def test_64mib_into_sink_counted(vguest):
    sink_in = stats(vguest, 'services')['sink']['bytes_in']
    data = os.urandom(1 << 20)
    with hybrid_connect(vguest.vsock_uds, SINK) as s:
        for _ in range(64):
            s.sendall(data)
    deadline = time.monotonic() + IO_TIMEOUT
    while True:
        sink = stats(vguest, 'services')['sink']
        if sink['bytes_in'] - sink_in == 64 << 20:
            break
        assert time.monotonic() < deadline, sink
        time.sleep(0.2)


def test_bench_client_against_guest(vguest):
    """The shipped client: a ping-pong table and a checked g2h stream."""
    out = subprocess.run([BENCH, 'pingpong', '--uds', vguest.vsock_uds, '--size', '64,4k',
                          '--count', '50', '--warmup', '5'], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert re.search(r'^\s+64\s+50\s', out.stdout, re.M), out.stdout
    out = subprocess.run([BENCH, 'stream', '--uds', vguest.vsock_uds, '--dir', 'g2h', '-P', '2',
                          '--time', '2'], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert re.search(r'total:\s+[1-9]\d* bytes', out.stdout), out.stdout


def test_bench_pingpong_to_the_sink_times_out(vguest):
    """The guest's sink takes bytes and never answers: pingpong to it ends
    after --timeout with one line naming the port and the wait."""
    r = subprocess.run([BENCH, 'pingpong', '--uds', vguest.vsock_uds, '--port', str(SINK),
                        '--timeout', '2', '--warmup', '1'], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1
    assert r.stderr == ('ringside-bench: pingpong: reading from port 1235 at offset 0: '
                        'timed out after 2 s (--timeout)\n')


def test_seqpacket_boundaries(vguest):
    """The echo service on SEQPACKET returns every message whole and alone,
    also messages larger than one 64 KiB packet or one RX buffer."""
    sizes = [1, 44, 100, 4052, 4096, 65536, 70000, 131072, 3, 4097]
    with hybrid_connect_seq(vguest.uds_seq, ECHO) as s:
        for i, size in enumerate(sizes):
            msg = pattern(size, 100 + i)
            s.send(msg)
            got = s.recv(1 << 20)
            assert len(got) == size and got == msg, (size, len(got))
        # several messages in flight at once keep their boundaries
        msgs = [pattern(n, n) for n in (10, 5000, 1, 70000, 33)]
        for m in msgs:
            s.send(m)
        for m in msgs:
            assert s.recv(1 << 20) == m


class HostListener(HostPeer):
    """A Unix listener at <uds>_<port>: where guest connections to host port P land."""

    def __init__(self, uds, port, mode):
        self.path = '%s_%d' % (uds, port)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(self.path)
        super().__init__(sock, mode)

    def close(self):
        super().close()
        os.unlink(self.path)


def test_guest_initiated_pingpong_and_stream(vguest):
    echo = HostListener(vguest.vsock_uds, 5000, 'echo')
    try:
        out = vguest.command('vsock pingpong 2 5000 4096 200', timeout=300)
        m = re.search(r'pingpong 4096 B x 200: p1 (\d+) ns\s+p50 (\d+) ns\s+mean (\d+) ns\s+'
                      r'p99 (\d+) ns\s+max (\d+) ns', out)
        assert m, out
        p1, p50, mean, p99, mx = map(int, m.groups())
        assert 0 < p1 <= p50 <= p99 <= mx
    finally:
        echo.close()
    sink = HostListener(vguest.vsock_uds, 5001, 'check')
    try:
        sink.check_guest_stream(vguest, 5001)
    finally:
        sink.close()


def test_guest_connect_refused(vguest):
    out = vguest.command('vsock pingpong 2 5999 64 1', timeout=120)
    assert out.startswith('error: vsock: connect to 2:5999 failed'), out


def test_host_connect_to_closed_port(vguest):
    # A refusal only: the back end takes the Unix connection and closes it
    # without OK after the guest's RST (a dead back end fails the connect
    # itself, with another message). Then the back end still serves.
    with pytest.raises(ConnectionRefusedError, match='no OK for CONNECT 4444'):
        hybrid_connect(vguest.vsock_uds, 4444, timeout=60)
    s = hybrid_connect(vguest.vsock_uds, 1234, timeout=60)
    try:
        assert echo_exchange(s, b'hello', timeout=30) == b'hello'
    finally:
        s.close()


@pytest.mark.parametrize('key,values', [
        ('fastpath', ['0', '1']),
        ('txpoll', ['0', '1']),
        ('credit', ['eager', 'lazy']),
        ('smallcopy', ['0', '1']),
        ('rxbuf', ['4096', '1024', '65580']),
        ('event_idx', ['0', '1']),
        ('indirect', ['0', '1']),
        ('ring', ['split', 'packed']),
        ('irq', ['msix', 'poll']),
])
def test_every_switch_both_ways(vguest, key, values):
    for v in values:
        assert vguest.command('set %s=%s' % (key, v)) == '%s=%s' % (key, v)
        connect_when_up(vguest.vsock_uds, ECHO).close()
        for size in (1, 4097, 200000):
            with hybrid_connect(vguest.vsock_uds, ECHO) as s:
                data = pattern(size, size)
                assert echo_exchange(s, data) == data
        with hybrid_connect(vguest.vsock_uds, ECHO) as s:
            data = os.urandom(4 << 20)
            assert echo_exchange(s, data) == data
        if key == 'irq':
            irqs = stats(vguest, 'virtio-vsock')['queues']['rxq']['interrupts']
            assert irqs > 0 if v == 'msix' else irqs == 0, (v, irqs)


def test_no_drops_and_buffers_returned(vguest):
    c = stats(vguest, 'virtio-vsock')
    # every header verdict's drop and rx_refill_fail, no bad completion
    assert not any(c['drop'].values()), c['drop']
    assert not any(q['bad'] for q in c['queues'].values()), c['queues']
    v = stats(vguest, 'vsock')
    drop = v['drop']
    assert drop['rx_over_credit'] == 0 and drop['rx_bad_type'] == 0, v
    assert drop['rx_bad_dst_cid'] == 0 and drop['rx_bad_src_cid'] == 0, v
    assert v['rx_pkts'] > 0 and v['tx_pkts'] > 0
    # with every connection closed, only the posted RX buffers are alive
    deadline = time.monotonic() + 60
    while True:
        out = vguest.command('vsock')
        m = re.search(r'(\d+) socket\(s\), (\d+) packet buffers', out)
        posted = stats(vguest, 'virtio-vsock')['rx_posted']
        listeners = len(re.findall(r'^\s*\w+ +listen ', out, re.M))  # services, sockperf
        if listeners >= 4 and int(m.group(1)) == listeners and int(m.group(2)) == posted:
            break
        assert time.monotonic() < deadline, out
        time.sleep(0.2)


@pytest.mark.parametrize('irq', ['msix', 'poll'])
def test_idle_halt(guest_factory, irq):
    """idle=halt: the loop sleeps until an interrupt (the queue's MSI-X, or
    the LAPIC timer for the polled queues) and still serves everything
    byte for byte."""
    g = guest_factory('--boot', 'elf', '--vsock', '--cmdline', 'irq=%s idle=halt' % irq)
    connect_when_up(g.vsock_uds, ECHO).close()
    for size in (1, 4097, 1 << 20):
        with hybrid_connect(g.vsock_uds, ECHO) as s:
            data = pattern(size, 7)
            assert echo_exchange(s, data) == data
    # with nothing to do the guest halts; give it idle time to do so. With
    # MSI-X and the console's interrupt nothing needs the timer.
    deadline = time.monotonic() + 60
    while True:
        idle = stats(g, 'idle')
        assert idle['idle'] == 'halt', idle
        if idle['halts'] > 0 and (irq == 'msix' or idle['timer_ticks'] > 0):
            break
        assert time.monotonic() < deadline, idle
        time.sleep(0.05)
    rxq = stats(g, 'virtio-vsock')['queues']['rxq']
    assert (rxq['interrupts'] > 0) == (irq == 'msix')
    # back to spinning: the tick stops
    assert g.command('set idle=poll') == 'idle=poll'
    before = stats(g, 'idle')['timer_ticks']
    with hybrid_connect(g.vsock_uds, ECHO) as s:
        assert echo_exchange(s, b'after') == b'after'
    after = stats(g, 'idle')['timer_ticks']
    assert after - before <= 1
    assert g.poweroff() == 0


def test_tick_deadline(guest_factory):
    """tick=deadline: no periodic tick; the guest wakes on MSI-X, its
    console's interrupt and due timers, and still serves everything byte
    for byte. Idle, with the console's interrupt routed, the timer has
    next to nothing to do."""
    g = guest_factory('--boot', 'elf', '--vsock', '--cmdline',
                      'irq=msix idle=halt tick=deadline')
    connect_when_up(g.vsock_uds, ECHO).close()
    for size in (1, 4097, 1 << 20):
        with hybrid_connect(g.vsock_uds, ECHO) as s:
            data = pattern(size, 9)
            assert echo_exchange(s, data) == data
    i0 = stats(g, 'idle')
    t0 = time.monotonic()
    time.sleep(4)
    i1 = stats(g, 'idle')
    elapsed = time.monotonic() - t0
    assert i0['tick'] == i1['tick'] == 'deadline'
    assert i1['halts'] > i0['halts']      # it did sleep
    ticks = i1['timer_ticks'] - i0['timer_ticks']
    # a 1 ms tick would be ~1000/s; a polled console looked 10 times a
    # second; now only idle_guard's wake-up a second, and a close timeout
    # armed earlier may fire once
    assert stats(g, 'console')['rx'] == 'interrupt'
    assert ticks <= 3 + 1.5 * elapsed, (ticks, elapsed)
    with hybrid_connect(g.vsock_uds, ECHO) as s:
        assert echo_exchange(s, b'after') == b'after'
    assert g.poweroff() == 0


# ---- ringside-bench against back ends that do not answer (no QEMU) ----

class FakeHybrid:
    """A Unix socket that plays a hybrid back end badly: 'close' takes a
    connection and closes it (a back end with no guest), 'ok-close' says
    OK and closes (a guest that accepts and leaves), 'ok-silent' says OK
    and neither reads nor answers (the guest's sink; a hung guest)."""

    def __init__(self, path, behaviour):
        self.path, self.behaviour = str(path), behaviour
        self.conns = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(64)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return  # closed by stop()
            if self.behaviour == 'close':
                c.close()
                continue
            line = b''
            while not line.endswith(b'\n'):
                b = c.recv(1)
                if not b:
                    break
                line += b
            c.sendall(b'OK 1073741824\n')
            if self.behaviour == 'ok-close':
                c.close()
            else:
                self.conns.append(c)  # kept open, never read

    def stop(self):
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(10)
        for c in self.conns:
            c.close()


@pytest.fixture
def fake_hybrid(tmp_path):
    fakes = []

    def make(behaviour):
        fakes.append(FakeHybrid(tmp_path / ('fake-%d' % len(fakes)), behaviour))
        return fakes[-1].path

    yield make
    for f in fakes:
        f.stop()


def bench_fails(*args, timeout=60):
    """Run ringside-bench that must fail: its status and its one line."""
    r = subprocess.run([BENCH] + list(args), capture_output=True, text=True, timeout=timeout)
    lines = r.stderr.splitlines()
    # 141 / -13: killed by SIGPIPE, which says nothing at all
    assert r.returncode not in (0, 141, -13), (r.returncode, r.stderr)
    assert len(lines) == 1, r.stderr
    return r.returncode, lines[0]


NO_GUEST = (r'ringside-bench: %s: (sending CONNECT %d to|no "OK" for CONNECT %d on) %s: '
            r'(Broken pipe|Connection reset by peer|connection closed) \(is a guest running '
            r'behind the back end, and does its port %d answer\?\)$')


@pytest.mark.parametrize('mode,port', [('stream', SINK), ('rr', ECHO), ('pingpong', ECHO)])
def test_bench_no_guest_one_line(fake_hybrid, mode, port):
    """A back end that hangs up at once (it has no guest): never SIGPIPE,
    always one line naming what to check. Twenty tries: whether the hang-up
    comes before our CONNECT line or after it is a race."""
    uds = fake_hybrid('close')
    for _ in range(20):
        status, line = bench_fails(mode, '--uds', uds, '--time', '1')
        assert status == 2
        assert re.match(NO_GUEST % (mode, port, port, re.escape(uds), port), line), line


def test_bench_dead_back_end(tmp_path):
    uds = str(tmp_path / 'nothing')
    status, line = bench_fails('stream', '--uds', uds, '--time', '1')
    assert status == 2
    assert line == ('ringside-bench: stream: connecting to %s: No such file or directory '
                    '(is the vsock back end running?)' % uds)


def test_bench_stream_peer_leaves(fake_hybrid):
    """OK, then the guest closes: the first write hits a closed socket."""
    uds = fake_hybrid('ok-close')
    status, line = bench_fails('stream', '--uds', uds, '--time', '5')
    assert status == 1
    assert re.match(r'ringside-bench: stream: writing to port 1235 at offset \d+: '
                    r'(Broken pipe|Connection reset by peer)$', line), line


@pytest.mark.parametrize('args,what', [
    (['pingpong', '--port', str(SINK)], 'reading from port 1235 at offset 0'),
    (['stream', '--dir', 'g2h', '--time', '30'], 'reading from port 1236 at offset 0'),
    (['stream', '-R', '--time', '30'], 'reading from port 1236 at offset 0'),
    (['stream', '--reverse', '--dir', 'g2h', '--time', '30'],
     'reading from port 1236 at offset 0'),
    (['stream', '--time', '30'], r'writing to port 1235 at offset \d+'),
])
def test_bench_silent_port_times_out(fake_hybrid, args, what):
    """A port that takes the connection and never answers (the guest's
    sink): --timeout ends the wait with one line naming port and time."""
    uds = fake_hybrid('ok-silent')
    t0 = time.monotonic()
    status, line = bench_fails(*args, '--uds', uds, '--timeout', '1')
    assert status == 1
    assert re.match(r'ringside-bench: %s: %s: timed out after 1 s \(--timeout\)$'
                    % (args[0], what), line), line
    assert time.monotonic() - t0 < 30


def test_bench_rr_silent_port_times_out(fake_hybrid):
    uds = fake_hybrid('ok-silent')
    status, line = bench_fails('rr', '--uds', uds, '--timeout', '1', '-n', '2')
    assert status == 1
    assert re.match(r'ringside-bench: rr: session [01]: no answer from port 1234 in 1 s '
                    r'\(--timeout\)$', line), line


@pytest.mark.parametrize('args,line', [
    (['--count', '-5'], "--count: expected a positive number, got '-5'"),
    (['--count', '0'], "--count: expected a positive number, got '0'"),
    (['--count', '10x'], "--count: expected a positive number, got '10x'"),
    (['--warmup', '-1'], "--warmup: expected a number from 0 to 1000000000, got '-1'"),
    (['--size', '64,-5'],
     "--size: expected a positive size (k, m, g: 2^10, 2^20, 2^30), got '-5'"),
    (['--size', '2g'], "--size: at most 1073741824, got '2g'"),
    (['--time', '-1'],
     "--time: expected a positive number of seconds (at most 1000000), got '-1'"),
    (['--timeout', 'soon'],
     "--timeout: expected a positive number of seconds (at most 1000000), got 'soon'"),
    (['--port', '0'], "--port: expected a positive number, got '0'"),
])
def test_bench_numbers_name_their_option(tmp_path, args, line):
    status, got = bench_fails('pingpong', '--uds', str(tmp_path / 'x'), *args)
    assert status == 2
    assert got == 'ringside-bench: ' + line


@pytest.mark.parametrize('mode,args,line', [
    ('stream', ['-P', '0'], "-P: expected a positive number, got '0'"),
    ('stream', ['-l', '-64k'],
     "-l: expected a positive size (k, m, g: 2^10, 2^20, 2^30), got '-64k'"),
    ('stream', ['--cpu-pids', '1,-2'], "--cpu-pids: expected a positive number, got '-2'"),
    ('rr', ['-n', '1,0'], "-n: expected a positive number, got '0'"),
    ('rr', ['--udp-timeout', '0'],
     "--udp-timeout: expected a positive number of seconds (at most 1000000), got '0'"),
])
def test_bench_mode_numbers_name_their_option(tmp_path, mode, args, line):
    status, got = bench_fails(mode, '--uds', str(tmp_path / 'x'), *args)
    assert status == 2
    assert got == 'ringside-bench: ' + line


@pytest.mark.parametrize('mode,args,line', [
    ('stream', ['-R', '--dir', 'h2g'], '-R is --dir g2h: not with --dir h2g'),
    ('pingpong', ['-R'], '-R is for stream'),
    ('rr', ['--reverse'], '-R is for stream'),
])
def test_bench_reverse_is_g2h_streams_only(tmp_path, mode, args, line):
    status, got = bench_fails(mode, '--uds', str(tmp_path / 'x'), *args)
    assert status == 2
    assert got == 'ringside-bench: ' + line


def test_bench_sizes_take_suffixes(fake_hybrid):
    """k, m and g are sizes (the guest echo is not there, so it fails later)."""
    uds = fake_hybrid('close')
    status, line = bench_fails('pingpong', '--uds', uds, '--size', '1,4k,1m,1g')
    assert 'CONNECT 1234' in line
