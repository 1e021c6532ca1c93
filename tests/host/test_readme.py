# SPDX-License-Identifier: MIT
"""The front page and docs stay navigable and agree with the build: every
relative link (and #anchor) resolves, the make targets the README names
exist, and CI runs the README's test command."""

import glob
import os
import re
import subprocess

from conftest import REPO

LINK_RE = re.compile(r'\]\(([^)\s]+)\)')
MAKE_RE = re.compile(r'`make ([a-z][a-z0-9.-]*[a-z0-9])')


def pages():
    return [os.path.join(REPO, 'README.md')] + sorted(
        glob.glob(os.path.join(REPO, 'docs', '**', '*.md'), recursive=True))


def anchors(path):
    """GitHub's heading ids of a Markdown file."""
    with open(path) as f:
        text = re.sub(r'```.*?```', '', f.read(), flags=re.S)
    ids = set()
    for title in re.findall(r'^#+ +(.+?)\s*$', text, re.M):
        slug = re.sub(r'[^\w\- ]', '', title.lower()).replace(' ', '-')
        ids.add(slug)
    return ids


def test_relative_links_resolve():
    bad = []
    for page in pages():
        with open(page) as f:
            text = f.read()
        for target in LINK_RE.findall(text):
            if re.match(r'[a-z]+:', target):
                continue
            path, _, anchor = target.partition('#')
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(full):
                bad.append('%s: %s (no such file)' % (os.path.relpath(page, REPO), target))
            elif anchor and os.path.isfile(full) and anchor not in anchors(full):
                bad.append('%s: %s (no such heading)' % (os.path.relpath(page, REPO), target))
    assert not bad, '\n'.join(bad)


def test_make_targets_named_exist():
    named = set()
    for page in pages():
        with open(page) as f:
            named.update(MAKE_RE.findall(f.read()))
    # make's database of the Makefile, nothing run: every target it knows
    db = subprocess.run(['make', '-pRrq', '-C', REPO, '-f', 'Makefile', '.DEFAULT_GOAL'],
                        capture_output=True, text=True).stdout
    known = set(re.findall(r'^([a-z][a-z0-9.-]*):', db, re.M))
    assert named - known == set()


def test_ci_runs_the_readme_test_command():
    with open(os.path.join(REPO, 'README.md')) as f:
        readme = f.read()
    with open(os.path.join(REPO, '.ci', 'run')) as f:
        ci = f.read()
    assert 'make test     # build everything and run all tests' in readme
    assert re.search(r'^exec make test$', ci, re.M)


def test_every_command_in_the_docs():
    """docs/benchmarks.md names every command that measures, and
    docs/commands.md lists every command."""
    from ringside import commands
    found = commands.discover()
    with open(os.path.join(REPO, 'docs', 'benchmarks.md')) as f:
        bench = f.read()
    with open(os.path.join(REPO, 'docs', 'commands.md')) as f:
        listed = f.read()
    missing = [n for n, c in sorted(found.items())
               if c.group == 'measure' and 'ringside %s' % n not in bench]
    missing += ['%s (docs/commands.md)' % n for n in sorted(found)
                if '`%s`' % n not in listed]
    assert not missing, missing
