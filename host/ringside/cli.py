# SPDX-License-Identifier: MIT
"""The command line of every script: one parser (errors on one line, exit
status 2, before anything is built or booted) and the option types that
name the option and the value they refuse."""

import argparse
import os
import re
import sys

from .errors import EXIT_USAGE
from .images import LINUX_GUESTS


SCREEN = 25   # lines of --help: one screen
# The end of the --help of a command that boots: where launcher options go.
LAUNCHER_EPILOG = ('After "--": launcher options for every boot (ringside run --help-all),\n'
                   'e.g. -- --backend CMD, -- --qemu PATH, -- --vsock-transport kernel.')


class ScreenHelp(argparse.RawDescriptionHelpFormatter):
    """--help on one screen: each option's help on its own line, beside
    the option; a description or epilog keeps its own line breaks."""

    def __init__(self, prog):
        super().__init__(prog, max_help_position=30, width=80)


class Parser(argparse.ArgumentParser):
    """argparse with errors on one line (status 2, before anything is
    built or booted) and help in two sizes: --help shows the options a
    first run needs, on one screen; an option added with more=True is
    left to --help-all, which shows every option. Nothing is hidden."""

    def __init__(self, *args, **kw):
        kw.setdefault('formatter_class', ScreenHelp)
        kw['add_help'] = False
        # a module's first docstring line, "bench: boot ...", as "Boot ..."
        name = (kw.get('prog') or '').split(' ')[-1] + ': '
        desc = kw.get('description') or ''
        if name != ': ' and desc.startswith(name):
            rest = desc[len(name):]
            # "ns per buffer ..." stays: a unit is not capitalised
            kw['description'] = rest if rest.split(' ')[0] in ('ns',) else \
                rest[0].upper() + rest[1:]
        super().__init__(*args, **kw)
        self._more = []
        self.add_argument('-h', '--help', action='help', help='this help')
        self.add_argument('--help-all', action=_HelpAll, nargs=0,
                          help='every option, --help\'s and the rest', more=True)

    def add_argument(self, *args, more=False, **kw):
        action = super().add_argument(*args, **kw)
        if more:
            self._more.append(action)
        return action

    def error(self, message):
        sys.stderr.write('%s: error: %s (see --help)\n' % (self.prog, message))
        sys.exit(EXIT_USAGE)

    def format_help(self, every=False):
        hidden = [] if every else [a for a in self._more if a.help != argparse.SUPPRESS]
        saved = [a.help for a in hidden]
        for a in hidden:
            a.help = argparse.SUPPRESS
        try:
            text = super().format_help()
        finally:
            for a, h in zip(hidden, saved):
                a.help = h
        if hidden:
            text += '%d more option%s: --help-all\n' % (len(hidden), 's' * (len(hidden) > 1))
        return text

    def print_help_all(self):
        self._print_message(self.format_help(every=True), sys.stdout)


class _HelpAll(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        parser.print_help_all()
        parser.exit()


# Option types that fail at parse time, before anything is built or booted,
# naming the option (argparse adds "argument --count: ").

def _number(text, kind, positive):
    try:
        value = kind(text)
    except ValueError:
        value = None
    # NaN compares false with everything, so it fails here too
    if value is None or abs(value) == float('inf') or \
            not (value > 0 if positive else value >= 0):
        raise argparse.ArgumentTypeError('expected a %s number, got %r'
                                         % ('positive' if positive else 'non-negative', text))
    return value


def positive_int(text):
    return _number(text, int, True)


def nonneg_int(text):
    """0 allowed: warm-up rounds, tolerances, CPU numbers."""
    return _number(text, int, False)


def positive_float(text):
    """Seconds and the like: more than 0."""
    return _number(text, float, True)


def nonneg_float(text):
    return _number(text, float, False)


SIZE_SUFFIXES = {'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}


def size(text):
    """A positive byte count: 4096, 4k, 64K, 1m, 1g (powers of 1024)."""
    word = text.strip().lower()
    scale = SIZE_SUFFIXES.get(word[-1:], 1)
    if scale > 1:
        word = word[:-1]
    try:
        value = int(word) * scale
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError('expected a positive size like 64, 4k or 1m, got %r'
                                         % text)
    return value


def size_list(text):
    """Sizes, comma separated: 64,512,4k."""
    return [size(word) for word in text.split(',')]


def int_list(text):
    """Positive counts, comma separated: 1,4."""
    try:
        values = [int(w) for w in text.split(',')]
    except ValueError:
        raise argparse.ArgumentTypeError('expected numbers like 1,4, got %r' % text)
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError('expected positive numbers, got %r' % text)
    return values


def csv_list(kind, allowed=None):
    """A type for comma-separated values of `kind`, each one of `allowed`."""
    def parse(text):
        items = [x for x in text.split(',') if x]
        out = []
        for x in items:
            v = kind(x)
            if allowed and v not in allowed:
                raise argparse.ArgumentTypeError('%r not one of %s' % (x, allowed))
            out.append(v)
        if not out:
            raise argparse.ArgumentTypeError('empty list')
        return out
    return parse


def shape(text):
    """One SMPxQUEUES point: vCPUs (-smp) x virtio-net queue pairs, 2x1."""
    m = re.fullmatch(r'\s*(\d+)x(\d+)\s*', text)
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise argparse.ArgumentTypeError('expected SMPxQUEUES like 1x1,2x2, got %r' % text)
    return int(m.group(1)), int(m.group(2))


def shape_list(text):
    """Shapes, comma separated, each once: 1x1,2x1,2x2."""
    shapes = [shape(w) for w in text.split(',')]
    if len(set(shapes)) != len(shapes):
        raise argparse.ArgumentTypeError('a shape twice in %r' % text)
    return shapes


def shape_label(point):
    """(2, 1) -> '2x1'."""
    return '%dx%d' % point


GUESTS = ('ringside',) + tuple(LINUX_GUESTS)


def guest_list(text):
    """--guests: ringside and the Linux guests (images.LINUX_GUESTS), comma
    separated, each once, in the order they boot: ringside,linux,linux-6.12."""
    names = [w.strip() for w in text.split(',') if w.strip()]
    bad = [w for w in names if w not in GUESTS]
    if not names or bad or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError('expected some of %s, each once, got %r'
                                         % (','.join(GUESTS), text))
    return names


def output_file(text):
    """A file to write at the end (--json FILE): its folder must exist and
    be writable now, not after the whole run."""
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError('%s: folder %s does not exist' % (text, folder))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError('%s: folder %s is not writable' % (text, folder))
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError('%s is a folder' % text)
    return text
