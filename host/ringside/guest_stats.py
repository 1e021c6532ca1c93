# SPDX-License-Identifier: MIT
"""The guest's counters as a dict: `stats json` on the console, parsed once.

The guest prints one line, `stats-json: ` and a JSON object with one member
a section (docs/console.md lists every key):

    {"virtio-vsock": {"queues": {"txq": {"kicks": 5, ...}, ...}, ...},
     "services": {"echo": {"bytes_in": 64, ...}, ...}, "net": {...}, ...}

Every host program and test reads counters through guest_stats(); none
scrapes the text `stats` prints for people.
"""

import json
import re

from .errors import LaunchError

MARKER = 'stats-json: '
ASKS = 3   # times `stats json` is asked before a line that does not parse is an error


class StatsError(LaunchError):
    """The guest refused `stats json` or printed no object that parses."""


def parse_stats(output):
    """The object on the last `stats-json: ` line of `output` (a command's
    text). Lines without the marker (a log line the guest printed in
    between) are skipped, and so is anything before the marker on its line.
    """
    found = None
    for line in output.splitlines():
        at = line.find(MARKER)
        if at >= 0:
            found = line[at + len(MARKER):].strip()
    if found is None:
        raise StatsError('no %r line in the guest\'s answer: %r' % (MARKER.strip(), output[-300:]))
    try:
        obj = json.loads(found)
    except ValueError as e:
        raise StatsError('`stats json` printed a line that is not JSON (%s): %r'
                         % (e, found[:300]))
    if not isinstance(obj, dict):
        raise StatsError('`stats json` printed %r, not an object' % found[:300])
    return obj


def guest_stats(console, timeout, section=None):
    """{section: {counter: value, ...}, ...}: the guest's counters now.

    `console` is anything with command(cmd, timeout) (a Console, the tests'
    Guest); `section` asks for one section only (a shorter line), and the
    dict then holds just that key.
    """
    cmd = 'stats json' + (' ' + section if section else '')
    for attempt in range(1, ASKS + 1):
        out = console.command(cmd, timeout)
        if MARKER not in out:
            # the guest's `error: ...` line, or whatever it said instead
            raise StatsError('%r: %s' % (cmd, out.strip()[-300:] or 'no output'))
        try:
            return parse_stats(out)
        except StatsError:
            # The console gives bytes up after 5 s of a host that does not
            # read (kernel/console.c): a line with a hole in it does not
            # parse. The counters only grow; asking again reads them anew.
            if attempt == ASKS:
                raise


def vsock_queue_sum(stats, counter):
    """`counter` (e.g. 'kicks', 'interrupts') summed over the virtio-vsock
    queues (rxq, txq, evq) of a guest_stats() dict."""
    return sum(q[counter] for q in stats['virtio-vsock']['queues'].values())


def cpus_online(console, timeout):
    """The guest's CPUs online, from `info`'s `cpus: N online of M in MADT`."""
    out = console.command('info', timeout)
    m = re.search(r'^cpus: (\d+) online', out, re.M)
    if not m:
        raise StatsError("no cpus line in the guest's `info`: %r" % out[-300:])
    return int(m.group(1))
