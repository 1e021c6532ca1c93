"""A Linux guest (Debian's kernel, its own virtio-vsock driver) end to end
through ringside-vhost-vsock, on split and packed rings: byte-exact echo
at edge sizes, bulk both ways, many connections, half-close, guest-initiated
connections to host listeners, and the benchmark client. Debian's 6.12
kernel (make linux-guest-6.12, the same initrd; seed 000's TX fast path)
boots on both rings too and echoes byte-exact."""
import json
import socket
import subprocess
import threading

import pytest

import vsockhost as vh

pytestmark = pytest.mark.slow     # the Linux guest boots in 20-55 s under TCG

ECHO_SIZES = [1, 44, 64, 4095, 4096, 4097, 65536, 65580, 1 << 20]
BULK = 64 << 20


@pytest.fixture(scope="module")
def images():
    return vh.build_all()


# Ring layouts, and with "-plain" the guest driver also without EVENT_IDX
# and indirect descriptors (flags-based notification, chained descriptors).
@pytest.fixture(scope="module",
                params=["split", "packed", "split-plain", "packed-plain"])
def guest(request, images, tmp_path_factory):
    backend = vh.Backend(tmp_path_factory.mktemp("vsock-" + request.param))
    request.addfinalizer(backend.stop)
    plain = request.param.endswith("-plain")
    qemu = vh.LinuxGuest(backend, packed=request.param.startswith("packed"),
                         event_idx=not plain, indirect=not plain,
                         name="linux-guest-" + request.param)
    request.addfinalizer(qemu.stop)
    qemu.wait_ready()
    return backend, qemu


@pytest.fixture
def clean_counters(guest):
    """After each test: no violations were counted in either direction."""
    backend, _ = guest
    yield
    assert_clean(backend)


def assert_clean(backend):
    c = backend.counters()
    for k in ("ring_errors", "bad_hdrs", "credit_violations",
              "host_io_errors", "vu_bad_msgs"):
        assert c[k] == 0, (k, c)
    assert backend.alive()
    assert "not shared" not in backend.text()


@pytest.mark.parametrize("size", ECHO_SIZES)
def test_echo_sizes(guest, clean_counters, size):
    backend, _ = guest
    vh.echo_check(backend.uds, vh.pattern(size, off=size))


def test_echo_many_writes_one_connection(guest, clean_counters):
    backend, _ = guest
    s = vh.hybrid_connect(backend.uds, vh.PORT_ECHO)
    with s:
        off = 0
        for size in (1, 3, 44, 100, 4096, 7, 65536, 2):
            data = vh.pattern(size, off)
            s.sendall(data)
            assert vh.recv_exact(s, size) == data
            off += size


def test_data_pipelined_after_connect_line(guest, clean_counters):
    """Bytes written together with the CONNECT line reach the guest after
    the handshake, none are eaten with the line."""
    backend, _ = guest
    data = vh.pattern(10000, 3)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(vh.IO_TIMEOUT)
    with s:
        s.connect(backend.uds)
        s.sendall(b"CONNECT %d\n" % vh.PORT_ECHO + data)
        line = b""
        while not line.endswith(b"\n"):
            line += s.recv(1)
        assert line.startswith(b"OK ")
        assert vh.recv_exact(s, len(data)) == data


def test_bulk_echo_both_ways(guest, clean_counters):
    """64 MiB host -> guest -> host through one connection, checked."""
    backend, _ = guest
    vh.echo_check(backend.uds, vh.pattern(BULK))


def test_bulk_g2h_source(guest, clean_counters):
    """64 MiB from the guest's source port, every byte checked."""
    backend, _ = guest
    s = vh.hybrid_connect(backend.uds, vh.PORT_SOURCE)
    with s:
        got = vh.recv_exact(s, BULK)
    want = vh.pattern(BULK)
    assert got == want, vh.first_mismatch(got, want)


def test_bulk_h2g_sink(guest, clean_counters):
    backend, _ = guest
    before = backend.counters()["rx_bytes"]
    s = vh.hybrid_connect(backend.uds, vh.PORT_SINK)
    with s:
        s.sendall(vh.pattern(BULK))
        s.shutdown(socket.SHUT_WR)
        assert s.recv(1) == b""          # the guest closes after EOF
    assert backend.counters()["rx_bytes"] - before == BULK


def test_many_connections_at_once(guest, clean_counters):
    backend, _ = guest
    errors = []

    def one(i):
        try:
            vh.echo_check(backend.uds, vh.pattern(50000 + i * 977, i))
        except Exception as e:          # noqa: BLE001 - reported below
            errors.append((i, e))

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(vh.IO_TIMEOUT)
    stuck = [t.name for t in threads if t.is_alive()]
    assert not stuck, '%d connection(s) still running after %d s' % (
        len(stuck), vh.IO_TIMEOUT)
    assert not errors


def test_half_close_delivers_everything(guest, clean_counters):
    """SHUT_WR from the host reaches the guest as SHUTDOWN; the echo
    server then closes, and the host reads all data and EOF."""
    backend, _ = guest
    s = vh.hybrid_connect(backend.uds, vh.PORT_ECHO)
    with s:
        data = vh.pattern(300000)
        threading.Thread(target=lambda: (s.sendall(data),
                                         s.shutdown(socket.SHUT_WR))).start()
        got = vh.recv_exact(s, len(data))
        assert got == data
        assert s.recv(1) == b""


def test_connect_to_closed_guest_port(guest, clean_counters):
    backend, _ = guest
    with pytest.raises(ConnectionRefusedError):
        vh.hybrid_connect(backend.uds, 4444)
    vh.echo_check(backend.uds, b"still fine")


def test_guest_initiated_connection(guest, clean_counters):
    backend, qemu = guest
    port = 5001
    listener = vh.EchoListener("%s_%d" % (backend.uds, port))
    try:
        for size in (1, 4097, 1 << 20):
            m = qemu.command("connect %d %d" % (port, size),
                             r"connect %d ((ok|error|mismatch|short)"
                             r"[^\r\n]*)\r?\n" % port)
            assert m.group(1) == "ok %d" % size, m.group(0)
    finally:
        listener.close()
    assert listener.accepted == 3


def test_guest_connect_without_listener_is_reset(guest, clean_counters):
    backend, qemu = guest
    before = backend.counters()["conns_refused"]
    qemu.command("connect 5999 10", r"connect 5999 error [^\r\n]+\r?\n")
    assert backend.counters()["conns_refused"] == before + 1


def test_bench_pingpong(guest, clean_counters):
    backend, _ = guest
    r = subprocess.run([vh.BENCH, "pingpong", "--uds", backend.uds,
                        "-s", "1,64,4096,65536", "--count", "200", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["results"]
    assert [x["size"] for x in res] == [1, 64, 4096, 65536]
    for x in res:
        assert x["count"] == 200 and 0 < x["p1"] <= x["p50"] <= x["p99"] \
            <= x["max"]


@pytest.mark.parametrize("direction", ["h2g", "g2h"])
def test_bench_stream(guest, clean_counters, direction):
    backend, _ = guest
    r = subprocess.run([vh.BENCH, "stream", "--uds", backend.uds, "--dir",
                        direction, "-P", "2", "-l", "64k", "--time", "2",
                        "--json", "--cpu-pids", str(backend.proc.pid)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["gbps"] > 0 and len(res["streams_gbps"]) == 2
    assert res["cpu_percent"] > 0


SEQ_SIZES = [1, 44, 4096, 4097, 65536, 65580, 100000, 200000]


def test_seqpacket_echo_keeps_boundaries(guest, clean_counters):
    """SOCK_SEQPACKET host client -> guest echo on 1237: every message
    comes back whole and alone, split over RX buffers by EOM."""
    backend, _ = guest
    s = vh.hybrid_connect_seq(backend.uds_seq, vh.PORT_SEQ_ECHO)
    with s:
        off = 0
        for size in SEQ_SIZES:
            msg = vh.pattern(size, off)
            s.send(msg)
            assert s.recv(1 << 20) == msg, size
            off += size


def test_seqpacket_guest_initiated(guest, clean_counters):
    backend, qemu = guest
    port = 5002
    listener = vh.EchoListener("%s_%d" % (backend.uds, port),
                               socket.SOCK_SEQPACKET)
    try:
        m = qemu.command("sconnect %d %d" % (port, 300000),
                         r"sconnect %d ((ok|error|bad|short)[^\r\n]*)\r?\n"
                         % port)
        assert m.group(1) == "ok 300000", m.group(0)
    finally:
        listener.close()
    assert listener.accepted == 1


# Debian's 6.12 guest: its own module set (the virtio core built in), the
# TX fast path of seed 000 (efcd71af38be, mainline v6.12).
@pytest.fixture(scope="module", params=["split", "packed"])
def guest612(request, tmp_path_factory):
    vh.build_all("linux-6.12")
    backend = vh.Backend(tmp_path_factory.mktemp("vsock612-" + request.param))
    request.addfinalizer(backend.stop)
    qemu = vh.LinuxGuest(backend, "linux-6.12", packed=request.param == "packed",
                         name="linux-612-" + request.param)
    request.addfinalizer(qemu.stop)
    qemu.wait_ready()
    return backend, qemu


def test_linux_612_boots_and_echoes_byte_exact(guest612):
    backend, qemu = guest612
    assert "insmod" not in qemu.console.text, qemu.console.text[-2000:]
    for size in ECHO_SIZES:
        vh.echo_check(backend.uds, vh.pattern(size, off=size))
    s = vh.hybrid_connect(backend.uds, vh.PORT_ECHO)
    with s:
        off = 0
        for size in (1, 44, 4096, 7, 65536):
            data = vh.pattern(size, off)
            s.sendall(data)
            assert vh.recv_exact(s, size) == data
            off += size
    assert_clean(backend)


def test_linux_612_source_and_guest_connect(guest612):
    backend, qemu = guest612
    s = vh.hybrid_connect(backend.uds, vh.PORT_SOURCE)
    with s:
        got = vh.recv_exact(s, 1 << 20)
    assert got == vh.pattern(1 << 20), vh.first_mismatch(got, vh.pattern(1 << 20))
    port = 5003
    listener = vh.EchoListener("%s_%d" % (backend.uds, port))
    try:
        m = qemu.command("connect %d %d" % (port, 4097),
                         r"connect %d ((ok|error|mismatch|short)[^\r\n]*)\r?\n" % port)
        assert m.group(1) == "ok 4097", m.group(0)
    finally:
        listener.close()
    assert_clean(backend)
