# SPDX-License-Identifier: MIT
"""Shared pieces of the host benchmark scripts (bench-vsock, bench-compare):
the benchmark client, where it reaches the guest, and waiting for vsock to
answer."""

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time

from .images import REPO
from .machine import Launch
from .qemu import vsock_kernel

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


def wait_vsock_up(uds, port=1234, timeout=60, prog='bench'):
    """Wait until a CONNECT to the guest's `port` gets OK.

    The guest's driver may be up before the back end has its rings: QEMU
    hands them over after the guest sets DRIVER_OK, and again after every
    device reset (switches that change negotiated features). Until then
    the back end refuses connections.
    """
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(uds)
            s.sendall(b'CONNECT %d\n' % port)
            if s.recv(64).startswith(b'OK '):
                return
        except OSError:
            pass
        finally:
            s.close()
        if time.monotonic() > deadline:
            raise SystemExit('%s: vsock port %d did not answer within %d s'
                             % (prog, port, timeout))
        time.sleep(0.1)


def wait_vsock_cid(cid, port=1234, timeout=60, prog='bench'):
    """Until the guest's `port` takes an AF_VSOCK connection: the kernel's
    vhost-vsock (only where /dev/vhost-vsock is: a KVM host, host/nested)."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect((cid, port))
            return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit('%s: vsock %d:%d did not answer within %d s'
                                 % (prog, cid, port, timeout))
            time.sleep(0.2)
        finally:
            s.close()


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
    if vsock_kernel(launch.opts, launch.accel):
        target = ['--cid', str(launch.opts.vsock_cid)]
    else:
        target = ['--uds', launch.opts.vsock_uds]
    wait_target(target, prog)
    return target
