# SPDX-License-Identifier: MIT
"""config-doc: docs/config.md from the CONFIG_KEY declarations in the
guest's sources (ringside/config_doc.py; `make docs` runs it).

    ringside config-doc            the page on stdout
    ringside config-doc -o FILE    written to FILE
    ringside config-doc --check    exit 1 if docs/config.md is stale
"""

import os
import sys

from ..cli import Parser
from ..config_doc import DOC, DeclarationError, render
from ..images import REPO

NAME = 'config-doc'
SUMMARY = "docs/config.md from the guest's keys (make docs)"
GROUP = 'tools'
ALIASES = ('config-doc',)
PROG = 'ringside config-doc'


def main(argv=None):
    p = Parser(prog=PROG, description='docs/config.md from the CONFIG_KEY '
               'declarations in the guest\'s sources.')
    g = p.add_mutually_exclusive_group()
    g.add_argument('-o', '--output', metavar='FILE', help='write the page to FILE')
    g.add_argument('--check', action='store_true',
                   help='exit 1 if %s differs from the sources' % os.path.relpath(DOC, REPO))
    opts = p.parse_args(argv)
    try:
        page = render()
    except DeclarationError as e:
        print('%s: error: %s' % (PROG, e), file=sys.stderr)
        return 1
    if opts.check:
        try:
            with open(DOC) as f:
                current = f.read()
        except OSError:
            current = None
        if current != page:
            print('%s: %s is stale: run make docs' % (PROG, os.path.relpath(DOC, REPO)),
                  file=sys.stderr)
            return 1
        return 0
    if opts.output:
        with open(opts.output, 'w') as f:
            f.write(page)
    else:
        sys.stdout.write(page)
    return 0
