# SPDX-License-Identifier: MIT
"""KVM or TCG: --accel auto boots the ELF under KVM for a few seconds."""

import copy
import os
import re
import subprocess

from .console import READY
from .errors import LaunchError, log
from .images import DEFAULT_ELF
from . import vcpu_watch
from .machine import Launch

# Seconds for a PVH boot under KVM to print READY. A host that knows its
# KVM works but may be slow (host/nested's L1, under TCG) sets a longer one.
KVM_PROBE_TIMEOUT = 5.0
PROBE_TIMEOUT_ENV = 'RINGSIDE_KVM_PROBE_TIMEOUT'


def probe_timeout():
    try:
        return float(os.environ.get(PROBE_TIMEOUT_ENV, KVM_PROBE_TIMEOUT))
    except ValueError:
        return KVM_PROBE_TIMEOUT


def kvm_usable():
    return os.access('/dev/kvm', os.R_OK | os.W_OK)


def probe_kvm(opts, timeout=None):
    """Boot the ELF (PVH) under KVM; True if it reached READY within `timeout`.

    A real boot, because /dev/kvm may exist and still be unable to run a
    guest at a useful speed (paravirtual KVM flavours). Nothing is cached.
    """
    timeout = probe_timeout() if timeout is None else timeout
    if not kvm_usable():
        if opts.verbose:
            log('--accel auto: /dev/kvm not usable, using tcg')
        return False
    probe = copy.copy(opts)
    probe.boot, probe.firmware, probe.image = 'elf', 'bios', opts.kernel or DEFAULT_ELF
    probe.cmdline, probe.vsock, probe.serial_path, probe.qemu_arg = None, False, None, []
    probe.verbose = max(0, opts.verbose - 1)
    if not os.path.exists(probe.image):
        if opts.verbose:
            log('--accel auto: no %s to probe KVM with, using tcg' % probe.image)
        return False
    ok = _probe_boot(probe, timeout)
    if ok is None:
        # something below the probe stopped it (vcpu_watch.py): once more
        ok = bool(_probe_boot(probe, timeout))
    if opts.verbose:
        log('--accel auto: a PVH boot under KVM %s within %g s: using %s'
            % ('reached ready' if ok else 'did not reach ready', timeout,
               'kvm' if ok else 'tcg'))
    return ok


def _probe_boot(probe, timeout):
    """True: ready under KVM; False: not; None: something below the guest
    stopped it (vcpu_watch.below_us; said on stderr, whatever the
    verbosity)."""
    launch = Launch(probe, 'kvm', qemu_stderr=subprocess.DEVNULL)
    try:
        launch.start()
        launch.console.wait_for(re.escape(READY), timeout)
        return True
    except LaunchError as e:
        why = vcpu_watch.below_us(str(e))
        if why:
            log('--accel auto: the KVM probe\'s %s' % why)
            return None
        return False
    finally:
        launch.stop()


def choose_accel(opts):
    if opts.accel != 'auto':
        return opts.accel
    return 'kvm' if probe_kvm(opts) else 'tcg'
