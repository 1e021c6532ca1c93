# SPDX-License-Identifier: MIT
"""The kernel's vhost-net on a tap, as the benchmarks measure it.

QEMU's `-netdev tap,vhost=on,poll-us=N` hands the tap's data path to the
kernel: a `vhost-QEMUPID` worker thread moves packets between the
virtqueues and the tap, and with poll-us > 0 it busy-polls the TX ring
and the tap's receive queue for up to N microseconds before it sleeps
(drivers/vhost/net.c, vhost_net_busy_poll). What a benchmark cell costs
the host is then three figures, each a meter with start() and stop()
returning a dict:

  CpuMeter   utime + stime of QEMU (all its threads) and of its vhost
             workers, in % of one CPU
  TapMeter   the tap's packet counters: rx (what the guest sent) and tx
             (what the host sent to the guest), with drops
  ExitMeter  the VM exits KVM counted (ringside/kvm_exits.py)

Meters(...) runs several as one. Only on a host with /dev/vhost-net
(the nested host, host/nested, or a real KVM host).
"""

import json
import os
import subprocess
import time

from . import kvm_exits, netns
from .peer import FramePeer

DEVICE = '/dev/vhost-net'


def usable():
    """Why vhost-net cannot run here, or None."""
    if not os.path.exists(DEVICE):
        return 'no %s (load vhost_net; run through host/nested on this machine)' % DEVICE
    if not os.access(DEVICE, os.R_OK | os.W_OK):
        return 'cannot open %s (run as root)' % DEVICE
    return None


def proc_ticks(pid):
    """utime + stime of `pid` (all its threads) in clock ticks, None if it
    is gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rpartition(')')[2].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])


class CpuMeter:
    """CPU, in % of one CPU, that each named group of processes used
    between start() and stop(): {'qemu': [pid], 'vhost': [pid, ...]}."""

    def __init__(self, groups):
        self.groups = {k: [int(p) for p in v if p] for k, v in groups.items()}
        self.groups = {k: v for k, v in self.groups.items() if v}
        self.hz = os.sysconf('SC_CLK_TCK')

    def _ticks(self):
        out = {}
        for k, pids in self.groups.items():
            ticks = [proc_ticks(p) for p in pids]
            out[k] = None if None in ticks else sum(ticks)
        return out

    def start(self):
        self.t0 = time.monotonic()
        self.before = self._ticks()

    def stop(self):
        wall = time.monotonic() - self.t0
        out = {}
        for k, after in self._ticks().items():
            if after is not None and self.before.get(k) is not None:
                out[k + '_cpu'] = (after - self.before[k]) / self.hz / wall * 100
        return out


class TapMeter:
    """The tap's counters in namespace `ns` (a NetNs) between start() and
    stop(): tap_rx (frames the guest sent), tap_tx (frames to the guest),
    their drops, and the seconds between."""

    def __init__(self, ns, dev):
        self.ns, self.dev = ns, dev

    def counters(self):
        out = subprocess.run(['ip', '-n', self.ns.name, '-s', '-j', 'link', 'show', self.dev],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        st = json.loads(out)[0]['stats64']
        return {'tap_rx': st['rx']['packets'], 'tap_tx': st['tx']['packets'],
                'tap_rx_bytes': st['rx']['bytes'],
                'tap_rx_dropped': st['rx']['dropped'], 'tap_tx_dropped': st['tx']['dropped']}

    def start(self):
        self.t0 = time.monotonic()
        self.before = self.counters()

    def stop(self):
        after = self.counters()
        out = {k: after[k] - self.before[k] for k in after}
        out['tap_seconds'] = time.monotonic() - self.t0
        return out


class ExitMeter:
    """Every VM exit and the notifies (kicks) KVM counted between start()
    and stop(), over an open kvm_exits.ExitCounter."""

    def __init__(self, counter):
        self.counter = counter

    def start(self):
        self.before = self.counter.snapshot()

    def stop(self):
        d = kvm_exits.delta(self.before, self.counter.snapshot())
        return {'exits': d['exits'], 'notify_exits': d['notify'], 'hlt_exits': d['hlt']}


class Meters:
    """Several meters as one: stop() merges their dicts."""

    def __init__(self, *meters):
        self.meters = [m for m in meters if m is not None]

    def start(self):
        for m in self.meters:
            m.start()

    def stop(self):
        out = {}
        for m in self.meters:
            out.update(m.stop())
        return out


class TapSink(FramePeer):
    """The receiver of a pktgen run on vhost-net: a tap in a namespace of
    its own, whose kernel counts every frame the guest sends (rx_packets;
    the frames go nowhere after), as vhost hands them over; the guest's
    QEMU runs in the namespace. queues > 1: a multi-queue tap, and the
    device offers that many pairs."""

    def __init__(self, qemu, queues=1):
        self.qemu_path, self.ns, self.queues = qemu, None, queues

    def start(self):
        self.ns = netns.NetNs(self.qemu_path, queues=self.queues)
        self.tap = TapMeter(self.ns, netns.TAP)
        self.qemu = self.ns.qemu
        return self

    def guest_qemu(self, qemu):
        return self.qemu

    def net_args(self, packed, mac):
        """virtio-net-pci on the tap through vhost-net (split ring whatever
        `packed`: the kernel's vhost has no packed ring); with more than
        one queue, an MSI-X vector per queue, the control queue's and the
        config's."""
        tap, dev = ',queues=%d' % self.queues, ',mq=on,vectors=%d' % (2 * self.queues + 2)
        more = self.queues > 1
        return ['-netdev', 'tap,id=n0,ifname=%s,script=no,downscript=no,vhost=on%s'
                % (netns.TAP, tap if more else ''),
                '-device', 'virtio-net-pci,netdev=n0,packed=off,mac=%s%s'
                % (mac, dev if more else '')]

    def port_stats(self):
        c = self.tap.counters()
        return {'rx': c['tap_rx'], 'rx_bytes': c['tap_rx_bytes'],
                'rx_dropped': c['tap_rx_dropped']}

    def received(self, st):
        return st['rx'] + st['rx_dropped']

    def stop(self):
        if self.ns:
            self.ns.close()
            self.ns = None
