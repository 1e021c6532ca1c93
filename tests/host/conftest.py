# SPDX-License-Identifier: MIT
"""Tests of the host package and the repository's generated files: no
QEMU, no build (run: /usr/bin/python3 -m pytest -q tests/host)."""

import os
import re
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'host'))
sys.path.insert(0, os.path.join(REPO, 'tests'))

from skip_gate import pytest_runtest_logreport, pytest_sessionfinish  # noqa: E402,F401


def usage_error(capsys, parse, argv):
    """What parse(argv) printed when it refused argv as a usage error
    (status 2), the one stderr line."""
    with pytest.raises(SystemExit) as e:
        parse(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


class PrintedConsole:
    """A guest console that has already printed `text`: what is sent is
    recorded, wait_for() finds its pattern there or fails the test."""

    def __init__(self, text):
        self.text, self.sent = text, []

    def send(self, line):
        self.sent.append(line)

    def wait_for(self, pattern, timeout, what=None):
        m = re.search(pattern, self.text)
        assert m, 'no %s in %r' % (what or pattern, self.text)
        return m


class _Parsed(Exception):
    """parser_of(): the parser a command built, caught at its parse."""

    def __init__(self, parser):
        super().__init__()
        self.parser = parser


def parser_of(name):
    """The argparse parser `ringside NAME` builds, with every option it
    declares: its main runs until it parses its command line, and stops
    there (nothing is built, checked or booted)."""
    from ringside import cli, commands

    def caught(self, args=None, namespace=None):
        raise _Parsed(self)
    cmd = commands.discover()[name]
    saved = cli.Parser.parse_args
    cli.Parser.parse_args = caught
    try:
        cmd.main([])
    except _Parsed as e:
        return e.parser
    finally:
        cli.Parser.parse_args = saved
    raise AssertionError('%s parsed no command line' % name)
