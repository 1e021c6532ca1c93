# SPDX-License-Identifier: MIT
"""The guest's iperf3 server (app/iperf3.c) against Debian's unmodified
iperf3 client: forward, -R, -P 2, --bidir (-P 1, 2, 4), -n, -l and short -t
runs, each one's JSON report checked against the guest's own byte counters.
The client reaches the guest through the back end's TCP forwarder (the
launcher's --forward H=5201), as a user would. Also: a second client is
denied while a test runs, and malformed parameters get SERVER_ERROR without
harming the next test.
"""

import json
import shutil
import socket
import struct
import subprocess
import time

import pytest

from ringside import guest_stats
from ringside_qemu import Guest
from test_forward import free_ports

IPERF3 = shutil.which('iperf3')
PORT = 5201
RUN_TIMEOUT = 300
MIB = 1 << 20

# iperf3's one-byte states (iperf_api.h)
PARAM_EXCHANGE, ACCESS_DENIED, SERVER_ERROR = 9, -1, -2

pytestmark = pytest.mark.skipif(IPERF3 is None,
                                reason='iperf3 not installed (make deps adds it)')


class Forward:
    """Where iperf3 connects: a loopback TCP port the back end forwards to 5201."""

    def __init__(self, port):
        self.port = port


@pytest.fixture(scope='module')
def iperf_guest():
    host_port = free_ports(1)[0]
    g = Guest('--boot', 'elf', '--vsock', '--forward', '%d=%d' % (host_port, PORT),
              name='iperf3')
    g.start()
    try:
        yield g, Forward(host_port)
    finally:
        g.stop()


def counters(guest):
    """The iperf3 server's counters (`stats json iperf3`); bytes as 'in'
    and 'out', its port left out."""
    c = dict(guest_stats(guest, 60, 'iperf3')['iperf3'])
    del c['port']
    c['in'], c['out'] = c.pop('bytes_in'), c.pop('bytes_out')
    return c


def delta(before, after):
    return {k: after[k] - before[k] for k in before}


def settled_delta(guest, before, timeout=60):
    """Counters since `before` once every test begun has ended: the client
    exits as soon as it has sent IPERF_DONE, before the guest reads it."""
    deadline = time.monotonic() + timeout
    while True:
        d = delta(before, counters(guest))
        if d['tests'] == d['completed'] + d['aborted'] or time.monotonic() > deadline:
            return d
        time.sleep(0.1)


def iperf3(fwd, *args, check=True):
    """Run the client with -J; its parsed report (and the process)."""
    p = subprocess.run([IPERF3, '-c', '127.0.0.1', '-p', str(fwd.port), '-J',
                        '--connect-timeout', '60000', *args],
                       capture_output=True, text=True, timeout=RUN_TIMEOUT)
    report = json.loads(p.stdout)
    if check:
        assert p.returncode == 0, (p.returncode, report.get('error'), p.stderr)
        assert 'error' not in report, report['error']
    return report, p


def run_checked(guest, fwd, *args):
    before = counters(guest)
    report, _ = iperf3(fwd, *args)
    d = settled_delta(guest, before)
    assert (d['tests'], d['completed'], d['aborted']) == (1, 1, 0), d
    for k in ('step_timeouts', 'drain_timeouts', 'bad_params', 'bad_msgs'):
        assert d[k] == 0, (k, sorted(d.items()))
    return report, d


def test_forward_time(iperf_guest):
    """-t 2: every byte the client sent is counted by the guest (the
    server drains streams to the client's own count before reporting)."""
    guest, fwd = iperf_guest
    report, d = run_checked(guest, fwd, '-t', '2')
    sent = report['end']['sum_sent']['bytes']
    received = report['end']['sum_received']['bytes']
    assert received > 0
    assert received == d['in'] == sent, (sent, received, d)
    assert d['out'] == 0
    assert report['end']['sum_received']['bits_per_second'] > 0


def test_reverse_time(iperf_guest):
    """-R -t 2: the guest sends; its count is what iperf3 reports sent,
    and the client received at most that, most of it."""
    guest, fwd = iperf_guest
    report, d = run_checked(guest, fwd, '-R', '-t', '2')
    sent = report['end']['sum_sent']['bytes']
    received = report['end']['sum_received']['bytes']
    assert sent == d['out'] and d['in'] == 0, (sent, d)
    assert 0 < received <= sent, (received, sent)


def test_parallel_streams(iperf_guest):
    """-P 2: two streams, each carrying data, summing to the guest's count."""
    guest, fwd = iperf_guest
    report, d = run_checked(guest, fwd, '-P', '2', '-t', '2')
    streams = report['end']['streams']
    assert len(streams) == 2
    per_stream = [s['receiver']['bytes'] for s in streams]
    assert all(b > 0 for b in per_stream), per_stream
    assert sum(per_stream) == report['end']['sum_received']['bytes'] == d['in']


@pytest.mark.parametrize('reverse', [False, True], ids=['forward', 'reverse'])
def test_bytes_and_length(iperf_guest, reverse):
    """-n 8M with -l 4K: exactly 8 MiB each way, counted by the guest."""
    guest, fwd = iperf_guest
    args = ['-n', '8M', '-l', '4K'] + (['-R'] if reverse else [])
    report, d = run_checked(guest, fwd, *args)
    assert report['start']['test_start']['blksize'] == 4096
    assert report['end']['sum_sent']['bytes'] == 8 * MIB
    assert report['end']['sum_received']['bytes'] == 8 * MIB
    assert d['out' if reverse else 'in'] == 8 * MIB, d


def test_reverse_parallel_bytes(iperf_guest):
    """-R -P 2 -n 4M: the guest stops at the total over all streams."""
    guest, fwd = iperf_guest
    report, d = run_checked(guest, fwd, '-R', '-P', '2', '-n', '4M')
    assert d['out'] == 4 * MIB
    assert report['end']['sum_received']['bytes'] == 4 * MIB


def test_second_client_denied_while_busy(iperf_guest):
    """A control connection during a test gets ACCESS_DENIED; the running
    test completes."""
    guest, fwd = iperf_guest
    before = counters(guest)
    p = subprocess.Popen([IPERF3, '-c', '127.0.0.1', '-p', str(fwd.port), '-J', '-t', '6'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while counters(guest)['in'] == before['in']:   # its data flows
            assert time.monotonic() < deadline and p.poll() is None
            time.sleep(0.2)
        with socket.create_connection(('127.0.0.1', fwd.port), timeout=60) as s:
            s.sendall(b'x' * 36 + b'\0')
            assert struct.unpack('b', s.recv(1))[0] == ACCESS_DENIED
        out, err = p.communicate(timeout=RUN_TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert json.loads(out)['end']['sum_received']['bytes'] > 0
    d = settled_delta(guest, before)
    assert d['denied'] == 1 and d['completed'] == 1, d


def recv_exact(s, n):
    data = b''
    while len(data) < n:
        chunk = s.recv(n - len(data))
        assert chunk, 'EOF after %r' % data
        data += chunk
    return data


@pytest.mark.parametrize('params', [
    b'{"tcp":true,"parallel":1',                  # truncated
    b'{"udp":true,"parallel":1}',                 # not a stream test
    b'{"tcp":true,"parallel":100000}',            # more streams than allowed
    b'{"tcp":true,"parallel":"1"}',               # wrong type
    b'{"tcp":true,"parallel":1,"reverse":true,"bidirectional":true}',
], ids=['truncated', 'udp', 'parallel', 'type', 'reverse-bidir'])
def test_bad_params_refused(iperf_guest, params):
    """Parameters the server cannot run get SERVER_ERROR and a closed
    control connection; the next real test runs normally."""
    guest, fwd = iperf_guest
    before = counters(guest)
    with socket.create_connection(('127.0.0.1', fwd.port), timeout=60) as s:
        s.sendall(b'c' * 36 + b'\0')
        assert struct.unpack('b', recv_exact(s, 1))[0] == PARAM_EXCHANGE
        s.sendall(struct.pack('>I', len(params)) + params)
        assert struct.unpack('b', recv_exact(s, 1))[0] == SERVER_ERROR
        recv_exact(s, 8)                            # iperf3's i_errno and errno
        assert s.recv(1) == b''
    d = settled_delta(guest, before)
    assert d['bad_params'] == 1 and d['aborted'] == 1, d
    run_checked(guest, fwd, '-n', '1M')


def test_oversized_message_refused(iperf_guest):
    """A length prefix beyond the server's limit is refused before any
    byte of it is read."""
    guest, fwd = iperf_guest
    before = counters(guest)
    with socket.create_connection(('127.0.0.1', fwd.port), timeout=60) as s:
        s.sendall(b'c' * 36 + b'\0')
        assert struct.unpack('b', recv_exact(s, 1))[0] == PARAM_EXCHANGE
        s.sendall(struct.pack('>I', 1 << 30))
        assert struct.unpack('b', recv_exact(s, 1))[0] == SERVER_ERROR
    assert settled_delta(guest, before)['bad_params'] == 1


@pytest.mark.parametrize('parallel', [1, 2, 4])
def test_bidir(iperf_guest, parallel):
    """--bidir -P N through the TCP forwarder: the first N streams flow to
    the guest, the other N from it; each direction's report matches the
    guest's counters, every byte the client sent arrived (no drain
    timeout). With N >= 2 the streams' cookies reach the guest in one
    burst, which once swapped the roles of streams 2 and 4."""
    guest, fwd = iperf_guest
    report, d = run_checked(guest, fwd, '--bidir', '-P', str(parallel), '-t', '2')
    end = report['end']
    assert len(end['streams']) == 2 * parallel
    for s in end['streams']:
        assert s['sender']['bytes'] > 0, s
    assert end['sum_sent']['bytes'] == end['sum_received']['bytes'] == d['in'] > 0, d
    assert end['sum_sent_bidir_reverse']['bytes'] == d['out'] > 0, d
    assert 0 < end['sum_received_bidir_reverse']['bytes'] <= d['out']
