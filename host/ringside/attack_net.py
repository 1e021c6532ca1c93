# SPDX-License-Identifier: MIT
"""The attack matrix's virtio-net devices: ringside's `attack net-*` modes
(drivers/virtio/net_attack.c) against device models nobody here wrote.

  net-qemu     QEMU's own virtio-net-pci, user space, on `-netdev dgram`
               to EtherPeer (ether_peer.py) on 127.0.0.1: nothing leaves
               the machine. The peer counts the hostile frames that came
               through; the bystander is a UDP echo through the guest's
               echo service, every byte compared, during and after.
  net-tap      QEMU's virtio-net (user space, vhost=off) on a tap with a
               vnet header in a private network namespace: the header goes
               on to the host kernel's tun driver with the frame. The tap's
               counters say what the kernel took; the bystander is pktgen
               after the attack, every frame counted by the tap.
  net-testpmd  virtio-net-pci on vhost-user to dpdk-testpmd (rxonly, as
               `ringside net` runs it). testpmd counts what it received;
               the bystander is pktgen after the attack, every frame of it
               counted by testpmd.

Report-only: these are not ours to fix. A cell says what the device did
with the frames and whether it went on serving:

  survives  the device answered and passed the frames on (the peer
            received every one): it did not check them
  drops     the device answered and the peer received fewer than sent (or
            the device logged them): checked and dropped
  resets    the device fell silent (e.g. QEMU's virtio_error: it stops
            the queue and wants a reset); the guest reset it and the
            bystander works afterwards
  stalls    the bystander failed after the attack, or the attack never ended
  crashes   QEMU or testpmd exited
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import ringside as rr

from . import netns
from .attack_guest import done, done_line, start, was_reset
from .ether_peer import EtherPeer, eth, ip_bytes, ipv4, mac_bytes, udp, ETH_P_IP
from .machine import LoggedLaunch
from .netguest import GUEST_IP, PEER_IP, NetError, pktgen
from .testpmd import GUEST_MAC, TestPmd, TestPmdError, guest_args
from .wait import poll_for

BOOT_TIMEOUT = 300
ATTACK_TIMEOUT = 240
ECHO_PORT = 7
ECHO_TIMEOUT = 30
PKTGEN_FRAMES = 200
# what QEMU says when it gives up on a queue (virtio_error) or aborts
QEMU_ERROR = re.compile(r'qemu-system[^\n]*')


class NetSession(LoggedLaunch):
    """One guest whose virtio-net is served by the back end under test."""

    kind = 'net'
    accel = 'tcg'
    rings = ('split', 'packed')
    peer_name = ''
    live_bystander = False

    @staticmethod
    def why_not_here():
        """None where this back end can run (main checks the TCG ones' tools)."""
        return None

    def __init__(self, ring, log_dir, accel, name, every, count, qemu_net, cmdline,
                 launcher=()):
        self.ring, self.every, self.count = ring, every, count
        args = ['--accel', accel, '--boot', 'elf', '--cmdline', cmdline, *launcher, '--',
                *qemu_net]
        super().__init__(rr.parse_args(args), accel, log_dir, name)

    def start(self):
        super().start().wait_ready(BOOT_TIMEOUT)
        return self

    def peer_alive(self):
        return True

    def alive(self):
        q = self.launch.qemu if self.launch else None
        return q is not None and q.poll() is None and self.peer_alive()

    def delivered(self):
        """Hostile frames the peer received so far."""
        raise NotImplementedError

    def begin(self):
        """A mode starts: what the back end logs from now on is its evidence."""
        self.log_mark = os.path.getsize(self.stderr_path)

    def exchange(self, n):
        """One bystander exchange while the attack runs: '' or what failed."""
        raise NotImplementedError

    def after(self):
        """The bystander after the attack: '' or what went wrong."""
        raise NotImplementedError

    def device_errors(self):
        """The back end's own words about the attack since begin()."""
        m = QEMU_ERROR.search(self.backend_log(self.log_mark))
        return m.group(0).strip() if m else ''


class NetQemu(NetSession):
    """QEMU's virtio-net on -netdev dgram to an EtherPeer."""

    peer_name = 'EtherPeer'
    live_bystander = True

    def __init__(self, ring, log_dir, accel='tcg', name=None, every=20, count=20,
                 extra_cmdline=''):
        self.peer = EtherPeer(ip=PEER_IP)
        cmdline = 'ip=%s prefix=24 gw=%s udp_echo_port=%d %s' % (
            GUEST_IP, PEER_IP, ECHO_PORT, extra_cmdline)
        net = self.peer.qemu_args(ring == 'packed', extra=',mac=' + GUEST_MAC)
        super().__init__(ring, log_dir, accel, name or 'attack-net-qemu-%s' % ring, every,
                         count, net, cmdline)

    def stop(self):
        super().stop()
        self.peer.close()

    def delivered(self):
        return self.peer.counts['tcp9'] + self.peer.counts['runts']

    def _echo(self, payload, sport):
        src, dst = self.peer.ip, ip_bytes(GUEST_IP)
        frame = eth(mac_bytes(GUEST_MAC), self.peer.mac, ETH_P_IP,
                    ipv4(src, dst, 17, udp(src, dst, sport, ECHO_PORT, payload)))
        self.peer.send(frame)
        try:
            f = self.peer.expect(lambda f: f.udp and f.udp['dport'] == sport, ECHO_TIMEOUT)
        except AssertionError as e:
            return str(e)
        if f.udp['payload'] != payload or not f.udp['csum_ok']:
            return 'udp echo: %d B back, not the %d B sent' % (
                len(f.udp['payload']), len(payload))
        return ''

    def exchange(self, n):
        return self._echo(bytes((n + i) & 0xff for i in range(1 + n * 97 % 1400)),
                          40000 + n % 1000)

    def after(self):
        # a reset device comes back with a new ring: the first echo may need
        # the guest's ARP for the peer again, within ECHO_TIMEOUT
        for size in (1, 64, 1400):
            err = self._echo(bytes(i & 0xff for i in range(size)), 41000 + size)
            if err:
                return err
        return ''


class PktgenBystander:
    """After the attack: pktgen frames to the peer, every one counted by it
    (rx_count(), the peer's received frames so far)."""

    def after(self):
        before = self.rx_count()
        try:
            sent = pktgen(self.launch.console, PKTGEN_FRAMES, 64, 32, 300, port=9)['packets']
        except NetError as e:
            return str(e)[-200:]
        # the peer's counter has no event to wait on
        got = poll_for(lambda: self.rx_count() - before >= sent and sent, 60, 0.2)
        got = self.rx_count() - before
        if sent != PKTGEN_FRAMES or got != sent:
            return 'pktgen sent %d of %d, %s received %d' % (sent, PKTGEN_FRAMES,
                                                             self.peer_name, got)
        return ''


class NetTestpmd(PktgenBystander, NetSession):
    """virtio-net on vhost-user to dpdk-testpmd rxonly."""

    peer_name = 'testpmd'

    def __init__(self, ring, log_dir, accel='tcg', name=None, every=20, count=20):
        name = name or 'attack-net-testpmd-%s' % ring
        self.workdir = tempfile.mkdtemp(prefix='ringside-attack-pmd-')
        sock = os.path.join(self.workdir, 'vhost-net.sock')
        os.makedirs(log_dir, exist_ok=True)
        self.pmd_log = open(os.path.join(log_dir, name + '.testpmd.log'), 'w')
        self.pmd = TestPmd(sock, mode='rxonly', log=self.pmd_log)
        self.base = None
        super().__init__(ring, log_dir, accel, name, every, count,
                         guest_args(sock, packed=ring == 'packed'),
                         'ip=%s gw=%s irq=poll' % (GUEST_IP, PEER_IP))

    def start(self):
        self.pmd.start()
        super().start()
        self.base = self.pmd.port_stats()
        return self

    def stop(self):
        super().stop()
        self.pmd.stop()
        self.pmd_log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def peer_alive(self):
        return self.pmd.proc is not None and self.pmd.proc.poll() is None

    def delivered(self):
        try:
            return self.pmd.port_stats()['rx'] - self.base['rx']
        except TestPmdError:
            return -1

    def begin(self):
        super().begin()
        self.pmd_mark = len(self.pmd.text)

    def device_errors(self):
        # testpmd's vhost library logs what it refuses on the data path
        m = re.search(r'[^\n]*VHOST_DATA[^\n]*', self.pmd.text[self.pmd_mark:])
        return m.group(0).strip() if m else super().device_errors()

    def rx_count(self):
        return self.pmd.port_stats()['rx']


class NetTap(PktgenBystander, NetSession):
    """QEMU's virtio-net on a tap with a vnet header, in a private netns."""

    peer_name = 'the tap'
    vhost = 'off'   # QEMU's own virtio-net; on: the kernel's vhost-net

    def __init__(self, ring, log_dir, accel='tcg', name=None, every=20, count=20):
        self.ns = netns.NetNs()
        net = ['-netdev', 'tap,id=n0,ifname=%s,script=no,downscript=no,vhost=%s,vnet_hdr=on'
               % (netns.TAP, self.vhost), '-device', 'virtio-net-pci,netdev=n0,packed=%s,mac=%s'
               % ('on' if ring == 'packed' else 'off', GUEST_MAC)]
        try:
            super().__init__(ring, log_dir, accel, name or 'attack-net-tap-%s' % ring, every,
                             count, net, 'ip=%s prefix=24 gw=%s' % (GUEST_IP, PEER_IP),
                             ('--qemu', self.ns.qemu))
        except BaseException:
            self.ns.close()
            raise

    def stop(self):
        super().stop()
        if self.ns:
            self.ns.close()
            self.ns = None

    def tap_stats(self):
        out = subprocess.run(['ip', '-n', self.ns.name, '-s', '-s', '-j', 'link', 'show',
                              netns.TAP], capture_output=True, text=True, timeout=60,
                             check=True).stdout
        return json.loads(out)[0]['stats64']['rx']

    def rx_count(self):
        return self.tap_stats()['packets']

    def begin(self):
        super().begin()
        self.rx0 = self.tap_stats()

    def delivered(self):
        return self.rx_count()

    def device_errors(self):
        own = super().device_errors()
        rx = self.tap_stats()
        moved = ' '.join('%s+%d' % (k, rx[k] - self.rx0.get(k, 0)) for k in sorted(rx)
                         if k not in ('packets', 'bytes') and isinstance(rx[k], int)
                         and rx[k] != self.rx0.get(k, 0))
        return '; '.join(x for x in (own, moved and 'tap rx ' + moved) if x)


def _wait_done(sess, res, mark):
    """The attack's end (attack_guest.done); meanwhile the live bystander,
    if the session has one. None if it did not end in ATTACK_TIMEOUT."""
    console = sess.launch.console
    deadline = time.monotonic() + ATTACK_TIMEOUT
    n = 0
    while time.monotonic() < deadline and sess.alive():
        end = done(console, mark)
        if end:
            return end
        if not sess.live_bystander or res.bystander:
            # nothing to exchange: wait for a line from the guest
            try:
                console.wait_for(r'\n', max(0.1, deadline - time.monotonic()))
            except rr.LaunchError:
                return done(console, mark)
            continue
        err = sess.exchange(n)
        n += 1
        if err:
            res.bystander = err
        else:
            res.exchanges += 1
    return None


def run_mode(sess, mode, result_class):
    """One net mode on a running session: a result_class (attack.Result)."""
    res = result_class(sess.ring, mode)
    sess.begin()
    got0 = sess.delivered()
    console = sess.launch.console
    mark = len(console.text)
    start(console, mode, sess.every, sess.count)
    end = _wait_done(sess, res, mark)
    res.guest_line = done_line(end) if end else ''
    if not sess.alive():
        res.outcome = 'crashes'
        res.guest_line = res.guest_line or 'QEMU or %s exited' % sess.peer_name
        res.violation = sess.device_errors()
        return res
    if not end:
        console.command('attack stop', 60)
        res.outcome = 'stalls'
        return res
    sent = end['sent']
    got = sess.delivered() - got0
    res.violation = sess.device_errors()  # before the bystander's own frames
    res.after = sess.after()
    res.delta = {'sent': sent, 'delivered': got}
    if res.after:
        res.outcome = 'stalls'
    elif was_reset(end):
        res.outcome = 'resets'
    elif res.bystander:
        res.outcome = 'stalls'
    elif got < sent or res.violation:
        res.outcome = 'drops'
    else:
        res.outcome = 'survives'
    return res


SESSIONS = {'net-qemu': NetQemu, 'net-tap': NetTap, 'net-testpmd': NetTestpmd}
