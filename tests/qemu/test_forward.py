# SPDX-License-Identifier: MIT
"""The back end's TCP forwarding (--forward-tcp, the launcher's --forward):
loopback TCP clients reach the guest's echo, sink and source services.

Every payload is compared byte for byte; half-close and reset are checked
from the TCP client's side and in the back end's counters (its control
socket).
"""

import hashlib
import os
import re
import selectors
import socket
import struct
import subprocess
import time

import pytest

from ringside_qemu import Guest, LOG_DIR
from vsockhost import pattern as source_pattern
from ringside.wait import until

ECHO, SINK, SOURCE = 1234, 1235, 1236
NOBODY = 4000  # no guest service listens here
IO_TIMEOUT = 120


def free_ports(n):
    """n loopback TCP ports free right now (the back end binds them next)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(('127.0.0.1', 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def data_of(size, seed):
    base = hashlib.sha256(b'%d-%d' % (size, seed)).digest() * 64
    return (base * (size // len(base) + 1))[:size]


class Forwarded:
    """A ringside guest whose back end forwards one TCP port per service."""

    def __init__(self, name):
        self.ports = dict(zip((ECHO, SINK, SOURCE, NOBODY), free_ports(4)))
        args = ['--boot', 'elf', '--vsock']
        for guest_port, host_port in self.ports.items():
            args += ['--forward', '%d=%d' % (host_port, guest_port)]
        self.guest = Guest(*args, name=name)
        self.log = os.path.join(LOG_DIR, self.guest.name + '.stderr.log')

    def connect(self, guest_port):
        s = socket.create_connection(('127.0.0.1', self.ports[guest_port]), IO_TIMEOUT)
        s.settimeout(IO_TIMEOUT)
        return s

    def backend(self):
        return self.guest.launch.backend_process()

    def counters(self):
        """The back end's counters (its control socket)."""
        return self.guest.launch.backend_control().counters()

    def rss_kib(self):
        return self.backend().sample()['rss_kib']

    def wait_all_closed(self, timeout=IO_TIMEOUT):
        """Every TCP connection the back end took has been freed."""
        def closed():
            c = self.counters()
            return c if c['conns_closed'] >= c['conns_host'] + c['conns_guest'] else None
        return until(closed, timeout, 'every connection freed', interval=0.2)


@pytest.fixture(scope='module')
def fwd():
    f = Forwarded('forward')
    f.guest.start()
    try:
        deadline = time.monotonic() + 60
        while True:  # the device is up once an echo comes back
            try:
                with f.connect(ECHO) as s:
                    s.sendall(b'x')
                    if s.recv(1) == b'x':
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError('forwarded echo never answered')
            time.sleep(0.2)
        yield f
    finally:
        f.guest.stop()


def echo_exchange(socks_data, timeout=IO_TIMEOUT):
    """Send each socket its data while reading the echoes, all at once;
    returns what came back per socket."""
    sel = selectors.DefaultSelector()
    state = {}
    for s, data in socks_data:
        s.setblocking(False)
        state[s] = [data, 0, bytearray()]
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
    deadline = time.monotonic() + timeout
    try:
        while any(len(st[2]) < len(st[0]) for st in state.values()):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError('echo: %r' % [(len(st[2]), len(st[0]))
                                                 for st in state.values()])
            for key, ev in sel.select(min(left, 1.0)):
                s = key.fileobj
                data, sent, got = st = state[s]
                if ev & selectors.EVENT_WRITE and sent < len(data):
                    st[1] += s.send(data[sent:sent + 262144])
                    if st[1] == len(data):
                        sel.modify(s, selectors.EVENT_READ)
                if ev & selectors.EVENT_READ:
                    chunk = s.recv(1 << 20)
                    if not chunk:
                        raise ConnectionError('echo: EOF after %d bytes' % len(got))
                    got += chunk
    finally:
        sel.close()
    for s in state:
        s.setblocking(True)
    return [bytes(state[s][2]) for s, _ in socks_data]


def test_bulk_echo_both_ways(fwd):
    """8 MiB through the forwarder and back at once, byte-exact."""
    data = data_of(8 << 20, 1)
    with fwd.connect(ECHO) as s:
        assert echo_exchange([(s, data)])[0] == data


def pump(jobs, timeout=IO_TIMEOUT):
    """Each job is (socket, bytes to send, bytes to read): all sockets send
    and read at once; a socket whose sending is done is half-closed. Returns
    what each one read."""
    sel = selectors.DefaultSelector()
    state = []
    for s, out, want in jobs:
        s.setblocking(False)
        st = {'sock': s, 'out': out, 'sent': 0, 'want': want, 'got': bytearray()}
        state.append(st)
        sel.register(s, selectors.EVENT_READ | (selectors.EVENT_WRITE if out else 0), st)
    deadline = time.monotonic() + timeout
    try:
        while any(st['sent'] < len(st['out']) or len(st['got']) < st['want']
                  for st in state):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError('pump: %r' % [(st['sent'], len(st['got'])) for st in state])
            for key, ev in sel.select(min(left, 1.0)):
                st = key.data
                s = st['sock']
                if ev & selectors.EVENT_WRITE and st['sent'] < len(st['out']):
                    st['sent'] += s.send(st['out'][st['sent']:st['sent'] + 262144])
                    if st['sent'] == len(st['out']):
                        s.shutdown(socket.SHUT_WR)
                        sel.modify(s, selectors.EVENT_READ, st)
                if ev & selectors.EVENT_READ and len(st['got']) < st['want']:
                    chunk = s.recv(min(1 << 20, st['want'] - len(st['got'])))
                    if not chunk:
                        raise ConnectionError('pump: EOF after %d bytes' % len(st['got']))
                    st['got'] += chunk
                if st['sent'] == len(st['out']) and len(st['got']) == st['want']:
                    sel.unregister(s)  # done: its EOF must not spin the loop
    finally:
        sel.close()
    for st in state:
        st['sock'].setblocking(True)
    return [bytes(st['got']) for st in state]


def test_both_directions_at_once(fwd):
    """Host-to-guest and guest-to-host flows at the same time through the
    forwarder, as iperf3 --bidir runs them: two sinks fed 8 MiB each, two
    sources read for 8 MiB each, and an echo of 4 MiB, all concurrent.
    Every byte read is compared by SHA-256, and the back end handed the
    guest exactly the bytes written (rx_bytes)."""
    n = 8 << 20
    before = fwd.counters()['rx_bytes']
    echo_data = data_of(4 << 20, 7)
    socks = [fwd.connect(SINK), fwd.connect(SINK), fwd.connect(SOURCE), fwd.connect(SOURCE),
             fwd.connect(ECHO)]
    try:
        got = pump([(socks[0], data_of(n, 5), 0), (socks[1], data_of(n, 6), 0),
                    (socks[2], b'', n), (socks[3], b'', n),
                    (socks[4], echo_data, len(echo_data))])
        for s in socks[:2]:
            assert s.recv(1) == b''  # each sink closes after our FIN
    finally:
        for s in socks:
            s.close()
    want = hashlib.sha256(source_pattern(n)).hexdigest()
    assert [hashlib.sha256(g).hexdigest() for g in got[2:4]] == [want, want]
    assert hashlib.sha256(got[4]).hexdigest() == hashlib.sha256(echo_data).hexdigest()
    c = fwd.wait_all_closed()
    assert c['rx_bytes'] - before == 2 * n + len(echo_data)


def test_bulk_from_guest(fwd):
    """The source service's pattern, 16 MiB of it, exact."""
    n = 16 << 20
    with fwd.connect(SOURCE) as s:
        got = bytearray()
        while len(got) < n:
            chunk = s.recv(min(1 << 20, n - len(got)))
            assert chunk, 'EOF after %d bytes' % len(got)
            got += chunk
    assert bytes(got) == source_pattern(n)


def test_bulk_to_guest_counted(fwd):
    """8 MiB into the sink: the back end's count of bytes the guest was
    handed grows by exactly that much, then the close frees everything."""
    before = fwd.counters()['rx_bytes']
    with fwd.connect(SINK) as s:
        s.sendall(data_of(8 << 20, 2))
        s.shutdown(socket.SHUT_WR)
        assert s.recv(1) == b''  # the sink closes after our FIN
    c = fwd.wait_all_closed()
    assert c['rx_bytes'] - before == 8 << 20


def test_many_connections(fwd):
    """48 connections at once, each its own data, each echoed exactly."""
    socks = [fwd.connect(ECHO) for _ in range(48)]
    try:
        work = [(s, data_of(96 << 10, 100 + i)) for i, s in enumerate(socks)]
        got = echo_exchange(work)
        for (_, data), back in zip(work, got):
            assert back == data
    finally:
        for s in socks:
            s.close()
    c = fwd.wait_all_closed()
    assert c['conns_tcp'] >= 48


def test_client_half_close(fwd):
    """TCP FIN -> vsock SHUTDOWN: the echo still returns every byte, then
    closes its side, which reaches us as EOF."""
    data = data_of(1 << 20, 3)
    with fwd.connect(ECHO) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        got = bytearray()
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            got += chunk
    assert bytes(got) == data
    fwd.wait_all_closed()


def test_client_reset(fwd):
    """A TCP RST from the client becomes a vsock RST (not a SHUTDOWN)."""
    before = fwd.counters()
    s = fwd.connect(SOURCE)
    assert len(s.recv(4096)) > 0  # open and flowing
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    s.close()
    c = fwd.wait_all_closed()
    assert c['tcp_resets_rx'] > before['tcp_resets_rx']
    assert c['rst_tx'] > before['rst_tx']


def test_guest_refuses(fwd):
    """Nothing listens on the guest port: the guest's RST reaches the TCP
    client as a reset, not as an orderly EOF. (The client sends nothing:
    closing a socket with unread data resets it anyway.)"""
    before = fwd.counters()['tcp_resets_tx']
    # the reset may beat the handshake's end on a busy host: on connect or
    # on the read, a reset either way, never an EOF (recv would return b'')
    with pytest.raises(ConnectionResetError):
        with fwd.connect(NOBODY) as s:
            s.recv(1)
    assert fwd.counters()['tcp_resets_tx'] == before + 1


def test_guest_closes_early(fwd):
    """The client stops reading the source and closes: the guest's bytes
    in flight are thrown away, the back end resets the guest side and
    frees the connection, and the next connection works."""
    s = fwd.connect(SOURCE)
    assert s.recv(1000)
    s.close()
    fwd.wait_all_closed()
    with fwd.connect(ECHO) as s:
        assert echo_exchange([(s, b'after')])[0] == b'after'


def test_guest_closes_mid_connection(fwd):
    """The guest's echo service goes away (echo_port=0 closes its
    connections): the TCP client sees an orderly EOF, every byte echoed
    before it intact, and the service comes back for the next client."""
    s = fwd.connect(ECHO)
    try:
        assert echo_exchange([(s, b'before close')])[0] == b'before close'
        fwd.guest.command('set echo_port=0')
        assert s.recv(1) == b''
    finally:
        s.close()
        fwd.guest.command('set echo_port=%d' % ECHO)
    fwd.wait_all_closed()
    deadline = time.monotonic() + 60
    while True:  # the listener is back once an echo answers
        try:
            with fwd.connect(ECHO) as s:
                assert echo_exchange([(s, b'again')])[0] == b'again'
                break
        except (ConnectionError, OSError):
            assert time.monotonic() < deadline
            time.sleep(0.2)


def test_slow_reader_bounded(fwd):
    """A client that does not read: the guest's source runs out of credit,
    so the back end buffers at most its buf_alloc for it. Its memory stays
    flat while the guest waits, then every byte arrives in order."""
    rss0 = fwd.rss_kib()
    tx0 = fwd.counters()['tx_bytes']
    s = fwd.connect(SOURCE)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    try:
        # wait for the flow to stop: tx_bytes (guest -> host) stays put
        last, still_since = -1, None
        deadline = time.monotonic() + IO_TIMEOUT
        while True:
            tx = fwd.counters()['tx_bytes']
            now = time.monotonic()
            if tx != last:
                last, still_since = tx, now
            elif now - still_since > 3:
                break
            assert now < deadline, 'the source never stalled'
            time.sleep(0.5)
        grown = fwd.rss_kib() - rss0
        assert 0 < last - tx0 < 32 << 20, 'in flight: %d bytes' % (last - tx0)
        assert grown < 2048, 'back end grew %d KiB for one stalled reader' % grown
        n = 4 << 20
        got = bytearray()
        while len(got) < n:
            chunk = s.recv(min(1 << 20, n - len(got)))
            assert chunk
            got += chunk
        assert bytes(got) == source_pattern(n)
    finally:
        s.close()
    fwd.wait_all_closed()


BACKEND = os.path.join(os.path.dirname(LOG_DIR), 'host', 'ringside-vhost-vsock')


@pytest.mark.parametrize('spec', ['1234', '=1234', '5201=', '5201=x', 'x=1234',
                                  '127.0.0.1:=1', '1.2.3.4:0=1', '5201=99999999999'])
def test_bad_forward_spec(tmp_path, spec):
    """A spec the back end cannot parse or bind exits at start, saying why."""
    p = subprocess.run([BACKEND, '--socket', str(tmp_path / 'vu'), '--uds', str(tmp_path / 'u'),
                        '--forward-tcp', spec], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    assert p.returncode == 2
    assert b'--forward-tcp' in p.stderr


@pytest.mark.parametrize('spec,why', [
    ('1234', "expected [ADDR:]HOSTPORT=GUESTPORT, got '1234'"),
    ('1234=', "expected [ADDR:]HOSTPORT=GUESTPORT, got '1234='"),
    ('1=2=3', "expected [ADDR:]HOSTPORT=GUESTPORT, got '1=2=3'"),
    ('-1=1234', "expected [ADDR:]HOSTPORT=GUESTPORT, got '-1=1234'"),
    ('99999=1234', "HOSTPORT '99999' in '99999=1234' is not 0..65535"),
    ('127.0.0.1:65536=1234', "HOSTPORT '65536' in '127.0.0.1:65536=1234' is not 0..65535"),
    ('5201=0', "GUESTPORT '0' in '5201=0' is not 1..65535"),
    ('5201=65536', "GUESTPORT '65536' in '5201=65536' is not 1..65535"),
])
def test_forward_spec_one_line_at_parse_time(tmp_path, spec, why):
    """A spec is checked before anything is bound: one line saying what is
    wrong with it, and no socket file made."""
    p = subprocess.run([BACKEND, '--socket', str(tmp_path / 'vu'), '--uds', str(tmp_path / 'u'),
                        '--forward-tcp', spec], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert p.stderr == 'ringside-vhost-vsock: --forward-tcp: %s\n' % why
    assert os.listdir(tmp_path) == []


def test_forward_port_zero(tmp_path):
    """PORT 0: the back end binds a free port and says which, and it accepts
    there (with no guest yet, the client sees EOF at once)."""
    p = subprocess.Popen([BACKEND, '--socket', str(tmp_path / 'vu'), '--uds',
                          str(tmp_path / 'u'), '--forward-tcp', '0=1234'],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        line = p.stderr.readline().decode()
        m = re.search(r'forwarding tcp 127\.0\.0\.1:(\d+) to guest port 1234', line)
        assert m, line
        port = int(m.group(1))
        assert port != 0
        with socket.create_connection(('127.0.0.1', port), 10) as s:
            s.settimeout(10)
            assert s.recv(1) == b''
    finally:
        p.terminate()
        p.wait(10)
