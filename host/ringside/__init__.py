# SPDX-License-Identifier: MIT
"""ringside's host side in Python: boot the guest in QEMU and talk to it.

The launcher host/ringside-run, the benchmark scripts and the QEMU tests all
use this package (host/ on sys.path, then `import ringside`), so what the
tests boot is what `ringside-run` boots.

Modules, from the command line to the running guest:
  options    parse_args(): the launcher's command line -> an argparse.Namespace
             with every path and choice resolved (UsageError for bad ones)
  images     the repository, the images it builds, firmware
  qemu       qemu_argv(): options -> QEMU's argv
  backends   helper_specs(): processes QEMU depends on (vhost-user-vsock back end,
             --backend CMD with its placeholders filled in)
  vhost      the host kernel's /dev/vhost-vsock: VHOST_GET_FEATURES, the
             packed=on guard
  process    Children: starts child processes, stops them all newest first
  console    Console: the serial line; a reader thread, wait_for(regex),
             command(cmd) -> output, send()
  guest_stats guest_stats(console, timeout): the guest's counters (`stats json`)
             as a dict
  machine    Launch: one guest, its helpers, QEMU and console
  accel      probe_kvm(): a short real PVH boot under KVM; False means TCG
  commands/  the commands of the front door (./ringside COMMAND), one module each:
             commands/run.py is the launcher (interactive, --cmd, --dry-run)
  frontdoor  main() of ./ringside and of the old names in host/
  errors     LaunchError and its kinds, exit statuses, log()
  benchlib, table, bench_*, boot_time, efi_boot_time, idle_cpu, peer, testpmd:
             the benchmark scripts' code (host/bench-* are entry points)

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
