# SPDX-License-Identifier: MIT
"""The commands of the front door (`./ringside COMMAND`), one module each.

A command is a module here, named after it ('-' as '_': vs_linux.py is
vs-linux), that says who it is and has a main:

    NAME = 'bench'                  # ./ringside bench
    SUMMARY = 'ping-pong and stream tables of the appliance (make bench)'
    GROUP = 'measure'               # where `ringside --help` lists it (GROUPS)
    ALIASES = ('bench-vsock',)      # old names in host/ that run it (optional)

    def main(argv):                 # argv without the command; the exit status
        ...

Nothing else names it: discover() finds every module in this folder. A
command imports the library (ringside.*) and never another command; what
two commands share belongs in the library (docs/commands.md).
"""

import importlib
import pkgutil

# The groups of `ringside --help`, in its order.
GROUPS = ('guest', 'measure', 'results', 'check', 'tools')


class Command:
    def __init__(self, module):
        self.module = module
        self.name = module.NAME
        self.summary = module.SUMMARY
        self.group = getattr(module, 'GROUP', 'tools')
        self.aliases = tuple(getattr(module, 'ALIASES', ()))

    def main(self, argv):
        return self.module.main(argv)


def discover():
    """{name: Command} of every module in this package that has a NAME."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module('%s.%s' % (__name__, info.name))
        if getattr(module, 'NAME', None):
            if module.NAME.replace('-', '_') != info.name:
                # `ringside nested NAME` finds a command by its module's name
                raise RuntimeError('command %r lives in %s.py, not %s.py'
                                   % (module.NAME, info.name, module.NAME.replace('-', '_')))
            cmd = Command(module)
            if cmd.name in found:
                raise RuntimeError('two commands are called %r: %s and %s'
                                   % (cmd.name, found[cmd.name].module.__name__,
                                      module.__name__))
            found[cmd.name] = cmd
    return found
