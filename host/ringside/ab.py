# SPDX-License-Identifier: MIT
"""A/B in one boot: --ab KEY=A,B switches a guest key between values with
`set`, cell by cell, so both sides of a switch are measured interleaved
on the same QEMU, back end and host load."""

import argparse

from .benchlib import wait_target


def ab_switch(text):
    """--ab KEY=A,B[,C...] -> (key, [values])."""
    key, sep, values = text.partition('=')
    choices = values.split(',')
    if not sep or not key or len(choices) < 2 or not all(choices):
        raise argparse.ArgumentTypeError('expected KEY=A,B (e.g. fastpath=1,0)')
    return key, choices


def variants(ab):
    """Every combination of the --ab values, as lists of (key, value)."""
    combos = [[]]
    for key, values in ab:
        combos = [c + [(key, v)] for c in combos for v in values]
    return combos


def label(combo):
    return ' '.join('%s=%s' % kv for kv in combo) or 'default'


class Switcher:
    """The guest's console, for `set` between cells."""

    def __init__(self, console, prog, timeout=60):
        self.console, self.prog, self.timeout = console, prog, timeout

    def command(self, cmd):
        """Run `cmd`; the guest's `error:` line is the end of the run."""
        out = self.console.command(cmd, self.timeout)
        if out.lstrip().startswith('error:'):
            raise SystemExit('%s: guest rejected %r: %s' % (self.prog, cmd, out.strip()))
        return out

    def apply(self, combo, target):
        """`set` every KEY=VALUE of `combo`; after a change, wait until vsock
        answers through `target` (ringside-bench's ['--uds', PATH] or
        ['--cid', N]) again: a switch may reset the device."""
        changed = False
        for key, value in combo:
            before = self.command('get %s' % key).strip()
            self.command('set %s=%s' % (key, value))
            changed |= before != '%s=%s' % (key, value)
        if changed:
            wait_target(target, self.prog)
