# SPDX-License-Identifier: MIT
"""The one entry of every script in host/: each is a shim that calls
run('module'), and this runs ringside.module.main(argv)."""

import importlib
import os
import sys

SIGINT_STATUS = 130   # 128 + SIGINT, as a shell reports Ctrl-C
SIGPIPE_STATUS = 141  # 128 + SIGPIPE: the reader went away (`| head`)


def run(module):
    """Exit with main's status. Ctrl-C is one line and 130; a reader that
    closed stdout ends the run quietly with 141, not a traceback."""
    prog = os.path.basename(sys.argv[0])
    main = importlib.import_module('ringside.' + module).main
    try:
        status = main(sys.argv[1:])
    except KeyboardInterrupt:
        sys.stderr.write('%s: interrupted\n' % prog)
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
