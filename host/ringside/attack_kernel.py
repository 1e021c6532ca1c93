# SPDX-License-Identifier: MIT
"""The kernel's vhost-vsock and vhost-net as the attack matrix's devices.

On a KVM host with /dev/vhost-vsock and /dev/vhost-net (a real one, or
the nested host: `ringside nested attacks --devices kernel,net-vhost`):

  kernel     the vsock modes; the guest boots with `-device
             vhost-vsock-pci` and the host's side of every connection is
             an AF_VSOCK socket
  net-vhost  the net-* modes; QEMU's virtio-net on a tap with `vhost=on`
             in a private namespace, as net-tap but with the kernel's
             vhost-net moving the frames (attack_net.py)

The kernel keeps no counters a script can read, so a cell's evidence is
what the host saw:

  vring_errors     QEMU's "vhost vring error" lines: the kernel signalled
                   the ring's error eventfd (vhost's vq_err) on a chain it
                   refused
  kernel_warnings  new kernel log lines of an oops, BUG, WARNING or
                   general protection fault: the host kernel broke, which
                   the matrix reports as a crash

The kernel's vhost (6.1, 6.12) has no packed ring, so only split runs.
Report only: L1 must not oops, and the device must serve again after
each mode (at worst after the guest reset it).
"""

import os
import re
import socket
import subprocess

from .attack import CONNECT_TIMEOUT, Session, retried_connect
from .attack_net import NetTap

CID = 3
# a host kernel that broke: the matrix's crash
KERNEL_BROKE = re.compile(r'Oops|BUG:|WARNING:|general protection fault|Kernel panic')
VRING_ERROR = re.compile(r'vhost vring error[^\n]*')
# kernel log lines worth quoting as evidence
KERNEL_EVIDENCE = re.compile(r'vhost|vsock|kvm|' + KERNEL_BROKE.pattern)


def kernel_log():
    """The host kernel's log lines (dmesg; root on the nested host)."""
    out = subprocess.run(['dmesg'], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()


def kernel_evidence(since):
    """Up to three kernel log lines from line `since` on that name vhost,
    vsock or KVM, or are a warning: a cell's kernel evidence."""
    return [x.strip() for x in kernel_log()[since:] if KERNEL_EVIDENCE.search(x)][:3]


def why_not_here(device):
    """None where the kernel's `device` (/dev/vhost-vsock, /dev/vhost-net)
    can serve a guest under KVM, else why not."""
    if not os.path.exists(device):
        return 'no %s: run it on a KVM host or through ringside nested' % device
    if not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return 'no usable /dev/kvm'
    return None


class KernelLog:
    """The host kernel's log since the session began, as evidence."""

    def mark_kernel_log(self):
        self.boot_mark = len(kernel_log())

    def new_kernel_lines(self):
        return kernel_log()[self.boot_mark:]

    def broke(self):
        """The first kernel log line of an oops or warning since the boot."""
        for line in self.new_kernel_lines():
            if KERNEL_BROKE.search(line):
                return line.strip()
        return ''


class KernelSession(KernelLog, Session):
    """One guest on the kernel's vhost-vsock under KVM, for a series of modes."""

    accel = 'kvm'
    rings = ('split',)
    violation_line = VRING_ERROR.pattern

    def __init__(self, ring, log_dir, accel='kvm', name=None, every=20, count=20):
        if ring not in self.rings:
            raise ValueError("the kernel's vhost-vsock has no packed ring")
        self.mark_kernel_log()
        super().__init__(ring, log_dir, accel, name or 'attack-kernel-%s' % ring, every, count)

    @staticmethod
    def why_not_here():
        return why_not_here('/dev/vhost-vsock')

    def launcher_args(self, ring, accel):
        return ['--vsock', '--vsock-transport', 'kernel', '--vsock-cid', str(CID),
                '--accel', accel, '--boot', 'elf']

    def alive(self):
        return (self.launch.qemu is not None and self.launch.qemu.poll() is None
                and not self.broke())

    def why_dead(self):
        return self.broke() or 'QEMU exited'

    def counters(self):
        lines = self.new_kernel_lines()
        return {'vring_errors': len(VRING_ERROR.findall(self.backend_log())),
                'kernel_warnings': sum(1 for x in lines if KERNEL_BROKE.search(x))}

    def log_mark(self):
        return super().log_mark(), len(kernel_log())

    def violation(self, mark):
        """The first vring error QEMU logged and the kernel's own lines
        about vhost, vsock or KVM (or a warning) since `mark`."""
        stderr_mark, kernel_mark = mark
        found = [super().violation(stderr_mark)]
        found += kernel_evidence(kernel_mark)
        return '; '.join(x for x in found if x)

    def connect(self, port, timeout=CONNECT_TIMEOUT, seq=False):
        """AF_VSOCK to the guest, retried while the device restarts."""
        kind = socket.SOCK_SEQPACKET if seq else socket.SOCK_STREAM

        def connect():
            s = socket.socket(socket.AF_VSOCK, kind)
            s.settimeout(10)
            try:
                s.connect((CID, port))
                return s
            except OSError:
                s.close()
                raise
        # the guest resets its device: no event reaches the host
        return retried_connect(connect, timeout, self.alive)


class NetVhost(KernelLog, NetTap):
    """QEMU's virtio-net on a tap whose frames the kernel's vhost-net moves,
    under KVM: net-tap with vhost=on."""

    accel = 'kvm'
    rings = ('split',)
    vhost = 'on'

    def __init__(self, ring, log_dir, accel='kvm', name=None, every=20, count=20):
        if ring not in self.rings:
            raise ValueError("the kernel's vhost-net has no packed ring")
        self.mark_kernel_log()
        super().__init__(ring, log_dir, accel, name or 'attack-net-vhost-%s' % ring, every,
                         count)

    @staticmethod
    def why_not_here():
        return why_not_here('/dev/vhost-net')

    def alive(self):
        return super().alive() and not self.broke()

    def begin(self):
        super().begin()
        self.begin_kernel = len(kernel_log())

    def device_errors(self):
        own = super().device_errors()
        return '; '.join(x for x in [own] + kernel_evidence(self.begin_kernel) if x)
