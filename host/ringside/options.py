# SPDX-License-Identifier: MIT
"""The launcher's command line: parse_args() -> an argparse.Namespace with
every path and choice resolved."""

import argparse
import os
import re
import shlex
import shutil

from .backends import PLACEHOLDERS
from .cli import Parser
from .errors import PROG, UsageError
from .images import COST_PLUGIN, DEFAULT_ELF, DEFAULT_ESP, DEFAULT_ISO, DEFAULT_VSOCK_BACKEND
from .qemu import packed_requested, qemu_opt
from .vhost import kernel_vsock_problem

# --------------------------------------------------------------- options

BACKEND_TIMEOUT = 20.0   # seconds for a back end to listen on its socket

HELP_EPILOG = """\
Interactive by default: the console here, Ctrl-A x quits. --cmd: run each
command, print its output, power off (exit status: QEMU's). --vsock-transport
auto: the kernel's vhost-vsock under KVM where /dev/vhost-vsock is, unless
--backend, --vsock-uds, --vsock-arg or --forward ask for vhost-user."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog):
        super().__init__(prog, max_help_position=34, width=80)


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
    p = Parser(prog=PROG, add_help=True, epilog=HELP_EPILOG,
               formatter_class=_HelpFormatter,
               usage='%(prog)s [options] [-- QEMU-ARGS...]',
               description='Boot ringside in QEMU, serial console (COM1) on stdio.')
    a = p.add_argument
    a('--boot', choices=('iso', 'elf'), metavar='iso|elf',
      help='the ISO (default) or the ELF via -kernel (PVH)')
    a('--iso', metavar='PATH', more=True, help='ISO image (default build/ringside.iso)')
    a('--kernel', metavar='PATH', more=True,
      help='ELF or bzImage for -kernel (default build/ringside.elf)')
    a('--firmware', choices=('bios', 'uefi', 'uefi-direct'), default='bios', metavar='F',
      help='bios (SeaBIOS), uefi (OVMF), uefi-direct (OVMF, ESP)')
    a('--machine', choices=('q35', 'pc'), default='q35', metavar='q35|pc', more=True,
      help='default q35')
    a('--memory', type=_memory, default='512M', metavar='SIZE', more=True, help='default 512M')
    a('--cmdline', metavar='ARGS', help="e.g. 'loglevel=5' (ELF boots only)")
    a('--accel', choices=('auto', 'kvm', 'tcg'), default='auto', metavar='auto|kvm|tcg',
      help='auto: KVM if a short boot under it works, else TCG')
    a('--serial', type=_serial, default='stdio', metavar='stdio|unix:PATH', more=True,
      help='where COM1 goes (default stdio)')
    a('--wait-ready', type=_yes_no, nargs='?', const=True, default=True,
      metavar='yes|no', help="fail unless 'ringside: ready' shows (yes)", more=True)
    a('--allow-bad-cmdline', action='store_true', more=True,
      help="go on when the guest names an unknown key or bad value of its command "
           "line (a boot stops there otherwise)")
    a('--timeout', type=_seconds, default=120.0, metavar='S', more=True,
      help='wait S seconds for ready, each --cmd (120)')
    a('--cmd', action='append', default=[], metavar='COMMAND',
      help='scripted mode: run COMMAND (repeatable)')
    a('--strict', action='store_true', help="with --cmd: exit 1 on any 'error:' output",
      more=True)
    a('--no-reboot', action='store_true', help='a guest reboot exits QEMU', more=True)
    a('--vsock', action='store_true',
      help='a vsock device: vhost-user and a back end, or the kernel\'s')
    a('--vsock-uds', metavar='PATH', help='hybrid-vsock socket for host programs')
    a('--vsock-arg', metavar='ARG', action='append', default=[], more=True,
      help="extra argument of our back end's (repeatable)")
    a('--forward', metavar='[ADDR:]H=G', action='append', default=[], more=True,
      help="TCP port H (127.0.0.1 unless ADDR) to guest vsock port G: the back end's "
           "--forward-tcp (repeatable)")
    a('--vsock-transport', choices=['auto', 'vhost-user', 'kernel'], default='auto',
      metavar='T', help="auto, vhost-user (a back end), kernel (vhost-vsock-pci)")
    a('--backend', metavar='CMD',
      help='your back end: {socket} {uds} {cid} {control} filled in')
    a('--qemu', metavar='PATH',
      help='QEMU ($RINGSIDE_QEMU, else qemu-system-x86_64)')
    a('--cost-block', metavar='PATH[,OPTS]', more=True,
      help='count guest instructions into PATH (the cost plugin; docs/benchmarks.md)')
    a('--qemu-arg', action='append', default=[], metavar='ARG', more=True,
      help='extra QEMU argument (repeatable; or after --)')
    a('--dry-run', action='store_true', help='print the command line(s), start nothing')
    a('-v', '--verbose', action='count', default=0, help='say what happens (-vv: serial to stderr)')
    a('--esp', metavar='PATH', more=True,
      help='ESP image for --firmware uefi-direct (build/ringside-esp.img)')
    a('--vsock-backend', metavar='PATH', more=True,
      help="our back end's binary in the default back end command")
    a('--backend-timeout', type=_seconds, default=BACKEND_TIMEOUT, metavar='S', more=True,
      help='seconds for the back end to listen on {socket} (%g)' % BACKEND_TIMEOUT)
    a('--vsock-socket', metavar='PATH', more=True,
      help="the vhost-user socket (default: one in a folder of the run's own)")
    a('--vsock-cid', type=int, default=3, metavar='N', more=True, help="the guest's CID (3)")
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
    opts.qemu = _qemu_binary(opts.qemu)
    opts.serial_path = opts.serial[5:] if opts.serial.startswith('unix:') else None
    _check_folders(opts)
    if opts.vsock_uds and not opts.vsock:
        raise UsageError('--vsock-uds needs --vsock')
    if (opts.vsock_arg or opts.forward) and not opts.vsock:
        raise UsageError('--vsock-arg and --forward need --vsock')
    if (opts.backend or opts.vsock_backend) and not opts.vsock:
        raise UsageError('--backend needs --vsock')
    asked = vhost_user_options(opts)
    if opts.vsock_transport == 'kernel' and asked:
        raise UsageError('%s %s for a vhost-user back end, not --vsock-transport kernel'
                         % (', '.join(asked), 'is' if len(asked) == 1 else 'are'))
    if opts.vsock_transport == 'auto' and asked:
        # the back end asked for is the one measured, wherever the kernel's could run
        opts.vsock_transport = 'vhost-user'
    opts.backend_cmd = _backend_cmd(opts)
    opts.vsock_control = None   # plan_paths: where {control} goes
    for name in ('vsock_socket', 'vsock_uds'):
        if getattr(opts, name):
            setattr(opts, name, os.path.abspath(getattr(opts, name)))
    if opts.vsock and opts.vsock_transport == 'kernel' and not opts.dry_run:
        problem = kernel_vsock_problem(packed_requested(opts.qemu_arg))
        if problem:
            raise UsageError('--vsock-transport kernel: ' + problem)
    if opts.strict and not opts.cmd:
        raise UsageError('--strict needs --cmd')
    if opts.cost_block:
        # The cost plugin's block: shm=PATH, then its own options as given.
        path, _, rest = opts.cost_block.partition(',')
        plugin = '%s,shm=%s' % (COST_PLUGIN, qemu_opt(os.path.abspath(path)))
        opts.qemu_arg = ['-plugin', plugin + (',' + rest if rest else '')] + opts.qemu_arg
    return opts


def vhost_user_options(opts):
    """The options given that only a vhost-user back end takes."""
    return [name for name, given in (
            ('--backend', opts.backend), ('--vsock-backend', opts.vsock_backend),
            ('--vsock-uds', opts.vsock_uds), ('--vsock-arg', opts.vsock_arg),
            ('--forward', opts.forward), ('--vsock-socket', opts.vsock_socket)) if given]


def _check_folders(opts):
    """Every path option's folder exists, checked before anything starts: a
    socket that cannot be made surfaces much later (as a back end or QEMU
    dying, the console closing) and says nothing of the path."""
    paths = [('--iso', opts.iso), ('--kernel', opts.kernel), ('--esp', opts.esp),
             ('--serial unix:', opts.serial_path), ('--vsock-uds', opts.vsock_uds),
             ('--vsock-socket', opts.vsock_socket), ('--vsock-backend', opts.vsock_backend),
             ('--cost-block', opts.cost_block and opts.cost_block.partition(',')[0])]
    for option, path in paths:
        if not path:
            continue
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError('%s%s%s: folder %s does not exist'
                             % (option, '' if option.endswith(':') else ' ', path, folder))


def _qemu_binary(path):
    """--qemu PATH, else $RINGSIDE_QEMU, else qemu-system-x86_64 from PATH;
    one that was named has to be an executable file."""
    what = '--qemu'
    if path is None:
        path, what = os.environ.get('RINGSIDE_QEMU'), 'RINGSIDE_QEMU'
    if path is None:
        return 'qemu-system-x86_64'   # not found: the launch says so
    found = path if os.sep in path else shutil.which(path)
    if not path or not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise UsageError('%s %s: not an executable file' % (what, path or "''"))
    return path


def _backend_cmd(opts):
    """The back end's command line as words, placeholders not yet filled in:
    --backend CMD, or our back end (--vsock-backend PATH, default
    build/host/ringside-vhost-vsock)."""
    if opts.backend is None:
        return [opts.vsock_backend or DEFAULT_VSOCK_BACKEND, '--socket', '{socket}',
                '--uds', '{uds}', '--guest-cid', '{cid}', '--control', '{control}']
    if opts.vsock_backend:
        raise UsageError('--backend and --vsock-backend exclude each other')
    try:
        words = shlex.split(opts.backend)
    except ValueError as e:
        raise UsageError('--backend %r: %s' % (opts.backend, e))
    if not words:
        raise UsageError('--backend needs a command')
    for word in words:
        for name in re.findall(r'\{[A-Za-z_]+\}', word):
            if name not in PLACEHOLDERS:
                raise UsageError('--backend: unknown placeholder %s (known: %s)'
                                 % (name, ' '.join(PLACEHOLDERS)))
    if not any('{socket}' in w for w in words) and not opts.vsock_socket:
        raise UsageError('--backend: CMD must name {socket}, the vhost-user socket '
                         'QEMU connects to')
    return words
