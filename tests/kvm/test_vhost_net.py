# SPDX-License-Identifier: MIT
"""On the kernel's vhost-net under KVM: ringside's UDP echo through a tap
that vhost-net serves (every datagram compared, the guest's count exact),
pktgen into that tap with every frame counted by the tap (ringside net
--peer vhost-net, ringside and Linux), and ringside rr's busy-poll table."""

import os
import re
import subprocess

import pytest

from ringside import guest_stats, netns, vhost_net
from ringside.process import vhost_workers
from ringside_qemu import Guest, run_command

DATAGRAMS = 200
# A client in the namespace: DATAGRAMS datagrams of 1..1400 bytes, one at
# a time, each answer compared; it never sends again, so the guest's count
# must grow by exactly DATAGRAMS.
CLIENT = r'''
import socket, sys
n, dst = int(sys.argv[1]), (sys.argv[2], 7)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(60)
for i in range(n):
    data = bytes((i * 7 + k) & 0xff for k in range(1 + i * 37 % 1400))
    s.sendto(data, dst)
    got = s.recv(2048)
    assert got == data, (i, len(got), len(data))
print('echoed', n)
'''


def _script(name, *args, timeout=900):
    return run_command(name, *args, timeout=timeout)


def udp_echoed(guest):
    """The guest's udp_echoed counter (`stats json net`)."""
    return guest_stats(guest, 60, 'net')['net']['udp_echoed']


@pytest.fixture
def tap_guest():
    assert vhost_net.usable() is None, vhost_net.usable()
    ns = netns.NetNs()
    g = None
    try:
        g = Guest('--boot', 'elf', '--accel', 'kvm', '--cmdline',
                  'ip=%s prefix=24 gw=%s' % (netns.GUEST_IP, netns.HOST_IP), '--',
                  '-netdev', 'tap,id=n0,ifname=%s,script=no,downscript=no,vhost=on' % netns.TAP,
                  '-device', 'virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56',
                  name='kvm-vhost-net')
        g.opts.qemu = ns.qemu
        g.start()
        yield g, ns
    finally:
        if g:
            g.stop()
        ns.close()


def test_udp_echo_through_vhost_net(tap_guest):
    g, ns = tap_guest
    qemu = g.launch.qemu.pid
    fds = [os.readlink('/proc/%d/fd/%s' % (qemu, fd)) for fd in os.listdir('/proc/%d/fd' % qemu)]
    assert vhost_net.DEVICE in fds, 'QEMU does not hold %s: %s' % (vhost_net.DEVICE, fds)
    assert vhost_workers(qemu), 'no vhost worker thread for QEMU %d' % qemu
    # ARP both ways first: the counted datagrams then go straight through
    ping = subprocess.run(ns.prefix() + ['ping', '-c', '1', '-W', '60', netns.GUEST_IP],
                          capture_output=True, text=True, timeout=120)
    assert ping.returncode == 0, ping.stdout + ping.stderr
    before = udp_echoed(g)
    out = subprocess.run(ns.prefix() + ['/usr/bin/python3', '-c', CLIENT, str(DATAGRAMS),
                                        netns.GUEST_IP], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == 'echoed %d' % DATAGRAMS, out.stderr
    assert udp_echoed(g) - before == DATAGRAMS


def test_pktgen_into_vhost_net_counted_by_the_tap():
    """ringside net fails unless the tap counted exactly what each pktgen sent."""
    out = _script('net', '--peer', 'vhost-net', '--count', '20000', '--rounds', '1',
                  '--no-save')
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"^ringside pktgen -> a tap .*accel kvm", out.stdout, re.M), out.stdout
    for txpoll in (1, 0):
        # ring txpoll Mpps min..max kicks/pkt ring-full exits/pkt kick/pkt
        m = re.search(r'^split\s+%d\s+([\d.]+)\s+\S+\s+[\d.]+\s+\d+\s+([\d.]+)\s+[\d.]+$'
                      % txpoll, out.stdout, re.M)
        assert m and float(m.group(1)) > 0 and float(m.group(2)) > 0, out.stdout
    assert re.search(r'^split\s+[\d.]+\s+\S+\s+0\s+[\d.]+\s+[\d.]+$', out.stdout, re.M), \
        out.stdout


def test_busy_poll_table(tmp_path):
    """ringside rr --net vhost-net: the rtt window is measured and the seed's
    columns come out for it."""
    out = _script('rr', '--net', 'vhost-net', '--guests', 'ringside', '--sizes', '64',
                  '-P', '1', '-t', '1', '--poll-us', '0,rtt', '--no-save',
                  '--plots', str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    m = re.search(r'ringside busy-poll window (\d+) us', out.stdout)
    assert m and int(m.group(1)) >= 10, out.stdout
    assert re.search(r'^ringside 1x1: vhost-net poll-us=%s against poll-us=0$' % m.group(1),
                     out.stdout, re.M), out.stdout
    assert re.search(r'^\s+64\s+1\s+[+-]\d+%\s+[+-]\d+%\s+[+-]\d+%\s+[+-]\d+%\s+[+-]\d+%',
                     out.stdout, re.M), out.stdout
