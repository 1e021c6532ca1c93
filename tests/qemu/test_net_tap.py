# SPDX-License-Identifier: MIT
"""ringside's virtio-net against the Linux network stack, in a private netns.

A network namespace made for the test holds a tap device with 10.0.2.2/24;
QEMU is started inside it (`ip netns exec`) so its -netdev tap opens that
device, and nothing of the host's networking is involved. Linux's own
`ping` pings the guest, a Python UDP socket in the namespace checks the
echo service byte for byte, and the guest pings Linux. Skipped where
namespaces or /dev/net/tun are not available (not root).
"""

import os
import random
import re
import subprocess
import tempfile

import pytest

from conftest import ELF, require_image
from ringside_qemu import Guest

GUEST_IP = '10.0.2.15'
HOST_IP = '10.0.2.2'
TAP = 'rstap0'


def run(*argv, check=True, timeout=60, **kw):
    return subprocess.run(argv, check=check, timeout=timeout, capture_output=True, text=True, **kw)


def netns_usable():
    if os.geteuid() != 0 or not os.path.exists('/dev/net/tun'):
        return False
    try:
        return run('ip', 'netns', 'list', check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


pytestmark = pytest.mark.skipif(not netns_usable(),
                                reason='needs root, ip netns and /dev/net/tun')


class NetNs:
    """A namespace with one tap device; removed (with the tap) on close."""

    def __init__(self):
        self.name = 'ringside-%d-%d' % (os.getpid(), random.randrange(1 << 20))
        self.dir = tempfile.mkdtemp(prefix='ringside-tap-')
        run('ip', 'netns', 'add', self.name)
        try:
            self.ip('link', 'set', 'lo', 'up')
            self.ip('tuntap', 'add', 'dev', TAP, 'mode', 'tap')
            self.ip('addr', 'add', HOST_IP + '/24', 'dev', TAP)
            self.ip('link', 'set', TAP, 'up')
        except BaseException:
            self.close()
            raise
        # QEMU runs inside the namespace: a wrapper the launcher execs as "QEMU"
        self.qemu = os.path.join(self.dir, 'qemu-in-netns')
        with open(self.qemu, 'w') as f:
            f.write('#!/bin/sh\nexec ip netns exec %s qemu-system-x86_64 "$@"\n' % self.name)
        os.chmod(self.qemu, 0o755)

    def ip(self, *args):
        return run('ip', '-n', self.name, *args)

    def exec(self, *argv, **kw):
        return run('ip', 'netns', 'exec', self.name, *argv, **kw)

    def close(self):
        run('ip', 'netns', 'del', self.name, check=False)
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)


UDP_ECHO_CLIENT = r'''
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(10)
s.bind(('0.0.0.0', 0))
for size in [int(x) for x in sys.argv[2:]]:
    data = os.urandom(size)
    for attempt in range(3):
        s.sendto(data, (sys.argv[1], 7))
        try:
            got, peer = s.recvfrom(65536)
            break
        except socket.timeout:
            continue
    else:
        sys.exit('no echo for %d bytes' % size)
    if got != data or peer != (sys.argv[1], 7):
        sys.exit('echo mismatch for %d bytes' % size)
print('ok')
'''


@pytest.fixture(scope='module', params=[False, True], ids=['split', 'packed'])
def tap_guest(request):
    packed = request.param
    require_image(ELF)
    ns = NetNs()
    g = None
    try:
        g = Guest('--boot', 'elf', '--cmdline', 'ip=%s prefix=24 gw=%s' % (GUEST_IP, HOST_IP),
                  '--', '-netdev', 'tap,id=n0,ifname=%s,script=no,downscript=no' % TAP,
                  '-device', 'virtio-net-pci,netdev=n0,packed=%s,mac=52:54:00:12:34:56'
                  % ('on' if packed else 'off'),
                  name='net-tap-%s' % ('packed' if packed else 'split'))
        g.opts.qemu = ns.qemu
        g.ns, g.packed = ns, packed
        g.start()
        yield g
    finally:
        if g:
            g.stop()
        ns.close()


def test_linux_pings_guest(tap_guest):
    r = tap_guest.ns.exec('ping', '-c', '3', '-i', '0.2', '-W', '10', '-s', '1000', GUEST_IP,
                          check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ' 0% packet loss' in r.stdout


def test_udp_echo_from_linux(tap_guest):
    r = tap_guest.ns.exec('/usr/bin/python3', '-c', UDP_ECHO_CLIENT, GUEST_IP,
                          '0', '1', '100', '1472', '64', '999', check=False)
    assert r.returncode == 0 and r.stdout.strip() == 'ok', r.stdout + r.stderr


def test_guest_pings_linux(tap_guest):
    out = tap_guest.command('ping %s count=3' % HOST_IP)
    assert 'ping: 3 sent, 3 received' in out, out
    assert len(re.findall(r'icmp_seq=\d+ time=[\d.]+ ms', out)) == 3


def test_guest_learned_linux_mac(tap_guest):
    mac = tap_guest.ns.ip('-br', 'link', 'show', TAP).stdout.split()[2]
    assert 'arp %s at %s' % (HOST_IP, mac.lower()) in tap_guest.command('net arp')


def test_poweroff(tap_guest):
    assert tap_guest.poweroff() == 0
