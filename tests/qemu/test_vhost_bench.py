"""ringside-bench against a fake hybrid-vsock peer (a Unix socket that
speaks CONNECT/OK and runs echo/sink/source in Python, optionally
corrupting one byte): results, JSON shape, mismatch offsets, exit codes."""
import json
import os
import socket
import subprocess
import threading

import pytest

import vsockhost as vh


@pytest.fixture(scope="module", autouse=True)
def built():
    vh.build_all()


class FakePeer:
    def __init__(self, path, corrupt_at=None):
        self.path = path
        self.corrupt_at = corrupt_at
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.stopped = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,),
                             daemon=True).start()

    def _fix(self, data, off):
        k = self.corrupt_at
        if k is not None and off <= k < off + len(data):
            data = bytearray(data)
            data[k - off] ^= 0x55
        return bytes(data)

    def _serve(self, c):
        with c:
            line = b""
            while not line.endswith(b"\n"):
                b = c.recv(1)
                if not b:
                    return
                line += b
            port = int(line.split()[1])
            if port not in (1234, 1235, 1236):
                return                      # no OK: nothing listening
            c.sendall(b"OK 1073741824\n")
            off = 0
            try:
                if port == 1236:
                    while True:
                        c.sendall(self._fix(vh.pattern(65536, off), off))
                        off += 65536
                while True:
                    d = c.recv(65536)
                    if not d:
                        return
                    if port == 1234:
                        c.sendall(self._fix(d, off))
                    off += len(d)
            except OSError:
                return

    def close(self):
        self.stopped = True
        self.thread.join(5)
        self.sock.close()
        os.unlink(self.path)


@pytest.fixture
def peer(request, tmp_path):
    p = FakePeer(str(tmp_path / "peer.sock"),
                 getattr(request, "param", None))
    yield p
    p.close()


def bench(*args, timeout=120):
    return subprocess.run([vh.BENCH] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def test_pingpong_json(peer):
    r = bench("pingpong", "--uds", peer.path, "-s", "1,64,4k,65580",
              "--count", "100", "--warmup", "5", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["results"]
    assert [x["size"] for x in res] == [1, 64, 4096, 65580]
    for x in res:
        assert x["count"] == 100
        assert 0 < x["p1"] <= x["p50"] <= x["p99"] <= x["p99_9"] <= x["max"]
        assert x["p1"] <= x["mean"] <= x["max"]


def test_pingpong_table(peer):
    r = bench("pingpong", "--uds", peer.path, "-s", "64,4096", "--time",
              "0.5")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "1st perc." in lines[1] and "99.9th" in lines[1]
    assert lines[2].split()[0] == "64" and lines[3].split()[0] == "4096"


@pytest.mark.parametrize("direction", ["h2g", "g2h"])
def test_stream_json(peer, direction):
    r = bench("stream", "--uds", peer.path, "--dir", direction, "-P", "3",
              "-l", "16k", "--time", "1", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["dir"] == direction and res["parallel"] == 3
    assert len(res["streams_gbps"]) == 3 and res["gbps"] > 0
    assert abs(sum(res["streams_gbps"]) - res["gbps"]) < res["gbps"] * 0.2


@pytest.mark.parametrize("peer", [5123], indirect=True)
def test_pingpong_mismatch_offset(peer):
    r = bench("pingpong", "--uds", peer.path, "-s", "1000", "--count", "20",
              "--warmup", "0")
    assert r.returncode == 3
    assert "offset 5123" in r.stderr


@pytest.mark.parametrize("peer", [777777], indirect=True)
def test_stream_g2h_mismatch_offset(peer):
    r = bench("stream", "--uds", peer.path, "--dir", "g2h", "--time", "5")
    assert r.returncode == 3
    assert "offset 777777" in r.stderr


def test_refused_port(peer):
    r = bench("pingpong", "--uds", peer.path, "--port", "4444")
    assert r.returncode == 2 and "CONNECT 4444" in r.stderr


@pytest.mark.parametrize("args", [
    [], ["bogus"], ["pingpong"], ["pingpong", "--uds", "x", "--cid", "3"],
    ["stream", "--uds", "x", "--dir", "up"], ["pingpong", "--uds", "x",
                                              "-s", "0"],
])
def test_bad_arguments(args):
    r = bench(*args)
    assert r.returncode == 2 and r.stderr.strip()


@pytest.mark.parametrize("args", [
    ["pingpong", "--uds", "x", "--cid", "3k"],
    ["pingpong", "--uds", "x", "--port", "1k"],
    ["pingpong", "--uds", "x", "--port", "0x10"],
])
def test_cid_and_port_are_numbers_not_sizes(args):
    # before: parsed as sizes, so --cid 3k meant CID 3072
    r = bench(*args)
    assert r.returncode == 2 and "'%s'" % args[-1] in r.stderr, r.stderr


def test_help_prints_percent_once():
    r = bench("--help")
    assert r.returncode == 0
    assert "CPU%" in r.stdout and "%%" not in r.stdout, r.stdout


def test_help_fits_a_screen():
    r = bench("--help")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) <= 25 and max(map(len, lines)) <= 80
