# SPDX-License-Identifier: MIT
"""Where the images, firmware and host programs the launcher boots with live."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
OVMF = '/usr/share/ovmf/OVMF.fd'


def repo_path(*parts):
    return os.path.join(REPO, *parts)


FRONT_DOOR = repo_path('ringside')   # ./ringside COMMAND: a command run as its own process
DEFAULT_ISO = repo_path('build', 'ringside.iso')
DEFAULT_ELF = repo_path('build', 'ringside.elf')
DEFAULT_ESP = repo_path('build', 'ringside-esp.img')
DEFAULT_VSOCK_BACKEND = repo_path('build', 'host', 'ringside-vhost-vsock')
COST_PLUGIN = repo_path('build', 'host', 'ringside-cost.so')

# The Linux baseline guests (host/linux-guest, Debian's kernels with the same
# initrd): the name a script's --guests list takes -> its build folder, which
# is also its make target. 'linux' is this machine's kernel (Debian 6.1),
# before seed 000's TX fast path; 'linux-6.12' is Debian's 6.12, after it:
# efcd71af38be reached mainline in the 6.12 merge window (merged 2024-09-26,
# first in v6.12-rc1), and 6.12's net/vmw_vsock/virtio_transport.c sends
# from virtio_transport_send_pkt straight into the TX virtqueue when
# send_pkt_queue is empty, which 6.1's file does not (docs/benchmarks.md).
LINUX_GUESTS = {'linux': 'linux-guest', 'linux-6.12': 'linux-guest-6.12'}
LINUX_READY = 'ringside-linux-guest: ready'
LINUX_READY_TIMEOUT = 300   # seconds: its boot under TCG on busy cores


def linux_guest(name='linux'):
    """(bzImage, initrd) of the Linux guest called name in LINUX_GUESTS."""
    folder = repo_path('build', LINUX_GUESTS[name])
    return os.path.join(folder, 'bzImage'), os.path.join(folder, 'initrd')


def is_linux(name):
    return name in LINUX_GUESTS


def linux_missing(name='linux'):
    """None when the guest's images exist, else what to run to build them."""
    if all(os.path.exists(p) for p in linux_guest(name)):
        return None
    return '%s missing: run make %s' % (os.path.relpath(linux_guest(name)[1], REPO),
                                        LINUX_GUESTS[name])


# the 6.1 guest's paths, for the scripts that boot only it
LINUX_KERNEL, LINUX_INITRD = linux_guest('linux')
