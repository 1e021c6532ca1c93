# SPDX-License-Identifier: MIT
"""Where the images, firmware and host programs the launcher boots with live."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
OVMF = '/usr/share/ovmf/OVMF.fd'


def repo_path(*parts):
    return os.path.join(REPO, *parts)


DEFAULT_ISO = repo_path('build', 'ringside.iso')
DEFAULT_ELF = repo_path('build', 'ringside.elf')
DEFAULT_ESP = repo_path('build', 'ringside-esp.img')
DEFAULT_VSOCK_BACKEND = repo_path('build', 'host', 'ringside-vhost-vsock')
COST_PLUGIN = repo_path('build', 'host', 'ringside-cost.so')
# The Linux baseline guest (make linux-guest) and the line its server prints when up.
LINUX_KERNEL = repo_path('build', 'linux-guest', 'bzImage')
LINUX_INITRD = repo_path('build', 'linux-guest', 'initrd')
LINUX_READY = r'ringside-linux-guest: ready'
