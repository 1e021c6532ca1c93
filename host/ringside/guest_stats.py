# SPDX-License-Identifier: MIT
"""The guest's console commands as data: each one a program reads has a
JSON form (`COMMAND ... json`, docs/console.md) that prints one line,
`COMMAND-json: ` and an object; it is parsed here, once, and nothing on
the host scrapes the text the commands print for people.

    json_of(console, 'mem chunks', 60)        # {'heap_in_use': ..., 'chunks': {...}}
    guest_stats(console, 60, 'virtio-vsock')  # `stats json virtio-vsock`
    wait_json(console, 'attack', 240)         # a line a running command prints later

`console` is anything with command(cmd, timeout) (and wait_for for
wait_json): a Console, a test's Guest.
"""

import json
import re

from .errors import LaunchError

MARKER = 'stats-json: '
ASKS = 3   # times a command is asked before a line that does not parse is an error


class StatsError(LaunchError):
    """The guest refused a command, or printed no object that parses."""


GuestError = StatsError


def marker(name):
    """The text before a command's object on its line: 'mem-json: '."""
    return '%s-json: ' % name


def parse_json_line(output, name='stats'):
    """The object on the last `NAME-json: ` line of `output` (a command's
    text). Lines without the marker (a log line the guest printed in
    between) are skipped, and so is anything before the marker on its line.
    """
    mark, found = marker(name), None
    for line in output.splitlines():
        at = line.find(mark)
        if at >= 0:
            found = line[at + len(mark):].strip()
    if found is None:
        raise StatsError('no %r line in the guest\'s answer: %r' % (mark.strip(), output[-300:]))
    try:
        obj = json.loads(found)
    except ValueError as e:
        raise StatsError('`%s json` printed a line that is not JSON (%s): %r'
                         % (name, e, found[:300]))
    if not isinstance(obj, dict):
        raise StatsError('`%s json` printed %r, not an object' % (name, found[:300]))
    return obj


def parse_stats(output):
    """parse_json_line for `stats json`."""
    return parse_json_line(output, 'stats')


def _ask(console, cmd, name, timeout):
    for attempt in range(1, ASKS + 1):
        out = console.command(cmd, timeout)
        if marker(name) not in out:
            # the guest's `error: ...` line, or whatever it said instead
            raise StatsError('%r: %s' % (cmd, out.strip()[-300:] or 'no output'))
        try:
            return parse_json_line(out, name)
        except StatsError:
            # The console gives bytes up after 5 s of a host that does not
            # read (kernel/console.c): a line with a hole in it does not
            # parse. Asking again reads the guest's state anew.
            if attempt == ASKS:
                raise


def json_of(console, cmd, timeout):
    """`CMD json`'s object: e.g. json_of(console, 'vsock trim', 60). Raises
    StatsError with the guest's own line when it refused the command."""
    return _ask(console, cmd + ' json', cmd.split()[0], timeout)


def wait_json(console, name, timeout, what=None):
    """The next `NAME-json: ` line the guest prints by itself (the end of
    `attack MODE ... json`), parsed; LaunchError if it does not come."""
    m = console.wait_for(re.escape(marker(name)) + r'([^\r\n]*)\r?\n', timeout,
                         what=what or "a '%s' line" % marker(name).strip())
    return parse_json_line(m.group(0), name)


def guest_stats(console, timeout, section=None):
    """{section: {counter: value, ...}, ...}: the guest's counters now
    (`stats json [SECTION]`); `section` asks for one section only (a
    shorter line), and the dict then holds just that key.
    """
    cmd = 'stats json' + (' ' + section if section else '')
    return _ask(console, cmd, 'stats', timeout)


def vsock_queue_sum(stats, counter):
    """`counter` (e.g. 'kicks', 'interrupts') summed over the virtio-vsock
    queues (rxq, txq, evq) of a guest_stats() dict."""
    return sum(q[counter] for q in stats['virtio-vsock']['queues'].values())


def cpus_online(console, timeout):
    """The guest's CPUs online (`info json`)."""
    return json_of(console, 'info', timeout)['cpus_online']


def config_changed(console, timeout):
    """{key: value} of the guest's keys that differ from their defaults
    (`config json`): what a run's header shows."""
    keys = json_of(console, 'config', timeout)
    return {k: v['value'] for k, v in sorted(keys.items()) if v['value'] != v['default']}


def config_all(console, timeout):
    """{key: value} of every key (`config json`): what a saved run keeps."""
    return {k: v['value'] for k, v in sorted(json_of(console, 'config', timeout).items())}


def virtio_irqs(console, timeout):
    """Interrupts on all of ringside's virtqueues (`virtio json`)."""
    return sum(q['interrupts'] for d in json_of(console, 'virtio', timeout)['devices']
               for q in d['queues'])


def virtio_bars(console, timeout):
    """(base, size) of the memory BARs of the virtio functions: the windows
    whose stores count as notifies (CostBlock.set_notify)."""
    return [(b['addr'], b['size']) for d in json_of(console, 'virtio', timeout)['devices']
            for b in d['bars']]
