# SPDX-License-Identifier: MIT
"""Tests of the host package and the repository's generated files: no
QEMU, no build (run: /usr/bin/python3 -m pytest -q tests/host)."""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'host'))


def usage_error(capsys, parse, argv):
    """What parse(argv) printed when it refused argv as a usage error
    (status 2), the one stderr line."""
    with pytest.raises(SystemExit) as e:
        parse(argv)
    assert e.value.code == 2
    return capsys.readouterr().err
