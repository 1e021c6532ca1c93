# SPDX-License-Identifier: MIT
"""The host scripts fail fast: a bad option or an unusable path is one
line at parse time, before anything is built or booted. No QEMU runs here
(each test would fail within seconds if a guest were started: they all
wait at most a few seconds)."""

import os
import subprocess

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
