# SPDX-License-Identifier: MIT
"""attacks: what a back end makes of a hostile guest.

ringside's `attack MODE` writes malformed vsock headers, forged ring
entries or virtio-net frames a driver must not send into its live TX
queue; for each device and ring layout one guest boots and every mode
runs in turn, while a bystander checks every byte. Per mode: survives,
drops, resets, stalls or crashes, with the evidence (ringside/attack.py).
The vsock modes run against our back end (its counters are the evidence:
its control socket), the virtio-net modes against QEMU's virtio-net and
dpdk-testpmd, and under KVM against the kernel's vhost-vsock and vhost-net
(--devices).
"""

import os
import shutil
import sys

import ringside as rr

from .. import attack_net, measure
from ..attack import DEVICE_NAMES, RINGS, devices, run_session
from ..cli import Parser, positive_int
from ..images import DEFAULT_VSOCK_BACKEND, REPO
from ..results import Cells, add_options, publish
from ..table import Column, Table

NAME = 'attacks'
SUMMARY = "the guest's hostile-driver modes against a back end"
GROUP = 'check'
ALIASES = ('attack-matrix',)
PROG = 'ringside attacks'


def print_table(results, rings, modes):
    t = Table([Column('mode', 22, left=True)] + [Column(r, 9, left=True) for r in rings]
              + [Column('evidence', left=True)])
    for m in modes:
        cells = [results.get(r, {}).get(m) for r in rings]
        ev = ['%s: %s' % (r, res.evidence()) for r, res in zip(rings, cells)
              if res and res.outcome != '-']
        t.row(m, *[res.outcome if res else None for res in cells], ' | '.join(ev))
    t.print()


def main(argv):
    p = Parser(prog=PROG, description=__doc__.split('\n')[0], usage='%(prog)s [options]')
    p.add_argument('--devices', default='ours', metavar='LIST',
                   help='comma-separated: %s (ours: our back end, vsock); kernel and '
                        'net-vhost under KVM (ringside nested attacks --devices '
                        'kernel,net-vhost)' % ','.join(DEVICE_NAMES))
    p.add_argument('--rings', metavar='LIST',
                   help='split,packed (each device the layouts it has)')
    p.add_argument('--modes', metavar='LIST',
                   help='comma-separated (default: every mode of `attack list`)')
    p.add_argument('--every', type=positive_int, default=20, metavar='MS',
                   help='ms between attack packets (20)')
    measure.add(p, count=20)
    add_options(p)
    p.add_argument('-v', '--verbose', action='store_true', help='a line per mode as it ends')
    opts = p.parse_args(argv)
    opts.argv = argv
    table = devices()
    asked = [b for b in opts.devices.split(',') if b]
    if not asked or any(b not in table for b in asked):
        p.error('--devices takes %s' % ','.join(DEVICE_NAMES))
    for b in asked:
        why = table[b][0].why_not_here()
        if why:
            p.error('--devices %s: %s' % (b, why))
    if 'ours' in asked and not os.path.exists(DEFAULT_VSOCK_BACKEND):
        p.error('%s missing: run make' % os.path.relpath(DEFAULT_VSOCK_BACKEND, REPO))
    if 'net-tap' in asked and not attack_net.netns.usable():
        p.error('net-tap needs root, /dev/net/tun and ip netns')
    if 'net-testpmd' in asked and not shutil.which('dpdk-testpmd'):
        p.error('dpdk-testpmd not installed (make deps)')
    rings = [r for r in (opts.rings or ','.join(RINGS)).split(',') if r]
    if not rings or any(r not in RINGS for r in rings):
        p.error('--rings takes split,packed')
    modes = [m for m in opts.modes.split(',') if m] if opts.modes else None
    cells = []
    for b in asked:
        cls = table[b][0]
        b_rings = [r for r in rings if r in cls.rings]
        if opts.rings and len(b_rings) < len(rings):
            p.error('--devices %s has %s rings only' % (b, ','.join(cls.rings)))
        results = {}
        for r in b_rings:
            try:
                results[r] = run_session(r, modes, accel=cls.accel, every=opts.every,
                                         count=opts.count, verbose=opts.verbose, device=b)
            except (RuntimeError, OSError, rr.LaunchError) as e:
                sys.stderr.write('%s: %s %s: %s\n' % (PROG, b, r, e))
        all_modes = modes or [m for r in b_rings for m in results.get(r, {}) if m != '_status']
        all_modes = list(dict.fromkeys(all_modes))
        print('%s: attack modes x %s, every=%d count=%d (%s)'
              % (PROG, table[b][2], opts.every, opts.count, cls.accel.upper()))
        print_table(results, b_rings, all_modes)
        cells += [{'backend': b, 'accel': cls.accel, 'ring': r, 'mode': m,
                   'outcome': v.outcome, 'evidence': v.evidence(), 'delta': v.delta,
                   'exchanges': v.exchanges}
                  for r in results for m, v in results[r].items() if m != '_status']
    accels = sorted({table[b][0].accel for b in asked})
    counted = Cells()
    for c in cells:
        counted.add({'cell': 'attack', 'device': c['backend'], 'ring': c['ring'],
                     'mode': c['mode']}, 'exact exchanges', 'exchanges', c['exchanges'])
    publish(PROG, opts, {'cells': cells}, counted, accel=','.join(accels))
    return 0
