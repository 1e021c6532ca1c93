"""Helpers for the vhost-user-vsock tests: our back end and the Linux
guest behind it, both started by the launcher's own code (ringside.Launch,
ringside.VsockBackend), and hybrid-vsock clients. Every process is stopped
by its PID (its process group); callers use them as context managers or
via pytest finalizers.
"""
import os
import re
import select
import signal
import socket
import struct
import subprocess
import threading

import ringside
from ringside.benchlib import hybrid_connect as _hybrid_connect
from ringside.benchlib import pattern
from ringside.images import LINUX_GUESTS, linux_guest
from ringside.linux_guest import linux_launch_args
from ringside.guest_stats import json_of
from ringside.wait import poll_for, until

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, "build")
BACKEND = os.path.join(BUILD, "host", "ringside-vhost-vsock")
BENCH = os.path.join(BUILD, "host", "ringside-bench")
LOG_DIR = os.path.join(BUILD, "qemu-test-logs")

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
        sent = json_of(guest, 'vsock stream 2 %d 4096 2' % port, 300)['bytes']
        poll_for(lambda: self.bytes >= sent or self.errors, IO_TIMEOUT)
        assert not self.errors, 'pattern mismatch at %d' % self.errors[0]
        assert self.bytes == sent > 0, (self.bytes, sent)


def _run(cmd):
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def build_all(which="linux"):
    """Build the two host programs and the Linux guest `which` (a name in
    ringside.images.LINUX_GUESTS: linux, linux-6.12) if missing or stale;
    its (bzImage, initrd)."""
    _run(["make", "-s", "build/host/ringside-vhost-vsock",
          "build/host/ringside-bench", LINUX_GUESTS[which]])
    return linux_guest(which)


class Backend(ringside.VsockBackend):
    """Our back end as the launcher starts one (ringside.VsockBackend), on
    its own, with a SOCK_SEQPACKET socket too; its stderr kept in a file
    beside its sockets. QEMUs come and go while it stays (LinuxGuest)."""

    def __init__(self, tmpdir, extra=(), guest_cid=3):
        self.dir = str(tmpdir)
        self.uds_seq = os.path.join(self.dir, "vsock-seq.sock")
        self.log_path = os.path.join(self.dir, "backend.log")
        self._log = open(self.log_path, "wb")
        opts = ringside.parse_args(
            ["--vsock", "--vsock-transport", "vhost-user", "--vsock-cid", str(guest_cid),
             "--vsock-arg=--uds-seqpacket=" + self.uds_seq]
            + ["--vsock-arg=" + e for e in extra])
        super().__init__(opts, stderr=self._log)
        self.start()

    @property
    def vu(self):
        """The vhost-user socket a front end connects to."""
        return self.opts.vsock_socket

    def alive(self):
        return self.proc.poll() is None

    def counters(self):
        """Its counters, through its control socket."""
        return self.control().counters()

    def text(self):
        """What it wrote to stderr so far."""
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_log(self, regex, timeout):
        """Until its stderr has a line matching `regex` (a file has no
        event to wait on)."""
        return until(lambda: re.search(regex, self.text()), timeout, repr(regex))

    def stop(self):
        super().stop()
        self._log.close()
        return self.proc.returncode


class UnsharedLaunch(ringside.Launch):
    """A launch whose guest RAM is not shared with the back end: what a
    QEMU command line forgetting share=on does."""

    def argv(self):
        return [a.replace("share=on", "share=off") for a in super().argv()]


class LinuxGuest:
    """The Linux guest behind `backend` through the launcher
    (linux_guest.linux_launch_args), its console on pipes, its serial
    output kept in LOG_DIR/NAME.serial.log."""

    def __init__(self, backend, which="linux", packed=False, event_idx=True, indirect=True,
                 share=True, name="linux"):
        props = ["packed=%s" % ("on" if packed else "off")]
        props += [] if event_idx else ["event_idx=off"]
        props += [] if indirect else ["indirect_desc=off"]
        args = ["--vsock", "--accel", "tcg", *linux_launch_args(which)]
        for p in props:
            args += ["--qemu-arg=-global", "--qemu-arg=vhost-user-vsock-pci." + p]
        os.makedirs(LOG_DIR, exist_ok=True)
        self.serial = open(os.path.join(LOG_DIR, name + ".serial.log"), "wb")
        cls = ringside.Launch if share else UnsharedLaunch
        self.launch = cls(ringside.parse_args(args), "tcg", log=self.serial,
                          qemu_stderr=subprocess.DEVNULL, backend=backend)
        self.launch.start()

    @property
    def console(self):
        return self.launch.console

    def wait_ready(self):
        self.launch.wait_ready(BOOT_TIMEOUT, linux=True)

    def command(self, line, reply, timeout=IO_TIMEOUT):
        """Type a line on the guest's console (its server), wait for the
        reply matching `reply`; the match."""
        self.console.send(line + "\n")
        return self.console.wait_for(reply, timeout)

    def reboot(self):
        self.console.send("reboot\n")
        self.console.wait_linux_ready(BOOT_TIMEOUT)

    def kill(self):
        """QEMU killed by its PID, no goodbye to the back end."""
        self.launch.qemu.send_signal(signal.SIGKILL)
        self.launch.qemu.wait(30)

    def stop(self):
        self.launch.stop()
        self.serial.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.stop()


def hybrid_connect_seq(uds_seq, port, timeout=IO_TIMEOUT):
    """CONNECT through the back end's SOCK_SEQPACKET socket."""
    return _hybrid_connect(uds_seq, port, timeout, socket.SOCK_SEQPACKET)


def hybrid_connect(uds, port, timeout=IO_TIMEOUT):
    """CONNECT <port> through the back end; the socket after "OK"."""
    return _hybrid_connect(uds, port, timeout)


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
