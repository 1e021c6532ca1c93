# SPDX-License-Identifier: MIT
"""ringside bench's stream directions on its command line: both by default,
-R/--reverse (iperf3's: the server, here the guest, sends) only g2h, and
one line of error where -R meets --dirs or has no stream to reverse."""

import pytest

from ringside.commands.bench import parse_args
from conftest import usage_error


@pytest.mark.parametrize('argv,dirs', [
    ([], ['h2g', 'g2h']),
    (['--dirs', 'h2g'], ['h2g']),
    (['-R'], ['g2h']),
    (['--reverse', '--no-pingpong'], ['g2h']),
])
def test_directions(argv, dirs):
    assert parse_args(argv).dirs == dirs


@pytest.mark.parametrize('argv,error', [
    (['-R', '--dirs', 'g2h'], '-R is --dirs g2h: give one of them'),
    (['-R', '--dirs', 'h2g,g2h'], '-R is --dirs g2h: give one of them'),
    (['-R', '--no-stream'], '-R reverses the stream cells: not with --no-stream'),
    (['--dirs', 'up'], '--dirs takes h2g and/or g2h'),
])
def test_bad_directions_are_one_line(capsys, argv, error):
    assert usage_error(capsys, parse_args, argv) == \
        'ringside bench: error: %s (see --help)\n' % error
