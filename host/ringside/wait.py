# SPDX-License-Identifier: MIT
"""The one deadline loop: ask until the answer is yes or the time is up.

For what has no event to wait on (a file a back end writes, a guest
counter, a socket that starts listening); a console line or a process's
exit is waited for on the event itself (Console.wait_for, Popen.wait).

    until(lambda: backend.live_conns() == 0, 60, 'the back end to close its connections')
"""

import time

from .errors import LaunchError


class WaitTimeout(LaunchError):
    """The condition did not hold within the time given."""


def until(check, timeout, what, interval=0.1, fail=None):
    """check()'s first true value, asked every `interval` seconds for up to
    `timeout` seconds. Raises WaitTimeout ('no WHAT within T s') then, or
    LaunchError(fail()) as soon as fail() returns a reason to give up (a
    process that exited)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        why = fail() if fail else None
        if why:
            raise LaunchError('%s while waiting for %s' % (why, what))
        left = deadline - time.monotonic()
        if left <= 0:
            raise WaitTimeout('no %s within %g s' % (what, timeout))
        time.sleep(min(interval, left))


def poll_for(check, timeout, interval=0.1):
    """check()'s first true value within `timeout` seconds, else its last
    (false) one: for a wait whose end is a result, not an error."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
