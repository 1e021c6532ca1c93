# SPDX-License-Identifier: MIT
"""The Linux baseline guests by name: --guests parsing, their paths from one
place, and bench-compare's row and table with 6.1 and 6.12 in one run."""

import argparse
import io
import contextlib

import pytest

from ringside.commands.vs_linux import print_rows, row_values
from ringside.cli import guest_list
from ringside.images import LINUX_GUESTS, REPO, linux_guest


def test_guest_list_takes_known_names_once_in_order():
    assert guest_list('ringside,linux,linux-6.12') == ['ringside', 'linux', 'linux-6.12']
    assert guest_list(' linux-6.12 , linux ') == ['linux-6.12', 'linux']
    for bad in ('', 'linux,linux', 'linux-6.2', 'ringside,windows'):
        with pytest.raises(argparse.ArgumentTypeError):
            guest_list(bad)


def test_every_linux_guest_has_its_make_target_folder():
    assert LINUX_GUESTS['linux'] == 'linux-guest'
    for name, folder in LINUX_GUESTS.items():
        kernel, initrd = linux_guest(name)
        assert kernel == '%s/build/%s/bzImage' % (REPO, folder)
        assert initrd == '%s/build/%s/initrd' % (REPO, folder)
    with open('%s/host/linux-guest/linux-guest.mk' % REPO) as f:
        mk = f.read()
    for folder in LINUX_GUESTS.values():
        assert '\n%s:' % folder in mk


def test_row_two_guests_unchanged():
    """ringside,linux: [ringside, linux, ratio, lowest, highest] as before
    (bench-seeds reads rows[1:4])."""
    row = row_values({'ringside': [10, 20, 30], 'linux': [20, 20, 20]}, ['ringside', 'linux'])
    assert row == [20, 20, 1.0, 0.5, 1.5]


def test_row_with_both_linux_guests_ends_with_after_over_before():
    guests = ['ringside', 'linux', 'linux-6.12']
    cols = {'ringside': [10.0], 'linux': [40.0], 'linux-6.12': [30.0]}
    row = row_values(cols, guests)
    assert row == [10.0, 40.0, 0.25, 0.25, 0.25, 30.0, 10 / 30, 10 / 30, 10 / 30,
                   0.75, 0.75, 0.75]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_rows([['split kernel', ('p50 ns', 64, '')] + row], guests)
    head, line = out.getvalue().splitlines()
    assert head.split()[-4:] == ['rs/6.12', 'range', '6.12/6.1', 'range']
    assert line.split()[-2:] == ['0.75', '0.75-0.75']
