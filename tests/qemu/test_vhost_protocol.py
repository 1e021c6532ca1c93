"""ringside-vhost-vsock without QEMU: command line, malformed vhost-user
messages and a hostile "guest" driven through a fake front end that shares
a memfd as guest memory. The process must count every violation and keep
serving."""
import mmap
import os
import socket
import struct
import subprocess
import time

import pytest

import vsockhost as vh
from vsockhost import FrontEnd

F_VERSION_1 = 1 << 32
F_PROTOCOL_FEATURES = 1 << 30
PF_REPLY_ACK = 1 << 3
PF_CONFIG = 1 << 9


@pytest.fixture(scope="module", autouse=True)
def built():
    vh.build_all()


@pytest.fixture
def backend(tmp_path):
    b = vh.Backend(tmp_path)
    yield b
    b.stop()


def run_backend(*args):
    return subprocess.run([vh.BACKEND] + list(args), capture_output=True,
                          text=True, timeout=30)


def test_help_fits_a_screen():
    r = run_backend("--help")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert 5 < len(lines) <= 24 and max(map(len, lines)) <= 80


@pytest.mark.parametrize("args", [
    [],
    ["--socket", "/tmp/x"],
    ["--socket", "/tmp/x", "--uds", "/tmp/y", "--guest-cid", "2"],
    ["--socket", "/tmp/x", "--uds", "/tmp/y", "--guest-cid", "abc"],
    ["--socket", "/tmp/x", "--uds", "/tmp/y", "--bogus"],
    ["--socket", "/tmp/x", "--uds", "/tmp/y", "extra"],
])
def test_bad_arguments_one_line_error(args):
    r = run_backend(*args)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_socket_in_use(backend, tmp_path):
    r = run_backend("--socket", backend.vu, "--uds", str(tmp_path / "other"))
    assert r.returncode == 2 and "in use" in r.stderr
    assert backend.alive()


@pytest.mark.parametrize("bad", ["socket", "uds", "uds-seqpacket"])
def test_bind_failure_names_the_path_and_leaves_no_socket(tmp_path, bad):
    """Each socket in turn in a folder that does not exist: one line naming
    the option and the path, and the sockets bound before it are gone."""
    paths = {k: str(tmp_path / k) for k in ("socket", "uds", "uds-seqpacket")}
    paths[bad] = str(tmp_path / "missing" / bad)
    r = run_backend(*[a for k, v in paths.items() for a in ("--" + k, v)])
    assert r.returncode == 2
    assert r.stderr == ("ringside-vhost-vsock: --%s %s: cannot bind: No such file or "
                        "directory\n" % (bad, paths[bad]))
    assert sorted(os.listdir(tmp_path)) == []


def test_late_failure_leaves_no_socket(tmp_path):
    """A failure after both sockets are bound (a TCP port that cannot be
    listened on) removes them."""
    r = run_backend("--socket", str(tmp_path / "vu"), "--uds", str(tmp_path / "u"),
                    "--forward-tcp", "192.0.2.1:0=1234")
    assert r.returncode == 2
    assert r.stderr == ("ringside-vhost-vsock: --forward-tcp: cannot listen on 192.0.2.1:0: "
                        "Cannot assign requested address\n")
    assert os.listdir(tmp_path) == []


def test_stale_socket_file_is_replaced(tmp_path):
    path = str(tmp_path / "vu.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()                       # a socket file nobody listens on
    b = vh.Backend(tmp_path)
    try:
        assert b.alive()
    finally:
        b.stop()


def negotiate(fe):
    feats = fe.u64(vh.VU_GET_FEATURES)
    assert feats & F_VERSION_1 and feats & F_PROTOCOL_FEATURES
    pf = fe.u64(vh.VU_GET_PROTOCOL_FEATURES)
    assert pf & PF_CONFIG and pf & PF_REPLY_ACK     # QEMU 7.2 needs CONFIG
    fe.send(vh.VU_SET_PROTOCOL_FEATURES,
            struct.pack("<Q", PF_REPLY_ACK | PF_CONFIG))
    fe.send(vh.VU_SET_OWNER)
    return feats


def acked(fe, req, payload=b"", **kw):
    """Send with NEED_REPLY; the REPLY_ACK status (0 = success)."""
    r, flags, p = fe.call(req, payload, flags=1 | vh.NEED_REPLY, **kw)
    assert r == req and len(p) == 8
    return struct.unpack("<Q", p)[0]


def test_handshake_answers(backend):
    fe = FrontEnd(backend.vu)
    negotiate(fe)
    assert fe.u64(vh.VU_GET_QUEUE_NUM) == 2
    r, _, p = fe.call(vh.VU_GET_CONFIG, struct.pack("<III", 0, 8, 0) +
                      bytes(8))
    assert struct.unpack("<IIIQ", p) == (0, 8, 0, 3)    # guest_cid
    fe.close()


def test_malformed_messages_counted(backend):
    fe = FrontEnd(backend.vu)
    negotiate(fe)
    before = backend.counters()["vu_bad_msgs"]
    assert acked(fe, 99) != 0                                  # unknown
    assert acked(fe, vh.VU_SET_VRING_NUM, b"\0" * 4) != 0      # short
    assert acked(fe, vh.VU_SET_VRING_NUM,
                 struct.pack("<II", 7, 128)) != 0              # bad queue
    assert acked(fe, vh.VU_SET_VRING_NUM,
                 struct.pack("<II", 0, 0)) != 0                # size 0
    assert acked(fe, vh.VU_SET_VRING_KICK,
                 struct.pack("<Q", 0)) != 0                    # no fd
    region = struct.pack("<IIQQQQ", 1, 0, 0, 1 << 20, 1 << 30, 0)
    assert acked(fe, vh.VU_SET_MEM_TABLE, region) != 0         # no fd
    rd, wr = os.pipe()
    try:
        assert acked(fe, vh.VU_SET_MEM_TABLE, region, fds=[rd]) != 0
    finally:
        os.close(rd)
        os.close(wr)
    assert acked(fe, vh.VU_SET_MEM_TABLE,
                 struct.pack("<II", 9, 0)) != 0                # 9 regions
    fe.send(vh.VU_GET_FEATURES, flags=0)                       # bad version
    assert fe.u64(vh.VU_GET_FEATURES) & F_VERSION_1            # still fine
    c = backend.counters()
    assert c["vu_bad_msgs"] - before >= 9
    # a payload larger than any message cannot be skipped: we are dropped
    fe.send(vh.VU_SET_FEATURES, size=1 << 20)
    assert fe.s.recv(1) == b""
    fe.close()
    fe = FrontEnd(backend.vu)                   # and the next one is served
    negotiate(fe)
    fe.close()
    assert backend.alive()


# ------------------------------------------------------------ hostile rings
MEM = 1 << 20
UADDR = 0x7f0000000000          # the "front end's" address of the region
RING = {0: 0x0000, 1: 0x1000}   # desc at +0, avail at +0x200, used at +0x400
NUM = 8
BUF = 0x10000
VU_SET_VRING_ERR = 14


class FakeGuest:
    """Shared memfd "guest RAM" and both rings set up as QEMU would."""

    def __init__(self, backend, ring_addr_delta=0):
        self.fd = os.memfd_create("guest")
        os.ftruncate(self.fd, MEM)
        self.mem = mmap.mmap(self.fd, MEM)
        self.fe = FrontEnd(backend.vu)
        negotiate(self.fe)
        self.fe.send(vh.VU_SET_FEATURES,
                     struct.pack("<Q", F_VERSION_1 | F_PROTOCOL_FEATURES))
        assert acked(self.fe, vh.VU_SET_MEM_TABLE,
                     struct.pack("<IIQQQQ", 1, 0, 0, MEM, UADDR, 0),
                     fds=[self.fd]) == 0
        self.kick = {}
        self.call = {}
        for q in (0, 1):
            base = UADDR + RING[q] + ring_addr_delta
            self.fe.send(vh.VU_SET_VRING_NUM, struct.pack("<II", q, NUM))
            self.fe.send(vh.VU_SET_VRING_BASE, struct.pack("<II", q, 0))
            self.fe.send(vh.VU_SET_VRING_ADDR, struct.pack(
                "<IIQQQQ", q, 0, base, base + 0x400, base + 0x200, 0))
            self.kick[q] = os.eventfd(0)
            self.call[q] = os.eventfd(0, os.EFD_NONBLOCK)
            self.fe.send(vh.VU_SET_VRING_CALL, struct.pack("<Q", q),
                         fds=[self.call[q]])
            self.fe.send(vh.VU_SET_VRING_KICK, struct.pack("<Q", q),
                         fds=[self.kick[q]])
            assert acked(self.fe, vh.VU_SET_VRING_ENABLE,
                         struct.pack("<II", q, 1)) == 0
        self.avail_idx = {0: 0, 1: 0}

    def desc(self, q, i, addr, length, flags=0, nxt=0):
        struct.pack_into("<QIHH", self.mem, RING[q] + 16 * i, addr, length,
                         flags, nxt)

    def make_avail(self, q, head, idx=None):
        a = RING[q] + 0x200
        struct.pack_into("<H", self.mem, a + 4 + 2 * (self.avail_idx[q] % NUM),
                         head)
        self.avail_idx[q] += 1
        struct.pack_into("<H", self.mem, a + 2,
                         self.avail_idx[q] if idx is None else idx)
        os.eventfd_write(self.kick[q], 1)

    def used_idx(self, q):
        return struct.unpack_from("<H", self.mem, RING[q] + 0x400 + 2)[0]

    def close(self):
        self.fe.close()
        for fd in list(self.kick.values()) + list(self.call.values()):
            os.close(fd)
        self.mem.close()
        os.close(self.fd)


def vsock_hdr(op, src_port=5000, dst_port=9999, length=0, src_cid=3,
              dst_cid=2, typ=1, flags=0):
    return struct.pack("<QQIIIHHIII", src_cid, dst_cid, src_port, dst_port,
                       length, typ, op, flags, 65536, 0)


def wait_counter(backend, name, at_least, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        c = backend.counters()
        if c[name] >= at_least or time.monotonic() > deadline:
            return c
        time.sleep(0.05)


def hostile_loop(g):
    g.desc(1, 0, BUF, 44, flags=1, nxt=1)
    g.desc(1, 1, BUF, 44, flags=1, nxt=0)       # 0 -> 1 -> 0 -> ...
    g.make_avail(1, 0)


def hostile_outside(g):
    g.desc(1, 0, MEM - 20, 44)                  # crosses the region's end
    g.make_avail(1, 0)


def hostile_far(g):
    g.desc(1, 0, 1 << 62, 44)
    g.make_avail(1, 0)


def hostile_head(g):
    g.make_avail(1, 200)                        # head index >= NUM


def hostile_avail_idx(g):
    g.desc(1, 0, BUF, 44)
    g.make_avail(1, 0, idx=500)                 # 500 buffers in an 8-ring


def hostile_indirect_len(g):
    g.desc(1, 0, BUF, 17, flags=4)              # not a multiple of 16
    g.make_avail(1, 0)


def hostile_indirect_nested(g):
    struct.pack_into("<QIHH", g.mem, BUF, BUF + 0x100, 16, 4, 0)
    g.desc(1, 0, BUF, 16, flags=4)
    g.make_avail(1, 0)


def hostile_rx_readable(g):
    # an RX buffer the device could not write, then work that needs one
    g.desc(0, 0, BUF + 0x1000, 4096)            # no WRITE flag
    g.make_avail(0, 0)
    g.mem[BUF:BUF + 44] = vsock_hdr(1, dst_port=4321)   # REQUEST, no listener
    g.desc(1, 0, BUF, 44)
    g.make_avail(1, 0)


@pytest.mark.parametrize("attack", [
    hostile_loop, hostile_outside, hostile_far, hostile_head,
    hostile_avail_idx, hostile_indirect_len, hostile_indirect_nested,
    hostile_rx_readable])
def test_hostile_ring_is_counted(backend, attack):
    g = FakeGuest(backend)
    try:
        before = backend.counters()["ring_errors"]
        attack(g)
        c = wait_counter(backend, "ring_errors", before + 1)
        assert c["ring_errors"] > before
        assert backend.alive()
    finally:
        g.close()
    # the next front end gets a working device
    g = FakeGuest(backend)
    g.close()
    assert backend.alive()


def wait_used(g, q, idx, timeout=20):
    deadline = time.monotonic() + timeout
    while g.used_idx(q) < idx and time.monotonic() < deadline:
        time.sleep(0.02)  # guest memory has no event to wait on
    return g.used_idx(q)


def used_elem(g, q, i):
    """(id, len) of used ring entry i."""
    return struct.unpack_from("<II", g.mem, RING[q] + 0x400 + 4 + 8 * i)


@pytest.mark.parametrize("attack", [
    hostile_loop, hostile_outside, hostile_far, hostile_indirect_len,
    hostile_indirect_nested])
def test_bad_tx_chain_dropped_ring_goes_on(backend, attack):
    """A bad chain behind a valid head (the guest's attack modes ring-*):
    counted once, given back used with length 0, and the next chain is
    taken as usual; the ring is not stopped (vring_split_pop)."""
    g = FakeGuest(backend)
    try:
        before = backend.counters()
        attack(g)                                   # head 0
        g.mem[BUF + 0x2000:BUF + 0x2000 + 44] = vsock_hdr(1, dst_port=4321)
        g.desc(1, 2, BUF + 0x2000, 44)              # a REQUEST, nobody listens
        g.make_avail(1, 2)
        assert wait_used(g, 1, 2) == 2
        assert used_elem(g, 1, 0) == (0, 0)
        assert used_elem(g, 1, 1)[0] == 2
        c = wait_counter(backend, "conns_refused", before["conns_refused"] + 1)
        assert c["ring_errors"] == before["ring_errors"] + 1
        assert c["tx_pkts"] == before["tx_pkts"] + 1
        assert c["conns_refused"] == before["conns_refused"] + 1
        assert c["rings_broken"] == before["rings_broken"]
        assert backend.alive()
    finally:
        g.close()


@pytest.mark.parametrize("attack", [hostile_head, hostile_avail_idx])
def test_broken_ring_signals_err_fd(backend, attack):
    """Nothing to resynchronise on (attack mode ring-avail-jump): the
    ring stops, rings_broken counts it and the ring's error eventfd
    (VHOST_USER_SET_VRING_ERR) fires; the next front end gets a working
    device."""
    g = FakeGuest(backend)
    err = os.eventfd(0, os.EFD_NONBLOCK)
    try:
        g.fe.send(VU_SET_VRING_ERR, struct.pack("<Q", 1), fds=[err])
        before = backend.counters()
        attack(g)
        c = wait_counter(backend, "rings_broken", before["rings_broken"] + 1)
        assert c["rings_broken"] == before["rings_broken"] + 1
        assert os.eventfd_read(err) == 1
    finally:
        os.close(err)
        g.close()
    g = FakeGuest(backend)
    g.close()
    assert backend.alive()


def test_ring_outside_memory_is_refused(backend):
    before = backend.counters()["ring_errors"]
    g = FakeGuest(backend, ring_addr_delta=MEM)
    try:
        c = wait_counter(backend, "ring_errors", before + 1)
        assert c["ring_errors"] > before and backend.alive()
    finally:
        g.close()


@pytest.mark.parametrize("hdr,err", [
    (vsock_hdr(5, length=100000), "len over 64 KiB"),
    (vsock_hdr(5, length=100), "len beyond"),
    (vsock_hdr(1, src_cid=7), "src_cid"),
    (vsock_hdr(1, dst_cid=9), "dst_cid"),
    (vsock_hdr(42), "unknown op"),
    (vsock_hdr(1, typ=9), "unknown type"),
    (b"\0" * 20, "shorter"),
])
def test_bad_vsock_header_is_counted(backend, hdr, err):
    g = FakeGuest(backend)
    try:
        before = backend.counters()["bad_hdrs"]
        g.mem[BUF:BUF + len(hdr)] = hdr
        g.desc(1, 0, BUF, len(hdr))
        g.make_avail(1, 0)
        c = wait_counter(backend, "bad_hdrs", before + 1)
        assert c["bad_hdrs"] == before + 1
        assert g.used_idx(1) == 1               # the buffer came back
        assert err in backend.text()
    finally:
        g.close()


def test_request_without_listener_gets_rst(backend):
    """A REQUEST to a host port nobody listens on is answered by RST in
    the guest's RX buffer (virtio 1.2, 5.10.6.4)."""
    g = FakeGuest(backend)
    try:
        g.desc(0, 0, BUF + 0x1000, 4096, flags=2)       # writable RX buffer
        g.make_avail(0, 0)
        g.mem[BUF:BUF + 44] = vsock_hdr(1, src_port=5000, dst_port=4321)
        g.desc(1, 0, BUF, 44)
        g.make_avail(1, 0)
        deadline = time.monotonic() + 20
        while g.used_idx(0) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert g.used_idx(0) == 1
        used_id, used_len = struct.unpack_from("<II", g.mem, RING[0] + 0x404)
        assert (used_id, used_len) == (0, 44)
        h = struct.unpack_from("<QQIIIHHIII", g.mem, BUF + 0x1000)
        assert h[:7] == (2, 3, 4321, 5000, 0, 1, 3)     # RST from host
    finally:
        g.close()
