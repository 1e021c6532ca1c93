# SPDX-License-Identifier: MIT
"""The host side of a measurement: the benchmark client (ringside-bench),
where it reaches the guest, waiting for vsock to answer, the CONNECT/OK
handshake of a hybrid socket, and an echo checked byte for byte."""

import contextlib
import json
import os
import re
import select
import socket
import subprocess
import sys
import time

from .images import REPO
from .machine import Launch
from .wait import WaitTimeout, until

BENCH = os.path.join(REPO, 'build', 'host', 'ringside-bench')


class Progress:
    """One line on stderr per cell of a long run: '[3/12] pingpong 4096 B'."""

    def __init__(self, prog, total):
        self.prog, self.total, self.done = prog, total, 0

    def step(self, what):
        self.done += 1
        print('%s: [%d/%d] %s' % (self.prog, self.done, self.total, what), file=sys.stderr,
              flush=True)


@contextlib.contextmanager
def booted(lopts, accel, log, linux=False):
    """The guest launched and ready (ringside's ready line, or with `linux`
    the Linux guest's), QEMU's stderr appended to build/LOG.log."""
    with open(os.path.join(REPO, 'build', log + '.log'), 'a') as err, \
            Launch(lopts, accel, qemu_stderr=err) as launch:
        launch.wait_ready(linux=linux)
        yield launch


def run_bench(args, timeout, prog, prefix=()):
    """ringside-bench ARGS --json, parsed; exits with its error otherwise.
    prefix: an argv it runs under (a network namespace's)."""
    proc = subprocess.run(list(prefix) + [BENCH] + args + ['--json'], capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit('%s: ringside-bench %s failed (%d): %s'
                         % (prog, ' '.join(args), proc.returncode, proc.stderr.strip()))
    return json.loads(proc.stdout)


def hybrid_connect(path, port, timeout, kind=socket.SOCK_STREAM):
    """CONNECT through the back end's hybrid socket; the socket after OK.

    On SOCK_SEQPACKET the CONNECT line and the OK are one message each; on
    a stream the reply is read to its newline. Raises ConnectionRefusedError
    when the back end closes without OK, ConnectionError on another reply,
    or the OSError (a timeout among them) the socket raised.
    """
    s = socket.socket(socket.AF_UNIX, kind)
    try:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(b'CONNECT %d\n' % port)
        if kind == socket.SOCK_SEQPACKET:
            line = s.recv(64)
        else:
            line = b''
            while not line.endswith(b'\n') and len(line) < 64:
                c = s.recv(1)
                if not c:
                    break
                line += c
        if not line.endswith(b'\n'):
            raise ConnectionRefusedError('no OK for CONNECT %d: %r' % (port, line))
        if not re.match(rb'OK \d+\n$', line):
            raise ConnectionError('bad reply to CONNECT %d: %r' % (port, line))
        return s
    except BaseException:
        s.close()
        raise


def _answers(connect):
    """True when connect() gets through; False on any OSError."""
    try:
        connect().close()
        return True
    except OSError:
        return False


def wait_vsock_up(uds, port=1234, timeout=60, prog='bench'):
    """Wait until a CONNECT to the guest's `port` gets OK.

    The guest's driver may be up before the back end has its rings: QEMU
    hands them over after the guest sets DRIVER_OK, and again after every
    device reset (switches that change negotiated features). Until then
    the back end refuses connections.
    """
    try:
        until(lambda: _answers(lambda: hybrid_connect(uds, port, 5)), timeout,
              'answer from vsock port %d' % port)
    except WaitTimeout:
        raise SystemExit('%s: vsock port %d did not answer within %d s' % (prog, port, timeout))


def _vsock_connect(cid, port):
    s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    try:
        s.settimeout(5)
        s.connect((cid, port))
        return s
    except BaseException:
        s.close()
        raise


def wait_vsock_cid(cid, port=1234, timeout=60, prog='bench'):
    """Until the guest's `port` takes an AF_VSOCK connection: the kernel's
    vhost-vsock (only where /dev/vhost-vsock is: a KVM host, host/nested)."""
    try:
        until(lambda: _answers(lambda: _vsock_connect(cid, port)), timeout,
              'answer from vsock %d:%d' % (cid, port), interval=0.2)
    except WaitTimeout:
        raise SystemExit('%s: vsock %d:%d did not answer within %d s'
                         % (prog, cid, port, timeout))


def wait_target(target, prog):
    """Until the guest's echo answers through ringside-bench's `target`
    (['--uds', PATH] or ['--cid', N]; a TCP forward is not waited for)."""
    if target[0] == '--uds':
        wait_vsock_up(target[1], prog=prog)
    elif target[0] == '--cid':
        wait_vsock_cid(int(target[1]), prog=prog)


def vsock_target(launch, prog):
    """ringside-bench's arguments that reach a started guest's vsock device,
    once its echo port answers: AF_VSOCK to its CID on the kernel's
    vhost-vsock, else the back end's hybrid socket."""
    target = launch.vsock_target()
    wait_target(target, prog)
    return target


def pattern(n, off=0):
    """Bytes off..off+n of the guests' own pattern: byte i is i % 251
    (app/services.h, the Linux guest's server)."""
    period = bytes(range(251))
    start = off % 251
    return (period * ((start + n) // 251 + 1))[start:start + n]


def echo_exchange(s, data, timeout):
    """Write data and read as many bytes back, interleaved; '' if they are
    the same, else what went wrong (timeout, EOF, reset, first mismatch)."""
    s.setblocking(False)
    got = bytearray()
    sent = 0
    deadline = time.monotonic() + timeout
    while len(got) < len(data):
        left = deadline - time.monotonic()
        if left <= 0:
            return 'timeout after %d of %d bytes' % (len(got), len(data))
        wr = [s] if sent < len(data) else []
        r, w, _ = select.select([s], wr, [], left)
        try:
            if w:
                sent += s.send(data[sent:sent + 65536])
            if r:
                chunk = s.recv(1 << 20)
                if not chunk:
                    return 'EOF after %d of %d bytes' % (len(got), len(data))
                got += chunk
        except BlockingIOError:
            continue
        except OSError as e:
            return '%s after %d of %d bytes' % (e.strerror or e, len(got), len(data))
    if got != data:
        at = next((i for i, (a, b) in enumerate(zip(got, data)) if a != b),
                  min(len(got), len(data)))
        return 'mismatch at byte %d of %d (%d came back)' % (at, len(data), len(got))
    return ''
