# SPDX-License-Identifier: MIT
"""The host scripts fail fast: a bad option or an unusable path is one
line at parse time, before anything is built or booted. No QEMU runs here
(each test would fail within seconds if a guest were started: they all
wait at most a few seconds)."""

import os
import signal
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = os.path.join(REPO, 'host')


def fake_make(tmp_path):
    """A PATH whose `make` only leaves a mark: did the script build?"""
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    mark = tmp_path / 'make-ran'
    make = bin_dir / 'make'
    make.write_text('#!/bin/sh\ntouch %s\nexit 1\n' % mark)
    make.chmod(0o755)
    return dict(os.environ, PATH='%s:%s' % (bin_dir, os.environ['PATH'])), mark


@pytest.mark.parametrize('arg', ['--help', '-h'])
def test_bench_rings_help_builds_nothing(tmp_path, arg):
    env, mark = fake_make(tmp_path)
    r = subprocess.run([os.path.join(HOST, 'bench-rings'), arg], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith('usage: host/bench-rings'), r.stdout
    assert not mark.exists()


def test_bench_rings_builds_with_strict_aliasing():
    """tests/unit/bench.mk compiles the ring code at -O2 without
    -fno-strict-aliasing: it must build warning-free."""
    r = subprocess.run(['make', '-s', '-C', REPO, 'build/unit/bench_rings'],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert 'strict-aliasing' not in r.stderr


@pytest.mark.parametrize('args,line', [
    (['-n', '-5'], "-n: expected a positive number, got '-5'"),
    (['-r', '0'], "-r: expected a number from 1 to 64, got '0'"),
    (['-b', '4k'], "-b: expected a number from 1 to 256, got '4k'"),
])
def test_bench_rings_numbers_name_their_option(args, line):
    r = subprocess.run([os.path.join(HOST, 'bench-rings')] + args, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2
    assert r.stderr == 'bench_rings: %s\n' % line


def run_script(name, *args, timeout=60):
    """host/NAME ARGS, expected to fail at once. In its own session: were
    it to boot a guest after all, QEMU and the back end go with it."""
    p = subprocess.Popen([os.path.join(HOST, name)] + list(args), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         stdin=subprocess.DEVNULL)
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return p.returncode, out, err


JSON_SCRIPTS = ['attack-matrix', 'bench-compare', 'bench-net', 'bench-netrx', 'bench-rr',
                'bench-seeds', 'bench-tail', 'bench-vsock', 'boot-time', 'efi-boot-time',
                'exit-cost', 'fault-matrix', 'idle-cpu', 'reboot-endurance', 'soak']


@pytest.mark.parametrize('script', JSON_SCRIPTS + ['cost-report'])
def test_json_folder_checked_at_parse_time(tmp_path, script):
    path = str(tmp_path / 'missing' / 'x.json')
    extra = ['block'] if script == 'cost-report' else []
    status, out, err = run_script(script, '--json', path, *extra)
    assert status == 2
    assert err == ('%s: error: argument --json: %s: folder %s does not exist (see --help)\n'
                   % (script, path, tmp_path / 'missing'))


@pytest.mark.parametrize('script', JSON_SCRIPTS)
def test_csv_folder_checked_at_parse_time(tmp_path, script):
    path = str(tmp_path / 'missing' / 'x.csv')
    status, out, err = run_script(script, '--csv', path)
    assert status == 2
    assert err == ('%s: error: argument --csv: %s: folder %s does not exist (see --help)\n'
                   % (script, path, tmp_path / 'missing'))


@pytest.mark.parametrize('script,option,value,what,shown', [(case + (None,))[:5] for case in [
    ('bench-compare', '--count', '-1', 'positive'),
    ('bench-compare', '--warmup', '-1', 'non-negative'),
    ('bench-net', '--count', '-1', 'positive'),
    ('bench-net', '--rounds', '0', 'positive'),
    ('bench-netrx', '--seconds', '0', 'positive', '-t/--time/--seconds'),
    ('bench-rr', '-t', '-3', 'positive', '-t/--time'),
    ('bench-tail', '--count', '0', 'positive'),
    ('bench-vsock', '--count', '-1', 'positive'),
    ('bench-vsock', '--time', 'nan', 'positive', '-t/--time'),
    ('boot-time', '--runs', '0', 'positive'),
    ('efi-boot-time', '--runs', '-2', 'positive'),
    ('exit-cost', '--count', 'x', 'positive'),
    ('fault-matrix', '--every', '0', 'positive'),
    ('idle-cpu', '--time', '-1', 'positive', '-t/--time/--seconds'),
    ('reboot-endurance', '--reboots', '0', 'positive'),
    ('soak', '--conns', '-4', 'positive'),
    ('soak', '--duration', '0', 'positive', '-t/--time/--duration'),
]])
def test_counts_checked_at_parse_time(script, option, value, what, shown):
    """A bad count fails in one line naming the option (all its names,
    iperf3's first: -t/--time/--seconds), before any boot."""
    status, out, err = run_script(script, option, value)
    assert status == 2
    assert err == ("%s: error: argument %s: expected a %s number, got '%s' (see --help)\n"
                   % (script, shown or option, what, value))


@pytest.mark.parametrize('script,option,value', [
    ('bench-vsock', '--sizes', '4x'), ('bench-vsock', '-l', '0'),
    ('bench-compare', '--sizes', '64,big'), ('bench-rr', '--sizes', '-1'),
    ('bench-net', '--size', '1q'), ('bench-tail', '--size', '0'),
    ('soak', '--max-size', 'k'), ('reboot-endurance', '--size', '2.5k'),
])
def test_sizes_checked_at_parse_time(script, option, value):
    """Sizes take k/m/g (powers of 1024) everywhere; a bad one fails at once."""
    status, out, err = run_script(script, option, value)
    assert status == 2, err
    assert "expected a positive size like 64, 4k or 1m, got '%s'" % value.split(',')[-1] \
        in err or "got '%s'" % value in err, err


def test_empty_run_is_an_error():
    status, out, err = run_script('bench-vsock', '--no-pingpong', '--no-stream')
    assert status == 2
    assert err == ('bench-vsock: error: --no-pingpong and --no-stream leave nothing to '
                   'measure (see --help)\n')


def test_percentiles_too_few_samples_are_marked():
    sys.path.insert(0, HOST)
    from ringside.bench_vsock import percentile
    assert percentile(1234.0, 99, 0.99) is None
    assert percentile(1234.0, 100, 0.99) == 1234.0
    assert percentile(1234.0, 999, 0.999) is None
    assert percentile(1234.0, 1000, 0.999) == 1234.0


@pytest.mark.parametrize('binary', ['ringside-bench', 'ringside-vhost-vsock'])
def test_binaries_answer_help(binary):
    r = subprocess.run([os.path.join(REPO, 'build', 'host', binary), '--help'],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith('usage: %s ' % binary), r.stdout[:200]
