# SPDX-License-Identifier: MIT
"""Tools people already have, against the guest: Debian's socat on the
hybrid-vsock socket (docs/own-stack.md's recipe) and Debian's sockperf through the
back end's TCP forwarding to the guest's sockperf server (app/sockperf.c);
and `ringside bench --tools`, which puts sockperf and iperf3 next to
ringside-bench in one boot.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from ringside import guest_stats
from ringside_qemu import Guest
from test_forward import data_of, free_ports

ECHO, SOCKPERF = 1234, 11111
IO_TIMEOUT = 120


@pytest.fixture(scope='module')
def tguest():
    port = free_ports(1)[0]
    g = Guest('--boot', 'elf', '--vsock', '--forward', '%d=%d' % (port, SOCKPERF),
              name='tools')
    g.sockperf_port = port
    g.start()
    try:
        yield g
    finally:
        g.stop()


def socat_hybrid(uds, port, data):
    """docs/own-stack.md's recipe: socat on the Unix socket, CONNECT line first.
    Returns socat's stdout (the "OK" line, then the echo)."""
    p = subprocess.run(['socat', '-t', '30', '-', 'UNIX-CONNECT:%s' % uds],
                       input=b'CONNECT %d\n' % port + data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=IO_TIMEOUT)
    assert p.returncode == 0, p.stderr.decode(errors='replace')
    return p.stdout


@pytest.mark.skipif(not shutil.which('socat'), reason='socat not installed (make deps)')
def test_socat_hybrid_echo(tguest):
    """socat - UNIX-CONNECT:PATH with the CONNECT line: the echo comes back
    byte-exact after "OK <port>", and socat's EOF on stdin ends it cleanly
    (its half-close reaches the guest, which closes its side)."""
    data = data_of(1 << 20, 7)
    deadline = time.monotonic() + 60
    while True:  # the device is up once the back end answers OK
        out = socat_hybrid(tguest.vsock_uds, ECHO, b'x')
        if out.startswith(b'OK ') or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    out = socat_hybrid(tguest.vsock_uds, ECHO, data)
    m = re.match(rb'OK \d+\n', out)
    assert m, out[:80]
    assert out[m.end():] == data


@pytest.mark.skipif(not shutil.which('sockperf'), reason='sockperf not installed (make deps)')
def test_sockperf_ping_pong(tguest):
    """sockperf ping-pong over TCP to the guest's sockperf server: every
    message answered, none dropped, percentiles printed, and the guest's
    own count of pongs agrees that it answered them."""
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(('127.0.0.1', tguest.sockperf_port), 5).close()
            break
        except OSError:
            assert time.monotonic() < deadline
            time.sleep(0.5)
    before = guest_stats(tguest, IO_TIMEOUT, 'sockperf')['sockperf']['pongs']
    p = subprocess.run(['sockperf', 'ping-pong', '--tcp', '-i', '127.0.0.1',
                        '-p', str(tguest.sockperf_port), '-t', '2', '-m', '64'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=IO_TIMEOUT, env=dict(os.environ, TERM='dumb'))
    out = p.stdout.decode(errors='replace')
    assert p.returncode == 0, out
    m = re.search(r'SentMessages=(\d+); ReceivedMessages=(\d+)', out)
    assert m, out
    sent, received = int(m.group(1)), int(m.group(2))
    # the timer may stop the run with one message in flight
    assert sent > 100 and sent - 1 <= received <= sent, out
    assert re.search(r'# dropped messages = 0;', out), out
    assert re.search(r'percentile 99\.000 = +[\d.]+', out), out
    after = guest_stats(tguest, IO_TIMEOUT, 'sockperf')['sockperf']['pongs']
    assert after - before >= received


FRONT_DOOR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'ringside')


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which('iperf3') and shutil.which('sockperf')),
                    reason='iperf3 or sockperf not installed (make deps)')
def test_bench_vsock_tools(tmp_path):
    """ringside bench --tools, a short run: sockperf and both
    ringside-bench ping-pong rows, and iperf3 (-R and --bidir) next to
    ringside-bench stream forwarded and hybrid, every figure measured (not
    zero), the overhead lines printed, and the program exits cleanly."""
    out_json = tmp_path / 'tools.json'
    p = subprocess.Popen([sys.executable, FRONT_DOOR, 'bench', '--boot', 'elf', '--tools',
                          '--sizes', '64', '--count', '20', '--warmup', '5', '-l', '64k', '-P', '2',
                          '--dirs', 'g2h', '--time', '1', '--json', str(out_json)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=900)
    finally:
        if p.poll() is None:  # its QEMU and back end are in its session
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 0, out[-2000:]
    res = json.loads(out_json.read_text())['result']
    pp = {r['tool']: r for r in res['tools']}
    assert set(pp) == {'sockperf tcp fwd', 'ringside-bench tcp fwd', 'ringside-bench hybrid'}
    assert all(r['p50'] > 0 and r['count'] > 0 for r in pp.values()), pp
    cells = {(r['tool'], r['mode']): r for r in res['tools_stream']}
    for tool in ('iperf3 tcp fwd', 'ringside-bench tcp fwd', 'ringside-bench hybrid'):
        assert cells[(tool, 'g2h')]['g2h'] > 0 and cells[(tool, 'g2h')]['h2g'] == 0
        assert cells[(tool, 'bidir')]['g2h'] > 0 and cells[(tool, 'bidir')]['h2g'] > 0
        assert cells[(tool, 'bidir')]['parallel'] == 2
    assert 'forwarder overhead, stream' in out and 'forwarder overhead (' in out, out[-2000:]
