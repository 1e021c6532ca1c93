# SPDX-License-Identifier: MIT
"""Failures worth one line on stderr, their exit statuses, and that line."""

import sys

PROG = 'ringside run'   # the launcher's name in its messages

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 124


class LaunchError(Exception):
    """A failure worth one line on stderr; `status` is the exit status."""
    status = EXIT_ERROR


class UsageError(LaunchError):
    status = EXIT_USAGE


class GuestTimeout(LaunchError):
    status = EXIT_TIMEOUT


class GuestExited(LaunchError):
    """The console closed (QEMU exited) before the awaited output came."""


def log(msg):
    sys.stderr.write('%s: %s\n' % (PROG, msg))
    sys.stderr.flush()
