# SPDX-License-Identifier: MIT
"""ringside's hostile driver as the attack matrix drives it: its modes
(`attack list json`), an attack started with `json`, and its end, a line
`attack-json: {...}` the guest prints when the attack is over."""

import re

from .errors import LaunchError
from .guest_stats import json_of, parse_json_line

DONE_LINE = re.compile(r'attack-json: [^\r\n]*\r?\n')


def attack_modes(console, kind='vsock'):
    """The guest's modes of `kind` (vsock, net), from `attack list json`."""
    return [m['name'] for m in json_of(console, 'attack list', 60)['modes']
            if (m['ring'] == 'net') == (kind == 'net')]


def start(console, mode, every, count):
    """`attack MODE every=MS count=N json`: its end comes as a line later."""
    out = console.command('attack %s every=%d count=%d json' % (mode, every, count), 60)
    if out.lstrip().startswith('error:'):
        raise LaunchError('attack %s: %s' % (mode, out.strip()))


def done(console, mark):
    """The attack's end printed after byte `mark` of the console, as a dict
    (mode, outcome, sent, count, transport_resets), or None yet."""
    m = DONE_LINE.search(console.text, mark)
    return parse_json_line(m.group(0), 'attack') if m else None


def done_line(end):
    """The end as one line of evidence, as the guest's own log says it."""
    line = 'attack %s: %s: sent %d of %d' % (
            end['mode'], end['outcome'], end['sent'], end['count'])
    if 'transport_resets' in end:
        line += ', transport resets %d' % end['transport_resets']
    return line


def was_reset(end):
    """The device fell silent and the guest reset it."""
    return end['outcome'].endswith(': reset')


def not_for_ring(end):
    return end['outcome'].startswith('not for this ring')
