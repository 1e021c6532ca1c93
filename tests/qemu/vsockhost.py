"""Helpers for the vhost-user-vsock tests: the back end, QEMU with a Linux
guest, hybrid-vsock clients. Every process is started here and stopped by
its PID; callers use them as context managers or via pytest finalizers.
"""
import os
import re
import select
import signal
import socket
import struct
import subprocess
import threading
import time

from ringside.images import LINUX_GUESTS, linux_guest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, "build")
BACKEND = os.path.join(BUILD, "host", "ringside-vhost-vsock")
BENCH = os.path.join(BUILD, "host", "ringside-bench")
QEMU = "qemu-system-x86_64"

PORT_ECHO, PORT_SINK, PORT_SOURCE = 1234, 1235, 1236
PORT_SEQ_ECHO = 1237        # SOCK_SEQPACKET echo in the Linux guest
BOOT_TIMEOUT = 180      # TCG on two busy cores
IO_TIMEOUT = 120


class HostPeer:
    """Where a guest-initiated connection lands: `sock`, bound, is listened
    on; its first connection is served in a thread, 'echo' sending every
    byte back, 'check' counting the pattern (bytes, the first bad offset in
    errors). The hybrid-vsock listener (<uds>_<port>) and, on a KVM host,
    an AF_VSOCK one use it alike."""

    def __init__(self, sock, mode):
        self.sock, self.mode = sock, mode
        self.bytes = 0
        self.errors = []
        self.sock.listen(4)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            off = 0
            while True:
                data = conn.recv(1 << 20)
                if not data:
                    return
                if self.mode == 'echo':
                    conn.sendall(data)
                elif data != pattern(len(data), off):
                    self.errors.append(off + next(i for i, b in enumerate(data)
                                                  if b != (off + i) % 251))
                    return
                off += len(data)
                self.bytes = off

    def close(self):
        self.sock.close()
        self.thread.join(10)

    def check_guest_stream(self, guest, port):
        """The guest's `vsock stream 2 PORT 4096 2` into this 'check' peer:
        every byte it says it wrote arrived, in pattern."""
        out = guest.command('vsock stream 2 %d 4096 2' % port, timeout=300)
        m = re.search(r'stream 4096 B writes for [\d.]+ s: (\d+) bytes', out)
        assert m, out
        sent = int(m.group(1))
        deadline = time.monotonic() + IO_TIMEOUT
        while self.bytes < sent and not self.errors and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not self.errors, 'pattern mismatch at %d' % self.errors[0]
        assert self.bytes == sent > 0, (self.bytes, sent)


def pattern(n, off=0):
    """The data pattern every ringside service uses: byte i is i % 251."""
    period = bytes(range(251))
    start = off % 251
    reps = (start + n) // 251 + 1
    return (period * reps)[start:start + n]


def _run(cmd):
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def build_all(which="linux"):
    """Build the two host programs and the Linux guest `which` (a name in
    ringside.images.LINUX_GUESTS: linux, linux-6.12) if missing or stale;
    its (bzImage, initrd)."""
    _run(["make", "-s", "build/host/ringside-vhost-vsock",
          "build/host/ringside-bench", LINUX_GUESTS[which]])
    return linux_guest(which)


def _stop_pid(proc, sig=signal.SIGTERM, timeout=10):
    if proc.poll() is None:
        try:
            os.kill(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)


class _Reader:
    """Collects a pipe's output in a thread; wait_for() waits for text."""

    def __init__(self, f):
        self.f = f
        self.data = b""
        self.cond = threading.Condition()
        self.closed = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while True:
            chunk = os.read(self.f.fileno(), 65536)
            with self.cond:
                if not chunk:
                    self.closed = True
                    self.cond.notify_all()
                    return
                self.data += chunk
                self.cond.notify_all()

    def text(self):
        with self.cond:
            return self.data.decode(errors="replace")

    def wait_for(self, regex, timeout, start=0):
        """Wait until regex matches output after byte `start`; the match."""
        rx = re.compile(regex.encode() if isinstance(regex, str) else regex)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                m = rx.search(self.data, start)
                if m:
                    return m
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise TimeoutError("no %r in output:\n%s" % (
                        regex, self.data[-3000:].decode(errors="replace")))
                self.cond.wait(min(left, 1.0))

    def mark(self):
        with self.cond:
            return len(self.data)


class Backend:
    """build/host/ringside-vhost-vsock in a private directory."""

    def __init__(self, tmpdir, extra=(), guest_cid=3):
        self.dir = str(tmpdir)
        self.vu = os.path.join(self.dir, "vu.sock")
        self.uds = os.path.join(self.dir, "vsock.sock")
        self.uds_seq = os.path.join(self.dir, "vsock-seq.sock")
        self.proc = subprocess.Popen(
            [BACKEND, "--socket", self.vu, "--uds", self.uds,
             "--uds-seqpacket", self.uds_seq,
             "--guest-cid", str(guest_cid)] + list(extra),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        self.err = _Reader(self.proc.stderr)
        self.err.wait_for(r"listening on", 30)

    def alive(self):
        return self.proc.poll() is None

    def counters(self):
        """Ask for the counters (SIGUSR1) and parse the newest dump."""
        start = self.err.mark()
        os.kill(self.proc.pid, signal.SIGUSR1)
        self.err.wait_for(r"host_io_errors +\d+\n", 10, start)
        text = self.err.data[start:].decode()
        return {k: int(v) for k, v in re.findall(r"^  (\w+) +(\d+)$", text,
                                                 re.M)}

    def stop(self):
        _stop_pid(self.proc)
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.stop()


class Qemu:
    """QEMU TCG with a vhost-user-vsock-pci device and a serial console."""

    def __init__(self, backend, kernel, initrd, packed=False, append="",
                 mem="512M", share=True, event_idx=True, indirect=True,
                 extra=()):
        dev = "vhost-user-vsock-pci,chardev=vu"
        if packed:
            dev += ",packed=on"
        if not event_idx:
            dev += ",event_idx=off"
        if not indirect:
            dev += ",indirect_desc=off"
        cmd = [QEMU, "-accel", "tcg",
               "-machine", "q35,memory-backend=mem",
               "-object", "memory-backend-memfd,id=mem,size=%s,share=%s" % (
                   mem, "on" if share else "off"),
               "-m", mem,
               "-chardev", "socket,id=vu,path=%s" % backend.vu,
               "-device", dev,
               "-nic", "none", "-monitor", "none", "-nographic",
               "-chardev", "stdio,id=s0,signal=off", "-serial", "chardev:s0",
               "-kernel", kernel, "-initrd", initrd,
               "-append", "console=ttyS0 quiet panic=-1 " + append] + list(extra)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.out = _Reader(self.proc.stdout)

    def wait_ready(self, start=0):
        return self.out.wait_for(r"ringside-linux-guest: ready", BOOT_TIMEOUT,
                                 start)

    def command(self, line, reply, timeout=IO_TIMEOUT):
        """Type a line on the guest console, wait for a regex reply."""
        start = self.out.mark()
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        return self.out.wait_for(reply, timeout, start)

    def stop(self):
        _stop_pid(self.proc)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.stop()


def hybrid_connect_seq(uds_seq, port, timeout=IO_TIMEOUT):
    """The SOCK_SEQPACKET twin: CONNECT and OK are one message each."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    s.connect(uds_seq)
    s.send(b"CONNECT %d\n" % port)
    line = s.recv(64)
    if not re.match(rb"OK \d+\n$", line):
        s.close()
        raise ConnectionRefusedError("no OK for CONNECT %d: %r" % (port, line))
    return s


def hybrid_connect(uds, port, timeout=IO_TIMEOUT):
    """CONNECT <port> through the back end; the socket after "OK"."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(uds)
    s.sendall(b"CONNECT %d\n" % port)
    line = b""
    while not line.endswith(b"\n"):
        c = s.recv(1)
        if not c:
            s.close()
            raise ConnectionRefusedError("no OK for CONNECT %d: %r" %
                                         (port, line))
        line += c
    if not re.match(rb"OK \d+\n$", line):
        s.close()
        raise ConnectionError("bad reply %r" % line)
    return s


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        c = s.recv(min(1 << 20, n - len(buf)))
        if not c:
            raise EOFError("EOF after %d of %d bytes" % (len(buf), n))
        buf += c
    return bytes(buf)


def first_mismatch(got, want):
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return i
    return min(len(got), len(want))


def echo_check(uds, data, chunk=1 << 20):
    """Send data to the echo port while reading it back; compare bytes."""
    s = hybrid_connect(uds, PORT_ECHO)
    err = []

    def writer():
        try:
            for i in range(0, len(data), chunk):
                s.sendall(data[i:i + chunk])
        except OSError as e:
            err.append(e)

    t = threading.Thread(target=writer)
    t.start()
    try:
        got = recv_exact(s, len(data))
    finally:
        t.join(IO_TIMEOUT)
        s.close()
    assert not err, err
    if got != data:
        raise AssertionError("echo of %d bytes differs at offset %d" %
                             (len(data), first_mismatch(got, data)))


class EchoListener:
    """A host Unix listener at PATH_P that echoes (for guest connects)."""

    def __init__(self, path, kind=socket.SOCK_STREAM):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, kind)
        self.sock.bind(path)
        self.sock.listen(16)
        self.accepted = 0
        self.stopped = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stopped:
            r, _, _ = select.select([self.sock], [], [], 0.2)
            if not r:
                continue
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._echo, args=(c,), daemon=True).start()

    @staticmethod
    def _echo(c):
        with c:
            while True:
                d = c.recv(1 << 20)     # a whole message on SEQPACKET
                if not d:
                    return
                c.sendall(d)

    def close(self):
        self.stopped = True
        self.thread.join(5)
        self.sock.close()
        os.unlink(self.path)


# ---------------------------------------------------------------- vhost-user
# A minimal front end for protocol tests (QEMU docs/interop/vhost-user.rst).
VU_GET_FEATURES = 1
VU_SET_FEATURES = 2
VU_SET_OWNER = 3
VU_SET_MEM_TABLE = 5
VU_SET_VRING_NUM = 8
VU_SET_VRING_ADDR = 9
VU_SET_VRING_BASE = 10
VU_GET_VRING_BASE = 11
VU_SET_VRING_KICK = 12
VU_SET_VRING_CALL = 13
VU_GET_PROTOCOL_FEATURES = 15
VU_SET_PROTOCOL_FEATURES = 16
VU_GET_QUEUE_NUM = 17
VU_SET_VRING_ENABLE = 18
VU_GET_CONFIG = 24
NEED_REPLY = 1 << 3


class FrontEnd:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(10)
        self.s.connect(path)

    def send(self, req, payload=b"", fds=(), flags=1, size=None):
        hdr = struct.pack("<III", req, flags,
                          len(payload) if size is None else size)
        if fds:
            socket.send_fds(self.s, [hdr + payload], list(fds))
        else:
            self.s.sendall(hdr + payload)

    def recv(self):
        hdr = recv_exact(self.s, 12)
        req, flags, size = struct.unpack("<III", hdr)
        return req, flags, recv_exact(self.s, size)

    def call(self, req, payload=b"", **kw):
        self.send(req, payload, **kw)
        return self.recv()

    def u64(self, req):
        r, flags, p = self.call(req)
        assert r == req and flags & 4 and len(p) == 8
        return struct.unpack("<Q", p)[0]

    def close(self):
        self.s.close()
