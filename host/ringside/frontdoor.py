# SPDX-License-Identifier: MIT
"""./ringside COMMAND [options] [-- launcher options]: the one front door.

The executable at the repository's root and the old names in host/ (links
to it) run main(): the command is the first argument, or for an old name
the command that lists it in its ALIASES; every command is a module of
ringside.commands.
"""

import difflib
import os
import sys

from . import commands
from .errors import EXIT_USAGE, LaunchError

SIGINT_STATUS = 130   # 128 + SIGINT, as a shell reports Ctrl-C
SIGPIPE_STATUS = 141  # 128 + SIGPIPE: the reader went away (`| head`)

USAGE = 'usage: ringside COMMAND [options] [-- launcher options]'


def overview(found):
    """`ringside --help`: every command on one screen, by group (guest,
    measure, results, check: faults and endurance, tools)."""
    lines = [USAGE, 'The commands of the virtio benchmark appliance (COMMAND --help for '
             'one):']
    width = max(len(name) for name in found)
    for group in commands.GROUPS:
        names = sorted(n for n, c in found.items() if c.group == group)
        for i, name in enumerate(names):
            lines.append('%-8s %-*s  %s' % (group if i == 0 else '', width, name,
                                            found[name].summary))
    return '\n'.join(lines) + '\n'


def _unknown(word, found):
    near = difflib.get_close_matches(word, list(found), n=1)
    sys.stderr.write("ringside: error: unknown command '%s'%s (see ringside --help)\n"
                     % (word, " (did you mean '%s'?)" % near[0] if near else ''))
    return EXIT_USAGE


def pick(argv0, argv, found):
    """(Command, its arguments), or (None, status) when there is none to run."""
    invoked = os.path.basename(argv0)
    for cmd in found.values():
        if invoked in cmd.aliases:
            return cmd, argv
    if not argv or argv[0] in ('-h', '--help') or argv == ['help']:
        sys.stdout.write(overview(found))
        return None, 0 if argv else EXIT_USAGE
    if argv[0] == 'help':
        argv = [argv[1], '--help']
    if argv[0] not in found:
        return None, _unknown(argv[0], found)
    return found[argv[0]], argv[1:]


def main(argv0=None, argv=None):
    """Run the command; exit with its status. Ctrl-C is one line and 130;
    a reader that closed stdout ends the run quietly with 141."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    argv = sys.argv[1:] if argv is None else argv
    cmd, args = pick(argv0, argv, commands.discover())
    if cmd is None:
        sys.exit(args)
    try:
        status = cmd.main(args)
    except LaunchError as e:
        # a guest, QEMU or back end that failed us: one line, no traceback
        sys.stderr.write('ringside %s: error: %s\n' % (cmd.name, e))
        status = e.status
    except KeyboardInterrupt:
        sys.stderr.write('ringside %s: interrupted\n' % cmd.name)
        status = SIGINT_STATUS
    except BrokenPipeError:
        status = SIGPIPE_STATUS
    if status == SIGPIPE_STATUS or not _flush_stdout():
        # nothing more can reach the reader; keep Python's exit flush quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = SIGPIPE_STATUS
    sys.exit(status)


def _flush_stdout():
    try:
        sys.stdout.flush()
        return True
    except BrokenPipeError:
        return False
