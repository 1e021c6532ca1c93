# SPDX-License-Identifier: MIT
"""ringside's host side in Python: boot the guest in QEMU and talk to it.

The front door ./ringside, its commands and the QEMU tests all use this
package (host/ on sys.path, then `import ringside`), so what the tests
boot is what `./ringside run` boots.

The commands (commands/, one module each, found by commands.discover();
each imports the library below and never another command):
  frontdoor  main() of ./ringside and of the old names in host/ (links)
  commands/  run (the launcher: interactive, --cmd, --dry-run), bench,
             compare, soak, ... (docs/commands.md)

The library, from the command line to the running guest:
  options    parse_args(): the launcher's command line -> an argparse.Namespace
             with every path and choice resolved (UsageError for bad ones)
  cli        Parser: one-line errors, --help on a screen and --help-all
  measure    the shared measurement options (-t, -P, -l, -R, --count, ...)
  images     the repository, the images it builds, firmware
  qemu       qemu_argv(): options -> QEMU's argv
  backends   helper_specs(): processes QEMU depends on (vhost-user-vsock back end,
             --backend CMD with its placeholders filled in); what a back end
             must have (NEEDS, missing())
  backend_ctl our back end's control socket (counters, inject stop) and its
             process's fds and memory
  vhost      the host kernel's /dev/vhost-vsock: VHOST_GET_FEATURES, the
             packed=on guard
  process    Children: starts child processes in groups of their own, stops
             them all newest first
  wait       until(), poll_for(): the one deadline loop
  console    Console: the serial line; a reader thread, wait_for(regex),
             command(cmd) -> output, send()
  guest_stats the guest's counters (`stats json`) and every command's JSON
             form (json_of)
  machine    Launch: one guest, its helpers, QEMU and console (and
             VsockBackend: our back end alone, guests coming and going)
  accel      probe_kvm(): a short real PVH boot under KVM; False means TCG
  linux_guest, netguest  the Linux guest's arguments and server; ringside's
             virtio-net as commands drive it
  results, noise  the saved run's schema (cells) and B/A with its interval
  errors     LaunchError and its kinds, exit statuses, log()
  vsock_test the kernel's vsock_test against a guest, both roles, case by case
  benchlib, table, ab, attack*, bench_tools, cost*, peer, testpmd, ...:
             the rest the commands share

The names below are the launcher's API, as `ringside.NAME`.
"""

from .accel import choose_accel, kvm_usable, probe_kvm
from .backends import HelperSpec, helper_specs, plan_paths
from .console import PROMPT, READY, Console, effective_line, render_line
from .errors import (EXIT_ERROR, EXIT_TIMEOUT, EXIT_USAGE, GuestExited, GuestTimeout,
                     LaunchError, UsageError, log)
from .guest_stats import StatsError, guest_stats, parse_stats, vsock_queue_sum
from .images import (DEFAULT_ELF, DEFAULT_ESP, DEFAULT_ISO, DEFAULT_VSOCK_BACKEND, OVMF, REPO,
                     repo_path)
from .machine import Launch, VsockBackend
from .options import build_parser, parse_args, resolve
from .process import Children, die_with_parent
from .qemu import packed_requested, qemu_argv, qemu_opt, vsock_kernel
from .vhost import kernel_vsock_problem, vhost_features

__all__ = [
    'choose_accel', 'kvm_usable', 'probe_kvm',
    'HelperSpec', 'helper_specs', 'plan_paths',
    'PROMPT', 'READY', 'Console', 'effective_line', 'render_line',
    'EXIT_ERROR', 'EXIT_TIMEOUT', 'EXIT_USAGE', 'GuestExited', 'GuestTimeout',
    'LaunchError', 'UsageError', 'log',
    'StatsError', 'guest_stats', 'parse_stats', 'vsock_queue_sum',
    'DEFAULT_ELF', 'DEFAULT_ESP', 'DEFAULT_ISO', 'DEFAULT_VSOCK_BACKEND', 'OVMF', 'REPO',
    'repo_path',
    'Launch', 'VsockBackend',
    'build_parser', 'parse_args', 'resolve',
    'Children', 'die_with_parent',
    'packed_requested', 'qemu_argv', 'qemu_opt', 'vsock_kernel',
    'kernel_vsock_problem', 'vhost_features',
]
