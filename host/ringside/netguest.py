# SPDX-License-Identifier: MIT
"""ringside's virtio-net as the commands drive it: its addresses on the
peers' link, pktgen and netsink through their JSON forms, the queue pairs
in use, and the QEMU options both guests get toward a frame peer.
"""

import os

from .guest_stats import guest_stats, json_of
from .netns import GUEST_IP, HOST_IP
from .wait import poll_for

PEER_IP = HOST_IP
PEER_MAC = '02:00:00:00:00:02'  # testpmd does not filter; any unicast MAC
RING_CHOICES = ('split', 'packed')

__all__ = ['GUEST_IP', 'PEER_IP', 'PEER_MAC']


class NetError(Exception):
    """A guest or peer that did not do what a net command asked."""


def pktgen(console, count, size, burst, timeout, dst_ip=PEER_IP, dst_mac=PEER_MAC, queues=1,
           port=None):
    """ringside's `pktgen ... json`: packets, count, size, seconds, mpps,
    kicks, kicks_per_packet, ring_full, burst, stalled, per queue and (more
    than one CPU sending) cpu_mpps {cpu: Mpps}."""
    cmd = 'pktgen count=%d size=%d burst=%d dst=%s,%s' % (count, size, burst, dst_ip, dst_mac)
    cmd += ' queues=%d' % queues if queues > 1 else ''
    cmd += ' port=%d' % port if port else ''
    try:
        r = json_of(console, cmd, timeout)
    except Exception as e:   # the guest's own error line
        raise NetError('pktgen: %s' % e)
    secs = r['ns'] / 1e9
    cpus = [c for c in r['cpus'] if c['sent']]
    return {'packets': r['sent'], 'count': r['count'], 'size': r['size'], 'seconds': secs,
            'mpps': r['sent'] / secs / 1e6 if secs > 0 else 0.0, 'kicks': r['kicks'],
            'kicks_per_packet': r['kicks'] / r['sent'] if r['sent'] else 0.0,
            'ring_full': r['ring_full'], 'burst': r['burst'], 'stalled': r['stalled'],
            'queues': r['queues'],
            'cpu_mpps': {c['cpu']: c['sent'] / (c['ns'] / 1e3) if c['ns'] else 0.0
                         for c in cpus} if len(cpus) > 1 else {}}


def netsink(console, what, timeout):
    """`netsink show|off json` as frames, bytes, seconds (first to last
    frame), mpps, drops {reason: n}, drops_total, refill_fail."""
    r = json_of(console, 'netsink %s' % what, timeout)
    secs = r['ns'] / 1e9
    drops = dict(r.get('drops', {}))
    total = drops.pop('total', 0)
    refill = drops.pop('refill_fail', 0)
    # the rate counts the gaps between frames: n frames span n - 1 of them
    return {'frames': r['frames'], 'bytes': r['bytes'], 'seconds': secs,
            'mpps': (r['frames'] - 1) / secs / 1e6 if secs > 0 else 0.0, 'drops': drops,
            'drops_total': total, 'refill_fail': refill, 'queues': r['queues'],
            'device_changed': r['device_changed']}


def pairs_in_use(console, timeout=60):
    """Queue pairs in use (`stats json net`) once the device answered
    VQ_PAIRS_SET: all the pairs set up are in use, or the ack failed (the
    guest counts mq_ack_err, mq_ack_bad, mq_timeout and keeps one), or
    `timeout` passed; None without a network device."""
    def net():
        return guest_stats(console, 60, 'net')['net']

    def settled():
        n = net()
        failed = sum(n.get(k, 0) for k in ('mq_ack_err', 'mq_ack_bad', 'mq_timeout'))
        return n if not n.get('device') or failed or \
            n['queues_in_use'] == len(n['queues']) else None
    n = poll_for(settled, timeout, interval=0.5) or net()
    return n['queues_in_use'] if n.get('device') else None


def check_key(console, key, value, timeout):
    """NetError unless the guest took key=value: its own answer to
    `get KEY` (an older ringside: "error: unknown key ...")."""
    got = console.command('get %s' % key, timeout).strip()
    if got != '%s=%s' % (key, value):
        raise NetError('ringside did not take %s=%s: %s' % (key, value, got))


def pinned_qemu(workdir, cpu, qemu):
    """A wrapper that runs QEMU (all its threads) on one CPU."""
    wrapper = os.path.join(workdir, 'qemu-pinned')
    if not os.path.exists(wrapper):
        with open(wrapper, 'w') as f:
            f.write('#!/bin/sh\nexec taskset -c %d %s "$@"\n' % (cpu, qemu))
        os.chmod(wrapper, 0o755)
    return wrapper
