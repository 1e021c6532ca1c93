# SPDX-License-Identifier: MIT
"""rr: request/response at scale, ringside vs Linux, in one command.

Like netperf TCP_RR and UDP_RR with many sessions, as vhost_net's
busy-polling series measured: for each guest (ringside, and the Linux
baseline of `make linux-guest`) and each back-end mode (sleeping on
eventfds, or `--poll`), boot the guest with vsock through
build/host/ringside-vhost-vsock and virtio-net on a tap in a network
namespace made for the run, then run `ringside-bench rr` for every
(sessions, size) cell: over vsock against the echo service (port 1234),
and, once per guest, over UDP against the guest's UDP echo (port 7) from
inside the namespace. Each cell reports transactions/s (total and per
session), latency percentiles over all transactions, Jain's fairness index
over sessions, and the CPU the back end and QEMU burned during the cell
(utime + stime from /proc/PID/stat, % of one CPU). With --cost the guest
runs under the cost plugin (build/host/ringside-cost.so) and each cell also
reports guest instructions per transaction: the instructions over the whole
cell (connects and warm-up included) over the measured transactions.

Prints a table per transport, the ringside/Linux ratio and the poll/sleep
gain per cell, and writes PNG plots (transactions/s and latency against
sessions) into build/bench/. Needs root for the namespace (without it the
UDP cells are skipped, with a note). Under TCG only ratios mean much.

--net vhost-net (seed 003, vhost_net busy polling): the tap is served by
the kernel's vhost-net instead of QEMU, and only the UDP cells run, once
per busy-poll window (QEMU's -netdev tap,vhost=on,poll-us=N; one boot
each). Every cell adds what it cost the host (ringside/vhost_net.py): CPU
of QEMU and its vhost workers, the tap's packets, KVM's exits; a table per
window against poll-us=0 has the seed's columns. The window `rtt` is the
measured p50 round trip of the poll-us=0 boot: the seed's 50 us is about
one round trip on bare-metal KVM, and nesting makes a round trip ten times
longer, so 50 us there polls for a fraction of the wait. Runs where
/dev/vhost-net is (`ringside nested rr --net vhost-net`).
"""

import argparse
import contextlib
import io
import itertools
import json
import os
import subprocess
import time

import ringside as rr

from .. import cost, kvm_exits, linux_guest, measure, netns, vhost_net
from ..backends import refuse_missing
from ..benchlib import BENCH, REPO, booted, wait_vsock_up
from ..cli import LAUNCHER_EPILOG, Parser, positive_float, shape_label, shape_list
from ..config_doc import key_range
from ..guest_stats import guest_stats
from ..images import COST_PLUGIN, LINUX_GUESTS, is_linux, linux_missing
from ..netguest import pairs_in_use
from ..netns import net_args, ringside_cmdline
from ..process import vhost_workers
from ..results import Cells, add_options, publish
from ..table import Column, Table
from ..vhost_net import CpuMeter, ExitMeter, Meters, TapMeter
from ..wait import poll_for

NAME = 'rr'
SUMMARY = 'request/response at scale (TCP_RR/UDP_RR), vs Linux'
GROUP = 'measure'
ALIASES = ('bench-rr',)
PROG = 'ringside rr'
OUT_DIR = os.path.join(REPO, 'build', 'bench')


def guest_args(which, poll, ns, poll_us=None, shape=(1, 1)):
    """Launcher arguments; with poll_us (an int) the tap is served by the
    kernel's vhost-net, busy polling that many microseconds; shape is
    (vCPUs, virtio-net queue pairs)."""
    smp, queues = shape
    args = ['--vsock', '--boot', 'elf']
    if poll:
        args.append('--vsock-arg=--poll')
    if smp > 1:
        args += ['--qemu-arg=-smp', '--qemu-arg=%d' % smp]
    if is_linux(which):
        # Linux enables min(queue pairs, CPUs) pairs by itself
        args += linux_guest.linux_launch_args(which)
    elif ns:
        args += ['--cmdline', ringside_cmdline(queues)]
    if ns:
        args += net_args(queues, poll_us)
    return args


def irq_pairs(before, after):
    """RX queues whose interrupts grew from `before` to `after`."""
    return sum(1 for q, n in after.items() if n > before.get(q, 0))


def queue_pairs(launch, which, irqs_before):
    """(pairs enabled, pairs whose RX interrupts grew during the cells):
    ringside counts its pairs in use itself (`net`; None for the second);
    the Linux guest's come from sysfs and /proc/interrupts (a pair no flow
    hashed to takes no interrupts: fewer sessions than pairs can show
    fewer)."""
    if not is_linux(which):
        return pairs_in_use(launch.console), None
    seen = irq_pairs(irqs_before, linux_guest.rx_irqs(launch.console))
    return linux_guest.queue_pairs(launch.console), seen


def pairs_note(which, shape, enabled, seen):
    words = ['%s %s: %d queue pair(s) offered' % (which, shape_label(shape), shape[1])]
    words.append('%s enabled (%s)' % ('?' if enabled is None else enabled,
                                      '/sys/class/net/eth0/queues' if is_linux(which)
                                      else "the guest's `net`"))
    if seen is not None:
        words.append('%d took RX interrupts in the UDP cells' % seen)
    return '  ' + ', '.join(words)


def rr_cell(target, sessions, size, opts, meter, prefix=(), block=None):
    """One cell; with the cost block (`block`), guest instructions per
    transaction, in all and on each vCPU: the instructions of the whole
    cell (connect, warm-up and close included) over the measured
    transactions."""
    args = ['rr'] + target + ['--sessions', str(sessions), '--size', str(size),
                              '--time', str(opts.time), '--warmup', str(opts.warmup)]
    meter.start()
    before = block.snapshot() if block else None
    proc = subprocess.run(list(prefix) + [BENCH] + args + ['--json'], capture_output=True,
                          text=True, timeout=opts.time * 20 + 600)
    if proc.returncode != 0:
        # one failed cell (a guest that cannot take N sessions) is a
        # finding, not the end of the run
        print('%s: ringside-bench %s failed (%d): %s' % (
                PROG, ' '.join(args), proc.returncode, proc.stderr.strip()), flush=True)
        return None
    res = json.loads(proc.stdout)['results'][0]
    res.update(meter.stop())
    if block:
        res.update(insns_per_txn(block.snapshot() - before, res['transactions']))
    return res


def insns_per_txn(delta, txns):
    """The cost block's instructions (a cost.Counters delta) per
    transaction: in all, and a list with one figure per vCPU."""
    def per(insns):
        return insns / txns if txns else None
    return {'guest_insns': delta.totals['insns'], 'insns_per_txn': per(delta.totals['insns']),
            'insns_per_txn_vcpu': [per(v['insns']) for v in delta.vcpus]}


def wait_echo_idle(launch, timeout=120):
    """ringside: wait until the echo service has closed the previous
    cell's sessions, so the next cell's fit in its connection table."""
    poll_for(lambda: guest_stats(launch.console, 60, 'services')['services']['echo']['conns']
             == 0, timeout, interval=0.5)


def booted_guest(which, lopts, accel):
    return booted(lopts, accel, 'rr-' + which, linux=is_linux(which))


def boot_and_measure(which, poll, opts, accel, ns, rows, shape=(1, 1)):
    cost_path = None
    args = ['--accel', accel] + guest_args(which, poll, ns, shape=shape)
    if opts.cost is not None:
        cost_path = os.path.join(REPO, 'build', 'rr-%s.cost' % which)
        args = ['--cost-block', cost_path + (',' + opts.cost if opts.cost else '')] + args
    lopts = rr.parse_args(args + opts.launcher_args)
    if ns:
        lopts.qemu = ns.qemu   # --qemu PATH runs inside it
    backend = 'poll' if poll else 'sleep'
    with booted_guest(which, lopts, accel) as launch:
        uds = launch.opts.vsock_uds
        wait_vsock_up(uds, prog=PROG)
        be = [p.pid for name, p in launch.children.procs if name == 'vhost-vsock']
        meter = CpuMeter({'backend': be[:1], 'qemu': [launch.qemu.pid]})
        # the plugin creates the block when QEMU starts, long before ready
        block = cost.CostBlock(cost_path) if cost_path else None
        for sessions in opts.parallel:
            for size in opts.sizes:
                if which == 'ringside':
                    wait_echo_idle(launch)
                res = rr_cell(['--uds', uds], sessions, size, opts, meter, block=block)
                if not res:
                    continue
                rows.append(dict(res, guest=which, transport='vsock', backend=backend,
                                 shape=shape_label(shape)))
                progress(rows[-1])
        if ns and not poll:
            udp_cells(launch, which, opts, ns, meter, rows, '-', block, shape)
        if which == 'ringside':
            launch.poweroff()


def udp_cells(launch, which, opts, ns, meter, rows, backend, block=None, shape=(1, 1)):
    """Every (sessions, size) cell over UDP to the guest's echo (port 7)
    from inside the namespace; each row also gets the queue pairs the
    guest enabled (queue_pairs)."""
    irqs = {}
    if is_linux(which):
        launch.console.send('udpecho\n')
        launch.console.wait_for(r'udpecho (ready|error.*)', 120)
        irqs = linux_guest.rx_irqs(launch.console)
    target = ['--udp', '%s:7' % netns.GUEST_IP, '--udp-timeout', str(opts.udp_timeout)]
    first = len(rows)
    for sessions in opts.parallel:
        for size in opts.sizes:
            res = rr_cell(target, sessions, size, opts, meter, prefix=ns.prefix(), block=block)
            if not res:
                continue
            rows.append(dict(res, guest=which, transport='udp', backend=backend,
                             shape=shape_label(shape)))
            host_costs(rows[-1])
            progress(rows[-1])
    enabled, seen = queue_pairs(launch, which, irqs)
    print(pairs_note(which, shape, enabled, seen), flush=True)
    for r in rows[first:]:
        r['pairs'] = enabled
        if seen is not None:
            r['pairs_rx_irqs'] = seen


def host_costs(r):
    """Per-cell host figures from the vhost-net meters: CPU of QEMU and
    its vhost workers, transactions/s per CPU, tap packets/s, exits."""
    if 'tap_seconds' not in r:
        return
    secs = r['tap_seconds']
    r['host_cpu'] = r.get('qemu_cpu', 0) + r.get('vhost_cpu', 0)
    r['tps_per_cpu'] = r['tps'] / r['host_cpu'] * 100 if r['host_cpu'] else None
    r['tx_pps'], r['rx_pps'] = r['tap_tx'] / secs, r['tap_rx'] / secs
    if 'exits' in r:
        r['exits_per_s'] = r['exits'] / secs
        txns = r['transactions']
        r['exits_per_txn'] = r['exits'] / txns if txns else None
        r['notify_per_txn'] = r['notify_exits'] / txns if txns else None


def boot_vhost_net(which, poll_us, opts, accel, ns, exits, rows, shape=(1, 1)):
    """One boot of `which` with its virtio-net on the kernel's vhost-net,
    busy polling poll_us: the UDP cells, with the host's CPU, the tap's
    packets and KVM's exits per cell. False if the guest did not come up."""
    lopts = rr.parse_args(['--accel', accel] + guest_args(which, False, ns, poll_us, shape)
                          + opts.launcher_args)
    lopts.qemu = ns.qemu
    try:
        with booted_guest(which, lopts, accel) as launch:
            qemu = launch.qemu.pid
            meter = Meters(CpuMeter({'qemu': [qemu], 'vhost': vhost_workers(qemu)}),
                           TapMeter(ns, netns.TAP), ExitMeter(exits) if exits else None)
            udp_cells(launch, which, opts, ns, meter, rows, 'pu%d' % poll_us, shape=shape)
            if which == 'ringside':
                launch.poweroff()
    except rr.LaunchError as e:
        # a finding (the Linux guest once did not boot with poll-us=500),
        # not the end of the run
        print('%s: %s %s with poll-us=%d: %s' % (PROG, which, shape_label(shape), poll_us, e),
              flush=True)
        return False
    return True


def rtt_window(rows, which, shape='1x1'):
    """The busy-poll window that covers one round trip on this host: the
    p50 of `which`'s smallest cell (fewest sessions, smallest size) at
    poll-us=0 in that shape, rounded up to 10 us; (window, p50 ns), or None."""
    base = [r for r in rows if r['guest'] == which and r['backend'] == 'pu0'
            and r.get('shape', '1x1') == shape]
    if not base:
        return None
    r = min(base, key=lambda r: (r['sessions'], r['size']))
    return -(-int(r['p50']) // 10000) * 10, r['p50']


def measure_vhost_net(opts, guests, accel, base, rows):
    """--net vhost-net: per shape and guest, one boot per busy-poll window,
    the windows in --poll-us order ('rtt' after the poll-us=0 boot)."""
    try:
        exits = kvm_exits.ExitCounter()
    except kvm_exits.ExitsUnavailable as e:
        print('%s: no exit counts: %s' % (PROG, e))
        exits = None
    windows = {}
    try:
        for shape in opts.shape:
            for which in guests:
                vhost_net_windows(opts, which, shape, accel, base, exits, rows, windows)
    finally:
        if exits:
            exits.close()
    return windows


def vhost_net_windows(opts, which, shape, accel, base, exits, rows, windows):
    """The --poll-us boots of one guest in one shape; the rtt window goes
    into `windows` under the guest's name (with the shape unless 1x1)."""
    label = shape_label(shape)
    name = which if label == '1x1' else '%s %s' % (which, label)
    for w in opts.poll_us:
        if w == 'rtt':
            got = rtt_window(rows, which, label)
            if not got:
                print('%s: %s: no poll-us=0 cell to take the round trip from' % (PROG, name))
                continue
            w, p50 = got
            windows[name] = {'poll_us': w, 'p50_ns': p50}
            print('%s: %s busy-poll window %d us: the p50 round trip (%.0f us) of its '
                  'smallest cell at poll-us=0' % (PROG, name, w, p50 / 1000), flush=True)
        with netns.NetNs(base.qemu, queues=shape[1]) as ns:
            boot_vhost_net(which, w, opts, accel, ns, exits, rows, shape)


def insns_text(r):
    v = r.get('insns_per_txn')
    return ', %.0f guest insns/txn' % v if v is not None else ''


def progress(r):
    print('  %-8s %-5s %-5s %-5s %4d x %5d B: %10.1f tps, p99 %9.0f ns, jain %.3f%s'
          % (r['guest'], r['shape'], r['transport'], r['backend'], r['sessions'], r['size'],
             r['tps'], r['p99'], r['jain'], insns_text(r)), flush=True)


def print_rows(rows):
    t = Table([Column('guest', 8, left=True), Column('shape', 5, left=True),
               Column('pairs', 5, '%d'), Column('trans', 5, left=True),
               Column('back', 5, left=True), Column('sess', 5, '%d'), Column('size', 5, '%d'),
               Column('tps', 10, '%.1f'), Column('tps/sess', 9, '%.2f'),
               Column('p50 ns', 9, '%.0f'), Column('p99 ns', 9, '%.0f'),
               Column('jain', 6, '%.3f'), Column('slowest', 9, '%.2f'),
               Column('be cpu', 7, '%.1f'), Column('qemu', 7, '%.1f'),
               Column('insns/txn', 10, '%.0f')],
              title='\nrequest/response (response = request size); CPU in % of one CPU; '
                    'shape: vCPUs x virtio-net queue pairs, pairs: enabled by the guest')
    for r in rows:
        t.row(r['guest'], r['shape'], r.get('pairs'), r['transport'], r['backend'],
              r['sessions'], r['size'], r['tps'],
              r['tps_per_session'], r['p50'], r['p99'], r['jain'], r['slowest_tps'],
              r.get('backend_cpu', r.get('vhost_cpu', 0)), r.get('qemu_cpu', 0),
              r.get('insns_per_txn'))
    t.print()


def print_vcpu_cost(rows):
    """--cost: guest instructions per transaction on each vCPU beside the
    total, and the total against the same cell in shape 1x1: flat (1.00)
    when adding vCPUs and queue pairs spreads the work without adding to it."""
    costed = [r for r in rows if r.get('insns_per_txn_vcpu')]
    if not costed:
        return
    n = max(len(r['insns_per_txn_vcpu']) for r in costed)
    one = {(r['guest'], r['transport'], r['backend'], r['sessions'], r['size']): r
           for r in costed if r['shape'] == '1x1'}
    t = Table([Column('guest', 8, left=True), Column('shape', 5, left=True),
               Column('trans', 5, left=True), Column('back', 5, left=True),
               Column('sess', 5, '%d'), Column('size', 5, '%d'), Column('total', 10, '%.0f'),
               Column('vs 1x1', 7, '%.2f')] + [Column('cpu%d' % i, 10, '%.0f') for i in range(n)],
              title='\nguest instructions per transaction (--cost): in all, against shape 1x1, '
                    'per vCPU')
    for r in costed:
        base = one.get((r['guest'], r['transport'], r['backend'], r['sessions'], r['size']))
        ratio = (r['insns_per_txn'] / base['insns_per_txn']
                 if base and base['insns_per_txn'] and r['insns_per_txn'] is not None else None)
        per = r['insns_per_txn_vcpu']
        t.row(r['guest'], r['shape'], r['transport'], r['backend'], r['sessions'], r['size'],
              r['insns_per_txn'], ratio, *(per + [None] * (n - len(per))))
    t.print()


def index(rows):
    return {(r['shape'], r['guest'], r['transport'], r['backend'], r['sessions'], r['size']): r
            for r in rows}


def print_ratios(rows):
    idx = index(rows)
    for linux in LINUX_GUESTS:
        if not any(k[1] == linux for k in idx):
            continue
        out = Table([Column('shape', 5, left=True), Column('trans', 5, left=True),
                     Column('back', 5, left=True),
                     Column('sess', 5, '%d'), Column('size', 5, '%d'),
                     Column('tps rs', 10, '%.1f'), Column('tps ' + linux, 10, '%.1f'),
                     Column('tps', 8, '%.2f'), Column('p99', 8, '%.2f')],
                    title='\nringside / %s (tps ratio > 1 and p99 ratio < 1 favour ringside)'
                          % linux)
        for (h, g, t, b, s, z), r in idx.items():
            lx = idx.get((h, linux, t, b, s, z))
            if g != 'ringside' or not lx:
                continue
            out.row(h, t, b, s, z, r['tps'], lx['tps'], r['tps'] / lx['tps'] if lx['tps'] else 0,
                    r['p99'] / lx['p99'] if lx['p99'] else 0)
        out.print()
    out = Table([Column('guest', 8, left=True), Column('shape', 5, left=True),
                 Column('sess', 5, '%d'),
                 Column('size', 5, '%d'), Column('tps sleep', 10, '%.1f'),
                 Column('tps poll', 10, '%.1f'), Column('gain', 7, '%.2f'),
                 Column('cpu slp', 8, '%.1f'), Column('cpu poll', 8, '%.1f')],
                title='\nback end --poll against sleeping (vsock): gain and the CPU it costs')
    for (h, g, t, b, s, z), r in idx.items():
        p = idx.get((h, g, t, 'poll', s, z))
        if t != 'vsock' or b != 'sleep' or not p:
            continue
        out.row(g, h, s, z, r['tps'], p['tps'], p['tps'] / r['tps'] if r['tps'] else 0,
                r.get('backend_cpu', 0), p.get('backend_cpu', 0))
    out.print()


def pct(new, old):
    """'+4%' for the change from old to new; '-' where either is missing."""
    if new is None or not old:
        return '-'
    return '%+.0f%%' % ((new / old - 1) * 100)


def print_busy_poll(rows):
    """vhost-net: each busy-poll window against poll-us=0, per guest, in
    the seed's columns (size/session/+thu%/+normalize%/+tpkts%/+rpkts%/
    +ioexits%); normalize is transactions/s per host CPU (QEMU and its
    vhost workers), packets are the tap's, exits KVM's per second."""
    idx = index(rows)
    boots = list(dict.fromkeys((r['guest'], r['shape']) for r in rows
                               if r['backend'].startswith('pu')))
    for g, h in boots:
        windows = sorted({int(r['backend'][2:]) for r in rows
                          if (r['guest'], r['shape']) == (g, h)
                          and r['backend'].startswith('pu')} - {0})
        for w in windows:
            out = Table([Column('size', 5, '%d'), Column('session', 7, '%d'),
                         Column('+thu', 6), Column('+normalize', 10), Column('+tpkts', 7),
                         Column('+rpkts', 7), Column('+exits', 7), Column('p50 us 0 -> w', 15),
                         Column('exits/txn 0->w', 15)],
                        title='\n%s %s: vhost-net poll-us=%d against poll-us=0' % (g, h, w))
            for (h2, g2, t, b, s, z), r in idx.items():
                p = idx.get((h, g, t, 'pu%d' % w, s, z))
                if (h2, g2) != (h, g) or b != 'pu0' or not p:
                    continue
                ept = ('%.2f -> %.2f' % (r['exits_per_txn'], p['exits_per_txn'])
                       if r.get('exits_per_txn') is not None
                       and p.get('exits_per_txn') is not None else None)
                out.row(z, s, pct(p['tps'], r['tps']),
                        pct(p.get('tps_per_cpu'), r.get('tps_per_cpu')),
                        pct(p.get('tx_pps'), r.get('tx_pps')),
                        pct(p.get('rx_pps'), r.get('rx_pps')),
                        pct(p.get('exits_per_s'), r.get('exits_per_s')),
                        '%.0f -> %.0f' % (r['p50'] / 1000, p['p50'] / 1000), ept)
            out.print()


def plot(rows, out_dir):
    """rr-tps.png and rr-latency.png; None if matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    os.makedirs(out_dir, exist_ok=True)
    sizes = sorted({r['size'] for r in rows})
    series = sorted({(r['guest'], r['shape'], r['transport'], r['backend']) for r in rows})
    shapes = len({r['shape'] for r in rows}) > 1
    paths = []
    for name, metrics in (('rr-tps.png', [('tps', 'transactions/s')]),
                          ('rr-latency.png', [('p50', 'p50 latency, ns'),
                                              ('p99', 'p99 latency, ns')])):
        fig, axes = plt.subplots(len(metrics), len(sizes), squeeze=False,
                                 figsize=(5 * len(sizes), 4 * len(metrics)))
        for i, (key, label) in enumerate(metrics):
            for j, size in enumerate(sizes):
                ax = axes[i][j]
                for g, h, t, b in series:
                    pts = sorted((r['sessions'], r[key]) for r in rows
                                 if (r['guest'], r['shape'], r['transport'], r['backend'],
                                     r['size']) == (g, h, t, b, size))
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o',
                                label='%s%s %s%s' % (g, ' ' + h if shapes else '', t,
                                                     '' if b == '-' else ' ' + b))
                ax.set_xscale('log')
                ax.set_yscale('log')
                ax.set_xlabel('sessions')
                ax.set_ylabel(label)
                ax.set_title('%s, %d B request/response' % (label.split(',')[0], size))
                ax.grid(True, which='both', alpha=0.3)
                ax.legend(fontsize='small')
        fig.tight_layout()
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths


def write_report(opts, accel, rows, tables, plots):
    """rr.md next to the plots: the tables and the pictures."""
    os.makedirs(opts.plots, exist_ok=True)
    path = os.path.join(opts.plots, 'rr.md')
    with open(path, 'w') as f:
        f.write('# Request/response at scale\n\n')
        f.write('`ringside rr`, accel %s, sessions %s, sizes %s, %s.\n' % (
                accel, ','.join(map(str, sorted({r['sessions'] for r in rows}))),
                ','.join(map(str, sorted({r['size'] for r in rows}))),
                time.strftime('%Y-%m-%d %H:%M')))
        f.write('Under TCG only the ratios mean much.\n\n```\n%s\n```\n' % tables.strip())
        for p in plots:
            f.write('\n![%s](%s)\n' % (os.path.basename(p), os.path.basename(p)))
    return path


def shape_refused(shapes, guests, have_net):
    """Why these shapes cannot run (one line), or None: more queue pairs
    or vCPUs than ringside takes (its net_queues and cpus keys), or
    queue pairs without a virtio-net device."""
    if 'ringside' in guests:
        for key, i, what in (('net_queues', 1, 'virtio-net queue pairs'), ('cpus', 0, 'vCPUs')):
            most = key_range(key)[1]
            over = [shape_label(h) for h in shapes if h[i] > most]
            if over:
                return '%s: ringside takes at most %d %s (its %s key)' % (
                    ','.join(over), most, what, key)
    if not have_net and any(h[1] > 1 for h in shapes):
        return 'queue pairs need the UDP cells (virtio-net on a tap: root, no --no-udp)'
    return None


def poll_windows(text):
    """--poll-us: microseconds (0 or more) or rtt, comma separated."""
    out = []
    for word in text.split(','):
        if word == 'rtt':
            out.append(word)
            continue
        try:
            out.append(int(word))
        except ValueError:
            out.append(-1)
        if out[-1] < 0 or out[-1] > 100000:
            raise argparse.ArgumentTypeError('expected microseconds (0..100000) or rtt, got %r'
                                             % word)
    return out


def build_parser():
    """The options; --help fits a screen, --help-all has the rest."""
    p = Parser(prog=PROG, description=__doc__.split('\n')[0],
               usage='%(prog)s [options] [-- launcher options]', epilog=LAUNCHER_EPILOG)
    a = p.add_argument
    measure.add(p, parallel=[1, 10, 100, 200], sizes=[1, 1024], time=3.0, warmup=3,
                guests='ringside,linux', cost=None)
    a('--backends', default=None, metavar='LIST',
      help='vsock back end: sleep,poll (your --backend: sleep)')
    a('--shape', type=shape_list, default=[(1, 1)], metavar='LIST',
      help='vCPUs x virtio-net queue pairs per boot (1x1)')
    a('--no-udp', action='store_true', help='vsock only, no namespace')
    a('--udp-timeout', type=positive_float, default=1.0, metavar='S', more=True,
      help='seconds before an unanswered UDP request is sent again (1)')
    a('--net', choices=('tap', 'vhost-net'), default='tap', metavar='tap|vhost-net',
      help="UDP cells' tap: QEMU's, or the kernel's vhost-net")
    a('--poll-us', type=poll_windows, default=[0, 50, 'rtt'], metavar='LIST', more=True,
      help='vhost-net busy-poll windows: us or rtt (0,50,rtt)')
    add_options(p)
    a('--plots', metavar='DIR', default=OUT_DIR, more=True,
      help='where the PNGs and rr.md go (build/bench)')
    a('--from-json', metavar='FILE', more=True, help='no runs: the tables from a --json FILE')
    a('launcher_args', nargs='*', help=argparse.SUPPRESS)
    return p


def main(argv):
    p = build_parser()
    opts = p.parse_args(argv)
    opts.argv = argv
    if opts.from_json:
        with open(opts.from_json) as f:
            saved = json.load(f)
        saved = saved.get('result', saved)
        return report(opts, saved['accel'], saved['cells'])
    guests = opts.guests
    # the launcher options, checked before anything boots
    base = rr.parse_args(['--vsock', '--boot', 'elf'] + opts.launcher_args)
    poll = refuse_missing(base, ['poll'], 'the poll back end mode')
    backends = (opts.backends or ('sleep' if poll else 'sleep,poll')).split(',')
    if not set(backends) <= {'sleep', 'poll'}:
        p.error('--backends takes sleep,poll')
    if poll and 'poll' in backends:
        p.error(poll)
    if max(opts.parallel) > 1000:
        p.error('at most 1000 sessions')
    why = shape_refused(opts.shape, guests,
                        opts.net == 'vhost-net' or (not opts.no_udp and netns.usable()))
    if why:
        p.error('--shape: ' + why)
    for path in [BENCH] + ([COST_PLUGIN] if opts.cost is not None else []):
        if not os.path.exists(path):
            p.error('%s missing: run make' % os.path.relpath(path, REPO))
    for which in guests:
        if is_linux(which) and linux_missing(which):
            p.error(linux_missing(which))
    if opts.net == 'vhost-net':
        why = vhost_net.usable() or (None if netns.usable() else
                                     'the namespace needs root, ip netns and /dev/net/tun')
        if why:
            p.error('--net vhost-net: ' + why)
        if 'rtt' in opts.poll_us and 0 not in opts.poll_us[:opts.poll_us.index('rtt')]:
            p.error('--poll-us: rtt needs a 0 before it (its round trip is measured there)')
    udp = not opts.no_udp and netns.usable()
    if not opts.no_udp and not udp:
        print('%s: no UDP cells: the namespace needs root, ip netns and /dev/net/tun' % PROG)
    accel = 'kvm' if rr.kvm_usable() and rr.probe_kvm(base) else 'tcg'
    print('%s: accel %s, sessions %s, sizes %s, shapes %s, %.1f s per cell, %s%s'
          % (PROG, accel, opts.parallel, opts.sizes, ','.join(map(shape_label, opts.shape)),
             opts.time, time.strftime('%Y-%m-%d %H:%M'),
             ', back end ' + base.backend if base.backend else ''))
    if poll and not opts.backends:
        print('%s: no poll cells: %s' % (PROG, poll))
    rows = []
    if opts.net == 'vhost-net':
        windows = measure_vhost_net(opts, guests, accel, base, rows)
        status = report(opts, accel, rows)
        publish(PROG, opts, {'accel': accel, 'net': 'vhost-net', 'rtt_windows': windows,
                             'cells': rows}, cells_of(rows), accel=accel)
        return status
    for shape, which, backend in itertools.product(opts.shape, guests, backends):
        # UDP does not involve the back end: measured in the sleeping boot
        ns = netns.NetNs(base.qemu, queues=shape[1]) if udp and backend == 'sleep' else None
        try:
            boot_and_measure(which, backend == 'poll', opts, accel, ns, rows, shape)
        finally:
            if ns:
                ns.close()
    status = report(opts, accel, rows)
    publish(PROG, opts, {'accel': accel, 'cells': rows}, cells_of(rows), accel=accel)
    return status


def cells_of(rows):
    cells = Cells()
    for r in rows:
        config = {'cell': 'rr', 'guest': r['guest'], 'shape': r['shape'],
                  'transport': r['transport'], 'backend': r['backend'],
                  'sessions': r['sessions'], 'size': r['size']}
        cells.add(config, 'tps', 'txn/s', r['tps'], 'higher')
        cells.add(config, 'p50', 'ns', r['p50'], 'lower')
        cells.add(config, 'p99', 'ns', r['p99'], 'lower')
        cells.add(config, 'insn/txn', 'insn', r.get('insns_per_txn'), 'lower')
    return cells


def report(opts, accel, rows):
    if not rows:
        print('%s: no cell was measured' % PROG)
        return 1
    for r in rows:
        r.setdefault('shape', '1x1')   # a --json FILE from before --shape
    tables = io.StringIO()
    with contextlib.redirect_stdout(tables):
        print_rows(rows)
        print_vcpu_cost(rows)
        print_ratios(rows)
        print_busy_poll(rows)
    print(tables.getvalue(), end='')
    paths = plot(rows, opts.plots)
    if paths:
        print('\nplots: %s' % ' '.join(os.path.relpath(x, REPO) for x in paths))
    else:
        print('\nno plots: python3-matplotlib is not installed')
    path = write_report(opts, accel, rows, tables.getvalue(), paths or [])
    print('report: %s' % os.path.relpath(path, REPO))
    return 0
