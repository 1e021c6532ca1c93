# SPDX-License-Identifier: MIT
"""One option vocabulary: the measurement options (ringside/measure.py)
are declared once and mean the same in every command that has them, and
every option README.md and docs/ name exists in the command they give it
to (launcher options after `--`, or in RUN_ARGS, are `run`'s)."""

import glob
import os
import re
import shlex

import pytest

from conftest import REPO, parser_of
from ringside import commands, measure

FOUND = commands.discover()
PARSERS = {}


def parser(name):
    if name not in PARSERS:
        PARSERS[name] = parser_of(name)
    return PARSERS[name]


def options(name):
    return set(measure.declared(parser(name)))


@pytest.mark.parametrize('name', sorted(FOUND))
def test_shared_options_come_from_one_declaration(name):
    """A command that takes -t, -P, --count, --guests, ... takes it from
    measure.add: the same type, meaning and help in every command."""
    own = {flag for flag, shared in measure.declared(parser(name)).items()
           if flag in measure.shared_names() and shared is None}
    assert not own, '%s declares %s itself' % (name, ', '.join(sorted(own)))
    for action in parser(name)._actions:
        shared = getattr(action, 'shared', None)
        if shared:
            flags, kw, text = measure.OPTIONS[shared]
            assert tuple(action.option_strings) == flags
            assert action.help.startswith(text) and action.type is kw.get('type', None)


def test_the_measuring_commands_share_the_vocabulary():
    """The options README.md promises everywhere are where they apply."""
    for name in ('bench', 'vs-linux', 'rr', 'net', 'tail', 'exits', 'boot-time', 'rings'):
        assert {'--json', '--csv', '--no-save', '--rounds'} <= options(name) or \
            name in ('exits', 'rr', 'tail') and {'--json', '--csv', '--no-save'} <= options(name)
    for name in ('bench', 'vs-linux'):
        assert {'-t', '-P', '-l', '-R', '--count', '--warmup', '--sizes', '--cost',
                '--exits'} <= options(name), name


def pages():
    return [os.path.join(REPO, 'README.md')] + sorted(
        glob.glob(os.path.join(REPO, 'docs', '**', '*.md'), recursive=True))


# `./ringside CMD ...`, `ringside CMD ...` and make's *_ARGS, up to the end
# of a code span or line
INVOCATION = re.compile(r'(?:\./)?\bringside ([a-z][a-z0-9-]*)((?: [^`\n|]*)?)')
MAKE_ARGS = re.compile(r"make (\w[\w-]*) (RUN|BENCH|SEEDS)_ARGS='([^']*)'")
MAKE_TARGET = {'RUN': 'run', 'BENCH': 'bench', 'SEEDS': 'seeds'}


def words(text):
    try:
        return shlex.split(text.replace('\\\n', ' '), comments=True)
    except ValueError:
        return text.split()


def named(name, argv):
    """(command, option) pairs the words `argv` of `ringside NAME` name."""
    out = []
    if name == 'nested':
        # its own options, then a command of ours (or any program)
        while argv and argv[0].startswith('-'):
            out.append((name, argv.pop(0)))
            if out[-1][1] in ('--timeout', '--memory', '--smp', '--cpu', '--stuck', '--log',
                              '--kernel'):
                argv = argv[1:]
        if argv and argv[0] in FOUND:
            return out + named(argv[0], argv[1:])
        return out
    target = name
    for w in argv:
        w = w.lstrip('[(')       # `[--rings split,packed]`: optional
        if w == '--':
            target = 'run'
        elif re.match(r'--?[A-Za-z]', w):
            out.append((target, re.split(r'[=\[\]]', w)[0]))
    return out


def documented():
    found = []
    for page in pages():
        with open(page) as f:
            text = f.read()
        text = text.replace('\\\n', ' ')
        for m in INVOCATION.finditer(text):
            if m.group(1) in FOUND:
                found += [(page, cmd, opt)
                          for cmd, opt in named(m.group(1), words(m.group(2)))]
        for m in MAKE_ARGS.finditer(text):
            found += [(page, cmd, opt) for cmd, opt in
                      named(MAKE_TARGET[m.group(2)], words(m.group(3)))]
    return found


def test_every_documented_option_exists():
    seen = documented()
    assert len(seen) > 100, len(seen)
    bad = ['%s: ringside %s %s' % (os.path.relpath(page, REPO), cmd, opt)
           for page, cmd, opt in seen if opt not in options(cmd)]
    assert not bad, '\n'.join(bad)


def test_the_docs_use_the_front_door():
    """Not the old names of host/ (links to the front door, kept for
    scripts that have them): the commands."""
    aliases = sorted(a for c in FOUND.values() for a in c.aliases)
    old = re.compile(r'host/(%s)\b' % '|'.join(map(re.escape, aliases)))
    bad = ['%s: %s' % (os.path.relpath(page, REPO), m.group(0)) for page in pages()
           for m in old.finditer(open(page).read())]
    assert not bad, '\n'.join(bad)
