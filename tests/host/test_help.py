# SPDX-License-Identifier: MIT
"""The front door: `ringside --help` lists every command on one screen;
every command answers --help with its usage on one screen and --help-all
with every option (nothing hidden), exit 0, building nothing and booting
nothing (a `make` on PATH that only leaves a mark proves the first; each
answers in seconds, which proves the second); the old names in host/ are
links that run their command and print nothing different."""

import os
import subprocess

import pytest

from conftest import REPO, parser_of
from ringside import commands
from ringside.cli import SCREEN

FRONT_DOOR = os.path.join(REPO, 'ringside')
FOUND = commands.discover()
WIDTH = 80


def run(argv, tmp_path):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir(exist_ok=True)
    mark = tmp_path / 'make-ran'
    (bin_dir / 'make').write_text('#!/bin/sh\ntouch %s\nexit 1\n' % mark)
    (bin_dir / 'make').chmod(0o755)
    env = dict(os.environ, PATH='%s:%s' % (bin_dir, os.environ['PATH']), COLUMNS='80')
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert not mark.exists(), '%s ran make' % ' '.join(argv)
    return r


def screen(text):
    lines = text.rstrip('\n').split('\n')
    long = [line for line in lines if len(line) > WIDTH]
    return len(lines), long


def test_overview_lists_every_command_on_one_screen(tmp_path):
    r = run([FRONT_DOOR, '--help'], tmp_path)
    assert r.returncode == 0, r.stderr
    n, long = screen(r.stdout)
    assert n <= SCREEN and not long, r.stdout
    listed = {line[9:].split()[0] for line in r.stdout.splitlines()[2:]}
    assert listed == set(FOUND) and len(FOUND) >= 20, r.stdout


def test_no_command_is_a_usage_error(tmp_path):
    r = run([FRONT_DOOR], tmp_path)
    assert r.returncode == 2 and r.stdout.startswith('usage: ringside COMMAND')
    r = run([FRONT_DOOR, 'benhc'], tmp_path)
    assert r.returncode == 2
    assert r.stderr == ("ringside: error: unknown command 'benhc' (did you mean 'bench'?) "
                        "(see ringside --help)\n")


@pytest.mark.parametrize('name', sorted(FOUND))
def test_help_fits_a_screen(tmp_path, name):
    r = run([FRONT_DOOR, name, '--help'], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith('usage: ringside %s' % name), r.stdout[:200]
    n, long = screen(r.stdout)
    assert n <= SCREEN, '%s --help: %d lines' % (name, n)
    assert not long, long


@pytest.mark.parametrize('name', sorted(FOUND))
def test_help_all_hides_nothing(tmp_path, name):
    """Every option (the launcher options a command passes on are `run`'s)
    has a help line, and --help-all shows them all."""
    parser = parser_of(name)
    r = run([FRONT_DOOR, name, '--help-all'], tmp_path)
    assert r.returncode == 0, r.stderr
    for action in parser._actions:
        if not action.option_strings:
            continue
        assert action.help and action.help != '==SUPPRESS==', action.option_strings
        assert action.option_strings[-1] in r.stdout, (name, action.option_strings)


ALIASES = sorted((a, c.name) for c in FOUND.values() for a in c.aliases)


@pytest.mark.parametrize('alias,name', ALIASES)
def test_old_names_are_links_to_the_front_door(tmp_path, alias, name):
    path = os.path.join(REPO, 'host', alias)
    assert os.path.islink(path) and os.readlink(path) == '../ringside', path
    r = run([path, '--help'], tmp_path)
    assert r.returncode == 0 and r.stdout == run([FRONT_DOOR, name, '--help'], tmp_path).stdout


def test_every_executable_in_host_is_an_alias_or_a_build_tool():
    """The tools are commands; host/ keeps their old names as links and
    the one script that runs before anything (make deps)."""
    aliases = {a for c in FOUND.values() for a in c.aliases}
    host = os.path.join(REPO, 'host')
    files = {f for f in os.listdir(host) if os.path.isfile(os.path.join(host, f))
             and os.access(os.path.join(host, f), os.X_OK)}
    assert files - aliases == {'install-deps'}


def test_commands_import_the_library_only():
    """A command never imports another command, and the library never
    imports a command: a new command is one module and nothing else."""
    import ast
    pkg = os.path.join(REPO, 'host', 'ringside')
    names = {os.path.splitext(f)[0] for f in os.listdir(os.path.join(pkg, 'commands'))
             if f.endswith('.py') and f != '__init__.py'}
    bad = []
    for folder, in_commands in ((pkg, False), (os.path.join(pkg, 'commands'), True)):
        for f in sorted(os.listdir(folder)):
            if not f.endswith('.py') or (in_commands and f == '__init__.py'):
                continue
            tree = ast.parse(open(os.path.join(folder, f)).read())
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom):
                    continue
                mod = node.module or ''
                level = node.level - (1 if in_commands else 0)   # relative to the package
                if node.level and level == 0 and in_commands:
                    hit = [a.name for a in node.names if a.name in names] if not mod else \
                        ([mod] if mod.split('.')[0] in names else [])
                elif node.level:
                    hit = ['commands'] if mod.startswith('commands') or (
                        not mod and any(a.name == 'commands' for a in node.names)) else []
                else:
                    hit = [mod] if mod.startswith('ringside.commands') else []
                if hit and not (f == 'frontdoor.py' and not in_commands):
                    bad.append('%s: from %s%s import %s' % (
                            os.path.relpath(os.path.join(folder, f), REPO), '.' * node.level,
                            mod, ', '.join(a.name for a in node.names)))
    assert not bad, '\n'.join(bad)
