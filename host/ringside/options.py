# SPDX-License-Identifier: MIT
"""The launcher's command line: parse_args() -> an argparse.Namespace with
every path and choice resolved."""

import argparse
import os
import re
import sys

from .errors import EXIT_USAGE, PROG, UsageError
from .images import COST_PLUGIN, DEFAULT_ELF, DEFAULT_ESP, DEFAULT_ISO, DEFAULT_VSOCK_BACKEND
from .qemu import qemu_opt

# --------------------------------------------------------------- options

HELP_EPILOG = """\
modes:  interactive (default): the serial console on this terminal; Ctrl-A x
        quits, Ctrl-A Ctrl-A sends Ctrl-A.  --cmd: wait for 'ringside: ready',
        run each command, print its output, power off, exit with QEMU's status.
        QEMU's status: 0 after poweroff, (N<<1)|1 after the guest's exit(N).
notes:  --cmdline reaches the guest only with --kernel/--boot elf (the ISO's
        GRUB menu has a fixed command line).  --accel auto boots the ELF (PVH)
        under KVM for a few seconds and uses TCG unless it printed
        'ringside: ready'.  RINGSIDE_QEMU overrides the QEMU binary.
"""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog):
        super().__init__(prog, max_help_position=34, width=80)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # One line, not argparse's usage block.
        sys.stderr.write('%s: error: %s (see --help)\n' % (PROG, message))
        sys.exit(EXIT_USAGE)


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError('not a number of seconds: %r' % text)
    if value <= 0:
        raise argparse.ArgumentTypeError('must be > 0: %r' % text)
    return value


def _memory(text):
    if not re.fullmatch(r'[1-9][0-9]*[KMGT]?', text, re.I):
        raise argparse.ArgumentTypeError('expected a size like 512M or 2G: %r' % text)
    return text.upper()


def _serial(text):
    if text == 'stdio' or (text.startswith('unix:') and len(text) > 5):
        return text
    raise argparse.ArgumentTypeError('expected stdio or unix:PATH: %r' % text)


def _yes_no(text):
    if text in ('yes', 'no'):
        return text == 'yes'
    raise argparse.ArgumentTypeError('expected yes or no: %r' % text)


def build_parser():
    p = _Parser(prog=PROG, add_help=True, epilog=HELP_EPILOG,
                formatter_class=_HelpFormatter,
                usage='%(prog)s [options] [-- QEMU-ARGS...]',
                description='Boot ringside in QEMU, serial console (COM1) on stdio.')
    a = p.add_argument
    a('--boot', choices=('iso', 'elf'), metavar='iso|elf',
      help='the ISO (default) or the ELF via -kernel (PVH)')
    a('--iso', metavar='PATH', help='ISO image (default build/ringside.iso)')
    a('--kernel', metavar='PATH', help='ELF for -kernel (default build/ringside.elf)')
    a('--firmware', choices=('bios', 'uefi', 'uefi-direct'), default='bios',
      metavar='bios|uefi|uefi-direct', help='SeaBIOS; OVMF; OVMF + build/ringside-esp.img')
    a('--machine', choices=('q35', 'pc'), default='q35', metavar='q35|pc', help='default q35')
    a('--memory', type=_memory, default='512M', metavar='SIZE', help='default 512M')
    a('--cmdline', metavar='ARGS', help="e.g. 'loglevel=5' (ELF boots only)")
    a('--accel', choices=('auto', 'kvm', 'tcg'), default='auto', metavar='auto|kvm|tcg',
      help='default auto (see notes)')
    a('--serial', type=_serial, default='stdio', metavar='stdio|unix:PATH',
      help='where COM1 goes (default stdio)')
    a('--wait-ready', type=_yes_no, nargs='?', const=True, default=True,
      metavar='yes|no', help="fail unless 'ringside: ready' shows (yes)")
    a('--timeout', type=_seconds, default=120.0, metavar='S',
      help='wait S seconds for ready, each --cmd (120)')
    a('--cmd', action='append', default=[], metavar='COMMAND',
      help='scripted mode: run COMMAND (repeatable)')
    a('--strict', action='store_true', help="with --cmd: exit 1 on any 'error:' output")
    a('--no-reboot', action='store_true', help='a guest reboot exits QEMU')
    a('--vsock', action='store_true',
      help='add vhost-user-vsock-pci and its back end')
    a('--vsock-uds', metavar='PATH', help='hybrid-vsock socket for host programs')
    a('--vsock-arg', metavar='ARG', action='append', default=[],
      help='extra back-end argument (repeatable)')
    # --forward [ADDR:]H=G (repeatable): the back end's --forward-tcp, TCP port H
    # (127.0.0.1 unless ADDR) to guest vsock port G (README, tools people
    # already use); out of --help, which must fit a screen.
    a('--forward', metavar='[ADDR:]H=G', action='append', default=[], help=argparse.SUPPRESS)
    a('--vsock-transport', choices=['auto', 'vhost-user', 'kernel'], default='auto',
      help='kernel: vhost-vsock-pci (/dev/vhost-vsock); auto: kernel with KVM and '
           '/dev/vhost-vsock, else our vhost-user back end')
    # --cost PATH[,OPTS]: guest cost counters (README, cost accounting); out of
    # --help, which must fit a screen.
    a('--cost', metavar='PATH[,OPTS]', help=argparse.SUPPRESS)
    a('--qemu-arg', action='append', default=[], metavar='ARG',
      help='extra QEMU argument (repeatable)')
    a('--dry-run', action='store_true', help='print the command line(s), start nothing')
    a('-v', '--verbose', action='count', default=0, help='say what happens (-vv: serial to stderr)')
    # Knobs for scripts and for the lead's later back ends; not in --help.
    a('--esp', metavar='PATH', help=argparse.SUPPRESS)
    a('--vsock-backend', metavar='PATH', default=DEFAULT_VSOCK_BACKEND, help=argparse.SUPPRESS)
    a('--vsock-socket', metavar='PATH', help=argparse.SUPPRESS)
    a('--vsock-cid', type=int, default=3, help=argparse.SUPPRESS)
    return p


def parse_args(argv):
    """Parse and resolve a launcher command line (without argv[0]).

    Everything after the first '--' goes to QEMU verbatim. Exits with status 2
    and one line on stderr for bad options, like any command would.
    """
    argv = list(argv)
    extra = []
    if '--' in argv:
        i = argv.index('--')
        argv, extra = argv[:i], argv[i + 1:]
    parser = build_parser()
    opts = parser.parse_args(argv)
    opts.qemu_arg = list(opts.qemu_arg) + extra
    try:
        resolve(opts)
    except UsageError as e:
        parser.error(str(e))
    return opts


def resolve(opts):
    """Fill in defaults that depend on other options; raise UsageError."""
    if opts.iso and opts.kernel:
        raise UsageError('--iso and --kernel exclude each other')
    if opts.boot is None:
        opts.boot = 'elf' if opts.kernel else 'iso'
    if opts.boot == 'iso' and opts.kernel:
        raise UsageError('--kernel needs --boot elf (or no --boot)')
    if opts.boot == 'elf' and opts.iso:
        raise UsageError('--iso needs --boot iso (or no --boot)')
    if opts.firmware == 'uefi-direct':
        if opts.iso or opts.kernel or opts.boot == 'elf':
            raise UsageError('--firmware uefi-direct boots the ESP image, not --iso/--kernel')
        opts.boot = 'esp'
    if opts.boot == 'elf' and opts.firmware != 'bios':
        raise UsageError('-kernel (PVH) boots need --firmware bios; OVMF cannot load the ELF')
    opts.image = {
            'iso': opts.iso or DEFAULT_ISO,
            'elf': opts.kernel or DEFAULT_ELF,
            'esp': opts.esp or DEFAULT_ESP,
    }[opts.boot]
    opts.qemu = os.environ.get('RINGSIDE_QEMU', 'qemu-system-x86_64')
    opts.serial_path = opts.serial[5:] if opts.serial.startswith('unix:') else None
    if opts.vsock_uds and not opts.vsock:
        raise UsageError('--vsock-uds needs --vsock')
    if (opts.vsock_arg or opts.forward) and not opts.vsock:
        raise UsageError('--vsock-arg and --forward need --vsock')
    if opts.vsock_transport == 'kernel' and (opts.vsock_uds or opts.vsock_arg or opts.forward):
        raise UsageError('--vsock-uds, --vsock-arg and --forward are for the vhost-user back end, '
                         'not --vsock-transport kernel')
    if opts.strict and not opts.cmd:
        raise UsageError('--strict needs --cmd')
    if opts.cost:
        # The cost plugin's block: shm=PATH, then its own options as given.
        path, _, rest = opts.cost.partition(',')
        plugin = '%s,shm=%s' % (COST_PLUGIN, qemu_opt(os.path.abspath(path)))
        opts.qemu_arg = ['-plugin', plugin + (',' + rest if rest else '')] + opts.qemu_arg
    return opts
