# SPDX-License-Identifier: MIT
"""Benchmarking your own back end and QEMU (docs/own-stack.md, "Your
back end"): `ringside run --backend CMD` (placeholders, readiness, a back
end that fails), what the commands that need more of a back end than its
three placeholders do with yours (refuse in one line, or leave out the
checks and say so), --qemu PATH, the kernel vhost-vsock checks on a host
without /dev/vhost-vsock (tests/kvm has them where it exists), and
`ringside bench --attach` against a guest booted apart. Every guest is
stopped by PID at teardown (ringside_qemu.Guest)."""

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time

import pytest

from conftest import ELF, require_image
import ringside as rr
from ringside.benchlib import wait_vsock_up
from ringside_qemu import FRONT_DOOR, Guest, run_command, run_launcher
from vsockhost import echo_check, pattern

BACKEND = rr.DEFAULT_VSOCK_BACKEND
BENCH_TIMEOUT = 900     # a whole bench run under TCG on two busy cores
ECHO = 1234


def need_build():
    require_image(ELF)
    require_image(BACKEND)


def error_line(r, prog='ringside run'):
    """The contract: exactly one line 'PROG: error: ...', no traceback."""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prog + ': error: '), r.stderr
    return lines[0]


def bench_vsock(*args, timeout=BENCH_TIMEOUT):
    return subprocess.run([sys.executable, FRONT_DOOR, 'bench', *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def foreign(tmp_path, control=False):
    """Our back end as a --backend CMD of someone else's: the three
    placeholders, and {control} only when asked."""
    return '%s --socket {socket} --uds {uds} --guest-cid {cid}%s' % (
            shlex.quote(BACKEND), ' --control {control}' if control else '')


def free_tcp_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


# ------------------------------------------------------------- --backend CMD

def test_backend_cmd_with_placeholders_echoes(tmp_path):
    """Our back end given as a foreign command: the launcher fills in
    {socket} {uds} {cid}, QEMU connects, the guest echoes byte for byte."""
    need_build()
    uds = str(tmp_path / 'hybrid')
    cmd = '%s --socket {socket} --uds {uds} --guest-cid {cid}' % shlex.quote(BACKEND)
    with Guest('--boot', 'elf', '--vsock', '--vsock-uds', uds, '--vsock-cid', '7',
               '--backend', cmd, name='backend-cmd') as g:
        g.start()
        procs = dict(g.launch.children.procs)
        assert procs['vhost-vsock'].args == [
                BACKEND, '--socket', g.launch.opts.vsock_socket, '--uds', uds,
                '--guest-cid', '7'], 'placeholders not filled in as given'
        assert 'local cid 7' in g.command('vsock'), 'the guest did not get {cid}'
        wait_vsock_up(uds, ECHO, timeout=120, prog='test')
        for size in (1, 4096, 256 * 1024):
            echo_check(uds, pattern(size))
        assert g.poweroff() == 0


@pytest.mark.parametrize('kind', ['exits', 'missing'])
def test_backend_that_fails_at_once(tmp_path, kind):
    """A back end that exits before listening (here: after binding the
    socket) or cannot be started: one error line naming it, nothing booted,
    no socket file left behind."""
    need_build()
    sock = str(tmp_path / 'vu.sock')
    if kind == 'exits':
        cmd = ('%s -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1]); '
               'sys.exit(3)" {socket}' % sys.executable)
        want = r'back end exited with status 3 before listening on %s: .*python' % re.escape(
                sock)
    else:
        cmd = '%s/no-such-backend --socket {socket}' % tmp_path
        want = r'cannot start vhost-vsock \(%s/no-such-backend\)' % re.escape(str(tmp_path))
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '--vsock', '--vsock-socket', sock,
                     '--backend', cmd, '--cmd', 'info', timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert re.search(want, error_line(r)), r.stderr
    assert r.stdout == '', 'the guest ran: %r' % r.stdout
    assert not os.path.exists(sock), 'the dead back end\'s socket was left behind'


def test_backend_that_never_listens(tmp_path):
    need_build()
    cmd = '%s -c "import time; time.sleep(120)" {socket}' % sys.executable
    t0 = time.monotonic()
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '--vsock', '--backend', cmd,
                     '--backend-timeout', '2', '--cmd', 'info', timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert re.search(r'back end did not listen on \S+ within 2 s: .*time\.sleep',
                     error_line(r)), r.stderr
    assert time.monotonic() - t0 < 60, 'the launcher waited for the back end to end'


@pytest.mark.parametrize('cmd,why', [
        ('backend {sock}', 'unknown placeholder {sock}'),
        ('backend --uds {uds}', 'must name {socket}'),
        ('backend "{socket}', 'No closing quotation'),
])
def test_backend_cmd_usage_errors(cmd, why):
    r = run_launcher('--vsock', '--backend', cmd, '--dry-run')
    assert r.returncode == 2 and r.stdout == ''
    assert why in error_line(r)


def test_vsock_backend_path_is_the_default_cmd_binary():
    """--vsock-backend PATH (older scripts) picks our back end's binary in
    the default CMD; with --backend it is one or the other."""
    r = run_launcher('--vsock', '--vsock-backend', '/opt/vv', '--vsock-arg=--poll',
                     '--accel', 'tcg', '--dry-run')
    assert r.returncode == 0, r.stderr
    backend = shlex.split(r.stdout.splitlines()[0])
    assert backend[0] == '/opt/vv' and backend[-1] == '--poll'
    assert backend[1::2][:3] == ['--socket', '--uds', '--guest-cid']
    r = run_launcher('--vsock', '--vsock-backend', '/opt/vv', '--backend', 'b {socket}',
                     '--dry-run')
    assert r.returncode == 2 and 'exclude each other' in error_line(r)


def test_backend_refused_with_kernel_transport():
    r = run_launcher('--vsock', '--vsock-transport', 'kernel', '--backend', 'b {socket}',
                     '--dry-run')
    assert r.returncode == 2 and '--backend' in error_line(r)


def test_bench_passes_backend_through(tmp_path):
    """bench -- --backend CMD: the tables come through that command, and
    the saved run says whose back end it measured."""
    need_build()
    cmd = foreign(tmp_path)
    out = tmp_path / 'run.json'
    r = bench_vsock('--boot', 'elf', '--sizes', '64', '--count', '20', '--no-stream',
                    '--json', str(out), '--no-save', '--', '--accel', 'tcg', '--backend', cmd)
    assert r.returncode == 0, r.stderr
    assert 'back end %s' % cmd in r.stdout.splitlines()[0]
    assert re.search(r'^default\s+64\s+20\s', r.stdout, re.M), r.stdout
    meta = json.loads(out.read_text())['meta']
    assert meta['vsock']['backend'] == cmd and meta['vsock']['target'][0] == '--uds'


@pytest.mark.parametrize('argv,why', [
    (['vs-linux', '--guests', 'ringside', '--configs', 'split poll'],
     "a poll configuration needs busy polling (our back end's --poll)"),
    (['rr', '--guests', 'ringside', '--backends', 'poll', '--no-udp'],
     "the poll back end mode needs busy polling (our back end's --poll)"),
    (['bench', '--tools'], "--tools needs TCP forwarding (our back end's --forward-tcp)"),
])
def test_what_a_back_end_lacks_is_refused_before_the_boot(tmp_path, argv, why):
    """A command that needs more of a back end than the three placeholders
    refuses yours in one line, before anything boots."""
    need_build()
    r = run_command(argv[0], *argv[1:], '--', '--backend', foreign(tmp_path), timeout=120)
    assert r.returncode == 2, (r.returncode, r.stderr)
    line = error_line(r, 'ringside ' + argv[0])
    assert why in line and "has not (our back end, the default, has)" in line, line
    assert r.stdout == ''


def test_soak_against_a_back_end_without_counters(tmp_path):
    """soak with a back end that has no control socket and no
    --uds-seqpacket: the checks that need neither run, the run says which
    it left out; with {control} its counters are checked again."""
    need_build()
    r = run_command('soak', '-t', '5', '--warmup-time', '2', '--conns', '4', '--no-save',
                    '--', '--backend', foreign(tmp_path), timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert 'ringside soak: ok' in lines, r.stdout
    assert sum(line.startswith('not checked: ') for line in lines) == 2, r.stdout
    assert re.search(r'^seqpacket\s+0\s', r.stdout, re.M), r.stdout
    r = run_command('soak', '-t', '5', '--warmup-time', '2', '--conns', '4', '--no-save',
                    '--', '--backend', foreign(tmp_path, control=True), timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert [line for line in r.stdout.splitlines() if line.startswith('not checked: ')] == [
        'not checked: SOCK_SEQPACKET connections (the back end has no --uds-seqpacket)']


# ------------------------------------------------------------------- --qemu

@pytest.mark.parametrize('how', ['missing', 'not-executable', 'env'])
def test_qemu_not_executable(tmp_path, how):
    """One line, exit 2, nothing started (not even the back end)."""
    path = tmp_path / 'qemu'
    if how == 'not-executable':
        path.write_text('#!/bin/sh\n')
    env = None
    args = ['--boot', 'elf', '--accel', 'tcg', '--vsock', '--cmd', 'info']
    if how == 'env':
        env = dict(os.environ, RINGSIDE_QEMU=str(path))
    else:
        args = ['--qemu', str(path)] + args
    r = run_launcher(*args, env=env, timeout=60)
    assert r.returncode == 2 and r.stdout == ''
    line = error_line(r)
    assert '%s %s: not an executable file' % ('RINGSIDE_QEMU' if how == 'env' else '--qemu',
                                              path) in line


def test_qemu_path_is_the_one_run(tmp_path):
    """--qemu PATH runs that binary (a wrapper that leaves a mark)."""
    require_image(ELF)
    mark = tmp_path / 'ran'
    wrapper = tmp_path / 'my-qemu'
    wrapper.write_text('#!/bin/sh\necho "$@" > %s\nexec qemu-system-x86_64 "$@"\n'
                       % shlex.quote(str(mark)))
    wrapper.chmod(0o755)
    r = run_launcher('--qemu', str(wrapper), '--boot', 'elf', '--accel', 'tcg',
                     '--cmd', 'uptime', timeout=300)
    assert r.returncode == 0, r.stderr
    assert '-kernel %s' % ELF in mark.read_text()
    r = run_launcher('--qemu', str(wrapper), '--dry-run', '--accel', 'tcg')
    assert shlex.split(r.stdout)[0] == str(wrapper)


# ---------------------------------------------------- the kernel's vhost-vsock

@pytest.mark.skipif(os.path.exists('/dev/vhost-vsock'), reason='this host has vhost-vsock')
def test_kernel_transport_without_the_device():
    r = run_launcher('--boot', 'elf', '--vsock', '--vsock-transport', 'kernel',
                     '--cmd', 'info', timeout=60)
    assert r.returncode == 2 and r.stdout == ''
    assert '/dev/vhost-vsock does not exist' in error_line(r)
    # the same line through a bench script's launcher options
    r = bench_vsock('--count', '5', '--', '--vsock-transport', 'kernel', timeout=60)
    assert r.returncode == 2 and '/dev/vhost-vsock does not exist' in error_line(r)


# ------------------------------------------------------------ bench --attach

@pytest.fixture(scope='module')
def booted_apart(tmp_path_factory):
    """A guest booted the way a user would (ringside run --vsock --vsock-uds
    X), with a TCP forward to its echo; bench only attaches."""
    require_image(ELF)
    require_image(BACKEND)
    uds = str(tmp_path_factory.mktemp('attach') / 'guest.vsock')
    port = free_tcp_port()
    g = Guest('--boot', 'elf', '--vsock', '--vsock-uds', uds,
              '--forward', '127.0.0.1:%d=%d' % (port, ECHO), name='attach')
    try:
        g.start()
        wait_vsock_up(uds, ECHO, timeout=120, prog='test')
        g.uds, g.port = uds, port
        yield g
        status = g.poweroff() if g.alive else g.status
    finally:
        g.stop()
    assert status == 0, 'QEMU exit status %r after poweroff' % status


def test_attach_uds_prints_both_tables(booted_apart):
    g = booted_apart
    r = bench_vsock('--attach', 'uds:' + g.uds, '--count', '50', '--time', '1')
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.splitlines()[0].startswith('ringside bench: attach uds:%s, ' % g.uds)
    assert 'ping-pong (host-guest-host round trip), ns' in out
    assert 'stream throughput, Gb/s' in out
    rows = re.findall(r'^default\s+(\d+)\s+50\s', out, re.M)
    assert rows == ['64', '512', '4096'], out
    streams = re.findall(r'^default\s+(h2g|g2h)\s+(\d+)\s+(\d+)\s+([\d.]+)', out, re.M)
    assert len(streams) == 8 and all(float(s[3]) > 0 for s in streams), out
    assert 'guest counters' not in out
    assert g.alive, 'bench --attach stopped the guest it did not start'


def test_attach_reverse_streams_guest_to_host_only(booted_apart):
    """-R: iperf3's reverse, the guest sends; every stream cell is g2h."""
    r = bench_vsock('--attach', 'uds:' + booted_apart.uds, '-R', '--no-pingpong', '--time', '1',
                    '-l', '4k', '-P', '1,2')
    assert r.returncode == 0, r.stderr
    streams = re.findall(r'^default\s+(\w+)\s+4096\s+(\d)\s+([\d.]+)', r.stdout, re.M)
    assert [s[:2] for s in streams] == [('g2h', '1'), ('g2h', '2')], r.stdout
    assert all(float(s[2]) > 0 for s in streams), r.stdout


def test_attach_tcp_pingpong(booted_apart):
    g = booted_apart
    r = bench_vsock('--attach', 'tcp:127.0.0.1:%d' % g.port, '--count', '50', '--no-stream',
                    '--sizes', '64,4k')
    assert r.returncode == 0, r.stderr
    assert 'attach tcp:127.0.0.1:%d' % g.port in r.stdout.splitlines()[0]
    assert re.findall(r'^default\s+(\d+)\s+50\s', r.stdout, re.M) == ['64', '4096']


@pytest.mark.parametrize('args,why', [
        (['--ab', 'fastpath=1,0'], '--ab'),
        (['--cost'], '--cost'),
        (['--tools'], '--tools'),
        (['--boot', 'elf'], '--boot'),
        (['--', '--machine', 'pc'], 'launcher options'),
])
def test_attach_refuses_what_needs_the_console(args, why):
    r = bench_vsock('--attach', 'uds:/nonexistent', *args, timeout=60)
    assert r.returncode == 2 and r.stdout == ''
    line = error_line(r, 'ringside bench')
    assert 'without its console' in line and why in line


@pytest.mark.parametrize('target', ['vsock:3', 'uds:', 'cid:2', 'cid:x', 'tcp:host',
                                    'tcp:127.0.0.1:0'])
def test_attach_bad_targets(target):
    r = bench_vsock('--attach', target, timeout=60)
    assert r.returncode == 2 and 'expected uds:PATH, cid:N or tcp:HOST:PORT' in error_line(
            r, 'ringside bench')


def test_attach_tcp_needs_no_stream():
    r = bench_vsock('--attach', 'tcp:127.0.0.1:1', timeout=60)
    assert r.returncode == 2 and '--no-stream' in error_line(r, 'ringside bench')
