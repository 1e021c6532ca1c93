# SPDX-License-Identifier: MIT
"""The commands fail fast: a bad option or an unusable path is one line at
parse time, before anything is built or booted. No QEMU runs here
(each test would fail within seconds if a guest were started: they all
wait at most a few seconds)."""

import json
import os
import signal
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRONT_DOOR = os.path.join(REPO, 'ringside')


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
def test_rings_help_builds_nothing(tmp_path, arg):
    env, mark = fake_make(tmp_path)
    r = subprocess.run([FRONT_DOOR, 'rings', arg], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith('usage: ringside rings'), r.stdout
    assert not mark.exists()


def test_bench_rings_builds_with_strict_aliasing():
    """tests/unit/bench.mk compiles the ring code at -O2 without
    -fno-strict-aliasing: it must build warning-free."""
    r = subprocess.run(['make', '-s', '-C', REPO, 'build/unit/bench_rings'],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert 'strict-aliasing' not in r.stderr


@pytest.mark.parametrize('args,line', [
    (['-n', '-5'], "argument -n/--buffers: expected a positive number, got '-5'"),
    (['--rounds', '0'], "argument --rounds: expected a positive number, got '0'"),
    (['--rounds', '65'], '--rounds takes 1..64, --batch 1..256'),
    (['-b', '4k'], "argument -b/--batch: expected a positive number, got '4k'"),
])
def test_rings_numbers_name_their_option(args, line):
    status, out, err = run_command('rings', *args)
    assert status == 2
    assert err == 'ringside rings: error: %s (see --help)\n' % line


def test_rings_runs_the_host_build(tmp_path):
    """A short run: every configuration, its table, and a cell per
    configuration with a sample per round."""
    path = tmp_path / 'r.json'
    status, out, err = run_command('rings', '-n', '20000', '--rounds', '2', '--json',
                                   str(path), '--no-save', timeout=600)
    assert status == 0, err
    doc = json.loads(path.read_text())
    assert len(doc['result']['rows']) == 8 and len(doc['cells']) == 16
    assert all(len(c['samples']) == 2 and min(c['samples']) > 0 for c in doc['cells'])
    assert out.count('\n') >= 10 and 'packed' in out and 'split' in out


def run_command(name, *args, timeout=60):
    """`ringside NAME ARGS`, expected to fail at once. In its own session:
    were it to boot a guest after all, QEMU and the back end go with it."""
    p = subprocess.Popen([FRONT_DOOR, name] + list(args), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         stdin=subprocess.DEVNULL)
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return p.returncode, out, err


JSON_COMMANDS = ['attacks', 'vs-linux', 'net', 'netrx', 'rr', 'seeds', 'tail', 'bench',
                 'boot-time', 'exits', 'faults', 'idle', 'reboots', 'soak', 'cost', 'rings']


@pytest.mark.parametrize('name', JSON_COMMANDS + ['cost-report', 'compare'])
def test_json_folder_checked_at_parse_time(tmp_path, name):
    path = str(tmp_path / 'missing' / 'x.json')
    extra = {'cost-report': ['block'], 'compare': ['a', 'b']}.get(name, [])
    status, out, err = run_command(name, '--json', path, *extra)
    assert status == 2
    assert err == ('ringside %s: error: argument --json: %s: folder %s does not exist '
                   '(see --help)\n' % (name, path, tmp_path / 'missing'))


@pytest.mark.parametrize('name', JSON_COMMANDS)
def test_csv_folder_checked_at_parse_time(tmp_path, name):
    path = str(tmp_path / 'missing' / 'x.csv')
    status, out, err = run_command(name, '--csv', path)
    assert status == 2
    assert err == ('ringside %s: error: argument --csv: %s: folder %s does not exist '
                   '(see --help)\n' % (name, path, tmp_path / 'missing'))


@pytest.mark.parametrize('name,option,value,what,shown', [(case + (None,))[:5] for case in [
    ('vs-linux', '--count', '-1', 'positive'),
    ('vs-linux', '--warmup', '-1', 'non-negative'),
    ('net', '--count', '-1', 'positive'),
    ('net', '--rounds', '0', 'positive'),
    ('netrx', '--time', '0', 'positive', '-t/--time'),
    ('rr', '-t', '-3', 'positive', '-t/--time'),
    ('tail', '--count', '0', 'positive'),
    ('bench', '--count', '-1', 'positive'),
    ('bench', '--time', 'nan', 'positive', '-t/--time'),
    ('boot-time', '--rounds', '0', 'positive'),
    ('exits', '--count', 'x', 'positive'),
    ('faults', '--every', '0', 'positive'),
    ('idle', '--time', '-1', 'positive', '-t/--time'),
    ('reboots', '--reboots', '0', 'positive'),
    ('soak', '--conns', '-4', 'positive'),
    ('soak', '--time', '0', 'positive', '-t/--time'),
    ('cost', '--rounds', '0', 'positive'),
]])
def test_counts_checked_at_parse_time(name, option, value, what, shown):
    """A bad count fails in one line naming the option (all its names,
    iperf3's first: -t/--time), before any boot."""
    status, out, err = run_command(name, option, value)
    assert status == 2
    assert err == ("ringside %s: error: argument %s: expected a %s number, got '%s' "
                   "(see --help)\n" % (name, shown or option, what, value))


@pytest.mark.parametrize('name,option,value', [
    ('bench', '--sizes', '4x'), ('bench', '-l', '0'),
    ('vs-linux', '--sizes', '64,big'), ('rr', '--sizes', '-1'),
    ('net', '--size', '1q'), ('tail', '--sizes', '0'),
    ('soak', '--max-size', 'k'), ('reboots', '--size', '2.5k'),
])
def test_sizes_checked_at_parse_time(name, option, value):
    """Sizes take k/m/g (powers of 1024) everywhere; a bad one fails at once."""
    status, out, err = run_command(name, option, value)
    assert status == 2, err
    assert "expected a positive size like 64, 4k or 1m, got '%s'" % value.split(',')[-1] \
        in err or "got '%s'" % value in err, err


def test_empty_run_is_an_error():
    status, out, err = run_command('bench', '--no-pingpong', '--no-stream')
    assert status == 2
    assert err == ('ringside bench: error: --no-pingpong and --no-stream leave nothing to '
                   'measure (see --help)\n')


def test_percentiles_too_few_samples_are_marked():
    sys.path.insert(0, os.path.join(REPO, 'host'))
    from ringside.commands.bench import percentile
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
