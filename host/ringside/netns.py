# SPDX-License-Identifier: MIT
"""A private network namespace with one tap device, for QEMU's -netdev tap.

QEMU runs inside the namespace (a wrapper script the launcher execs as its
QEMU), so its tap device and everything the guest sends stay out of the
host's networking; clients run inside it too (`ip netns exec`).
"""

import os
import random
import shlex
import shutil
import subprocess
import tempfile

HOST_IP = '10.0.2.2'
GUEST_IP = '10.0.2.15'
TAP = 'rstap0'
MAC = '52:54:00:12:34:56'


def run(*argv, check=True, timeout=60):
    return subprocess.run(argv, check=check, timeout=timeout, capture_output=True, text=True)


def usable():
    """Root, /dev/net/tun and a working `ip netns`."""
    if os.geteuid() != 0 or not os.path.exists('/dev/net/tun'):
        return False
    try:
        return run('ip', 'netns', 'list', check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def tuntap_add(queues=1):
    """`ip tuntap` arguments that make the tap, multi-queue for queues > 1."""
    return ('tuntap', 'add', 'dev', TAP, 'mode', 'tap') + (('multi_queue',) if queues > 1 else ())


def ringside_cmdline(queues):
    """ringside's keys for the namespace's addresses, with `queues` pairs."""
    words = 'ip=%s prefix=24 gw=%s' % (GUEST_IP, HOST_IP)
    return words + (' net_queues=%d' % queues if queues > 1 else '')


def net_args(queues, poll_us=None):
    """virtio-net-pci on the namespace's tap; queues > 1: that many pairs
    (mq=on) with an MSI-X vector per queue, the control queue and the
    config, on a multi-queue tap (NetNs(queues=...)); with poll_us (an
    int) the tap is served by the kernel's vhost-net, busy polling that
    many microseconds."""
    tap = 'tap,id=n0,ifname=%s,script=no,downscript=no' % TAP
    dev = 'virtio-net-pci,netdev=n0,mac=%s' % MAC
    if poll_us is not None:
        tap += ',vhost=on,poll-us=%d' % poll_us
    if queues > 1:
        tap += ',queues=%d' % queues
        dev += ',mq=on,vectors=%d' % (2 * queues + 2)
    return ['--qemu-arg=-netdev', '--qemu-arg=' + tap, '--qemu-arg=-device', '--qemu-arg=' + dev]


class NetNs:
    """The namespace, its tap (HOST_IP/24) and the QEMU wrapper; close()
    removes all three. queues > 1: a multi-queue tap, for QEMU's
    -netdev tap,queues=N (a tap made without it refuses them)."""

    def __init__(self, qemu='qemu-system-x86_64', queues=1):
        self.name = 'ringside-%d-%d' % (os.getpid(), random.randrange(1 << 20))
        self.dir = tempfile.mkdtemp(prefix='ringside-tap-')
        run('ip', 'netns', 'add', self.name)
        try:
            for args in (('link', 'set', 'lo', 'up'),
                         tuntap_add(queues),
                         ('addr', 'add', HOST_IP + '/24', 'dev', TAP),
                         ('link', 'set', TAP, 'up')):
                run('ip', '-n', self.name, *args)
        except BaseException:
            self.close()
            raise
        self.qemu = os.path.join(self.dir, 'qemu-in-netns')
        with open(self.qemu, 'w') as f:
            # ip by its path: a shell whose applets come first (busybox
            # on the nested host) would run its own ip, which has no netns
            f.write('#!/bin/sh\nexec %s netns exec %s %s "$@"\n'
                    % (shlex.quote(shutil.which('ip') or 'ip'), self.name, shlex.quote(qemu)))
        os.chmod(self.qemu, 0o755)

    def prefix(self):
        """argv prefix that runs a program inside the namespace."""
        return ['ip', 'netns', 'exec', self.name]

    def close(self):
        run('ip', 'netns', 'del', self.name, check=False)
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
