"""ringside-vhost-vsock keeps serving across QEMU quitting and a new QEMU
connecting, a guest reboot, and a front end that dies without a goodbye."""
import socket

import pytest

import vsockhost as vh


@pytest.fixture(scope="module")
def images():
    return vh.build_all()


@pytest.fixture
def backend(tmp_path):
    b = vh.Backend(tmp_path)
    yield b
    b.stop()


def boot(request, backend, images, packed=False):
    q = vh.LinuxGuest(backend, packed=packed, name=request.node.name)
    request.addfinalizer(q.stop)
    q.wait_ready()
    return q


def test_new_qemu_after_quit(request, backend, images):
    for packed in (False, True, False):
        q = boot(request, backend, images, packed)
        vh.echo_check(backend.uds, vh.pattern(100000))
        # leave a connection open: the back end must drop it cleanly
        s = vh.hybrid_connect(backend.uds, vh.PORT_ECHO)
        q.stop()
        assert s.recv(1) == b""
        s.close()
    c = backend.counters()
    assert c["vu_connects"] == 3 and c["vu_disconnects"] == 3
    assert c["ring_errors"] == 0 and backend.alive()


def test_qemu_killed_hard(request, backend, images):
    q = boot(request, backend, images)
    vh.echo_check(backend.uds, b"x" * 5000)
    q.kill()
    q = boot(request, backend, images)
    vh.echo_check(backend.uds, b"y" * 5000)
    assert backend.alive()


def test_guest_reboot(request, backend, images):
    q = boot(request, backend, images, packed=True)
    vh.echo_check(backend.uds, vh.pattern(70000))
    q.reboot()
    vh.echo_check(backend.uds, vh.pattern(70000, 5))
    c = backend.counters()
    assert c["vu_connects"] == 1 and c["ring_errors"] == 0


def test_client_before_guest_is_turned_away(backend):
    """No guest yet: a host client sees EOF instead of hanging."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(backend.uds)
    try:
        s.sendall(b"CONNECT 1234\n")
        assert s.recv(16) == b""
    except (ConnectionResetError, BrokenPipeError):
        pass                    # closed with our line unread: also fine
    s.close()
    assert backend.alive()


def test_poll_mode(request, tmp_path, images):
    """--poll busy-polls the rings: same results, no kicks needed."""
    b = vh.Backend(tmp_path, extra=["--poll"])
    request.addfinalizer(b.stop)
    boot(request, b, images)
    for size in (1, 4097, 1 << 20):
        vh.echo_check(b.uds, vh.pattern(size))
    assert b.counters()["ring_errors"] == 0


def test_unshared_guest_ram_is_reported(request, backend, images):
    """share=off: QEMU still passes fds but the guest's writes stay private;
    the back end says so in one line instead of silently doing nothing."""
    q = vh.LinuxGuest(backend, share=False, name=request.node.name)
    request.addfinalizer(q.stop)
    backend.wait_log(r"guest RAM is not shared[^\n]*share=on", vh.BOOT_TIMEOUT)
    assert backend.alive()


def test_guest_cid_option(request, tmp_path, images):
    """--guest-cid reaches the guest through GET_CONFIG; the guest's
    packets then carry it (anything else would count as bad_hdrs)."""
    b = vh.Backend(tmp_path, guest_cid=77)
    request.addfinalizer(b.stop)
    boot(request, b, images)
    vh.echo_check(b.uds, vh.pattern(5000))
    c = b.counters()
    assert c["bad_hdrs"] == 0 and c["tx_pkts"] > 0
