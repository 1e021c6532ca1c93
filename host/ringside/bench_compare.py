# SPDX-License-Identifier: MIT
"""bench-compare: ringside vs a Linux guest on the same QEMU, back end and client.

For each ring layout (the device's packed=off|on) and back-end mode (sleeping
on eventfds, or --poll), boot ringside and then the Linux baseline guest
(build/linux-guest, Debian's kernel with a static echo/sink/source server on
the same ports) behind build/host/ringside-vhost-vsock, run the same
ringside-bench ping-pong and stream cells against each, and print both with
the ratio ringside/Linux per cell. Latency ratios below 1 and throughput
ratios above 1 favour ringside.

Needs `make` and `make linux-guest`. Under TCG only the ratios mean much.
"""

import json
import os

import ringside as rr

from .benchlib import BENCH, REPO, Parser, run_bench, wait_vsock_up

PROG = 'bench-compare'
LINUX_KERNEL = os.path.join(REPO, 'build', 'linux-guest', 'bzImage')
LINUX_INITRD = os.path.join(REPO, 'build', 'linux-guest', 'initrd')
LINUX_READY = r'ringside-linux-guest: ready'


def measure(uds, opts):
    """One guest's cells: {(kind, size/len, dir): value}."""
    cells = {}
    pp = run_bench(['pingpong', '--uds', uds, '--size', ','.join(map(str, opts.sizes)),
                    '--count', str(opts.count), '--warmup', str(opts.warmup)], 900, PROG)
    for r in pp['results']:
        cells[('p50 ns', r['size'], '')] = r['p50']
        cells[('mean ns', r['size'], '')] = r['mean']
    for d, port in (('h2g', 1235), ('g2h', 1236)):
        st = run_bench(['stream', '--uds', uds, '--port', str(port), '--dir', d, '-l', '65536',
                        '-P', '1', '--time', str(opts.time)], opts.time * 10 + 120, PROG)
        cells[('Gb/s', 65536, d)] = st['gbps']
    return cells


def run_guest(launcher, accel, which, packed, poll, opts):
    args = ['--vsock', '--accel', accel, '--qemu-arg=-global',
            '--qemu-arg=vhost-user-vsock-pci.packed=%s' % ('on' if packed else 'off')]
    if poll:
        args.append('--vsock-arg=--poll')
    if which == 'linux':
        args += ['--boot', 'elf', '--kernel', LINUX_KERNEL,
                 '--cmdline', 'console=ttyS0 quiet panic=-1',
                 '--qemu-arg=-initrd', '--qemu-arg=%s' % LINUX_INITRD]
    else:
        args += ['--boot', 'elf']
    lopts = launcher.parse_args(args)
    log = open(os.path.join(REPO, 'build', 'bench-compare-%s.log' % which), 'a')
    with launcher.Launch(lopts, accel, qemu_stderr=log) as launch:
        if which == 'linux':
            launch.console.wait_for(LINUX_READY, 300)
        else:
            launch.wait_ready()
        wait_vsock_up(launch.opts.vsock_uds, prog=PROG)
        return measure(launch.opts.vsock_uds, opts)


def main(argv):
    p = Parser(prog='bench-compare', description=__doc__.split('\n')[0])
    p.add_argument('--sizes', default='64,512,4096', help='ping-pong sizes (64,512,4096)')
    p.add_argument('--count', type=int, default=500, help='round trips per size (500)')
    p.add_argument('--warmup', type=int, default=50)
    p.add_argument('--time', type=float, default=3.0, help='seconds per stream cell (3)')
    p.add_argument('--json', metavar='FILE', help='also write the results as JSON')
    opts = p.parse_args(argv)
    try:
        opts.sizes = [int(s) for s in opts.sizes.split(',')]
    except ValueError:
        p.error('--sizes takes numbers, e.g. 64,512,4096')
    for path in (BENCH, LINUX_KERNEL, LINUX_INITRD):
        if not os.path.exists(path):
            p.error('%s missing: run make and make linux-guest' % os.path.relpath(path, REPO))
    accel = 'kvm' if rr.kvm_usable() and rr.probe_kvm(
            rr.parse_args(['--boot', 'elf'])) else 'tcg'
    rows, out = [], {}
    for packed in (False, True):
        for poll in (False, True):
            conf = '%s %s' % ('packed' if packed else 'split', 'poll' if poll else 'sleep')
            res = {w: run_guest(rr, accel, w, packed, poll, opts)
                   for w in ('ringside', 'linux')}
            out[conf] = {w: {'%s %s %s' % k: v for k, v in res[w].items()} for w in res}
            for key in res['ringside']:
                r, lx = res['ringside'][key], res['linux'][key]
                rows.append((conf, key, r, lx, r / lx if lx else float('nan')))
    print('ringside vs Linux guest, same QEMU (%s), back end and client' % accel)
    print('%-14s %-8s %6s %4s %12s %12s %8s' % ('config', 'metric', 'size', 'dir', 'ringside',
                                                'linux', 'ratio'))
    for conf, (metric, size, d), r, lx, ratio in rows:
        print('%-14s %-8s %6d %4s %12.3f %12.3f %8.2f' % (conf, metric, size, d, r, lx, ratio))
    if opts.json:
        with open(opts.json, 'w') as f:
            json.dump(out, f, indent=1)
    return 0
