# SPDX-License-Identifier: MIT
"""Every script in host/ answers --help with its usage, exit 0, and builds
nothing and boots nothing doing it (a `make` on PATH that only leaves a
mark proves the first; each answers in seconds, which proves the second)."""

import os
import subprocess

import pytest

from conftest import REPO

HOST = os.path.join(REPO, 'host')
SCRIPTS = sorted(f for f in os.listdir(HOST)
                 if os.path.isfile(os.path.join(HOST, f))
                 and os.access(os.path.join(HOST, f), os.X_OK))

# --help fits a screen of 25 lines at 80 columns; these do not yet
SCREEN = 25
LONG_HELP = {'bench-compare', 'bench-netrx', 'bench-tail', 'bench-vsock', 'exit-cost',
             'ringside-run'}


def test_every_script_is_here():
    assert len(SCRIPTS) > 20, SCRIPTS
    assert {'ringside-run', 'bench-vsock', 'compare', 'install-deps'} <= set(SCRIPTS)


@pytest.mark.parametrize('script', SCRIPTS)
def test_help(tmp_path, script):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    mark = tmp_path / 'make-ran'
    (bin_dir / 'make').write_text('#!/bin/sh\ntouch %s\nexit 1\n' % mark)
    (bin_dir / 'make').chmod(0o755)
    env = dict(os.environ, PATH='%s:%s' % (bin_dir, os.environ['PATH']), COLUMNS='80')
    r = subprocess.run([os.path.join(HOST, script), '--help'], env=env, capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert r.stdout.lstrip().startswith('usage:'), r.stdout[:200]
    assert not mark.exists(), '%s --help ran make' % script
    lines = r.stdout.rstrip('\n').split('\n')
    if script not in LONG_HELP:
        assert len(lines) <= SCREEN, '%s --help: %d lines' % (script, len(lines))
