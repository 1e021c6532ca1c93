# SPDX-License-Identifier: MIT
"""bench-rr: request/response at scale, ringside vs Linux, in one command.

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
/dev/vhost-net is (`host/nested host/bench-rr --net vhost-net`).
"""

import argparse
import contextlib
import io
import json
import os
import subprocess
import time

import ringside as rr

from . import cost, kvm_exits, netns, vhost_net
from .benchlib import BENCH, REPO, booted, wait_vsock_up
from .cli import Parser, guest_list, int_list, nonneg_int, positive_float, size_list
from .guest_stats import guest_stats
from .images import (COST_PLUGIN, LINUX_GUESTS, is_linux, linux_guest,
                     linux_missing)
from .process import vhost_workers
from .vhost_net import CpuMeter, ExitMeter, Meters, TapMeter
from .results import add_options, publish
from .table import Column, Table

PROG = 'bench-rr'
OUT_DIR = os.path.join(REPO, 'build', 'bench')
MAC = '52:54:00:12:34:56'


def guest_args(which, poll, ns, poll_us=None):
    """Launcher arguments; with poll_us (an int) the tap is served by the
    kernel's vhost-net, busy polling that many microseconds."""
    args = ['--vsock', '--boot', 'elf']
    if poll:
        args.append('--vsock-arg=--poll')
    if is_linux(which):
        kernel, initrd = linux_guest(which)
        args += ['--kernel', kernel, '--cmdline', 'console=ttyS0 quiet panic=-1',
                 '--qemu-arg=-initrd', '--qemu-arg=%s' % initrd]
    elif ns:
        args += ['--cmdline', 'ip=%s prefix=24 gw=%s' % (netns.GUEST_IP, netns.HOST_IP)]
    if ns:
        args += ['--qemu-arg=-netdev',
                 '--qemu-arg=tap,id=n0,ifname=%s,script=no,downscript=no%s'
                 % (netns.TAP, '' if poll_us is None else ',vhost=on,poll-us=%d' % poll_us),
                 '--qemu-arg=-device', '--qemu-arg=virtio-net-pci,netdev=n0,mac=%s' % MAC]
    return args


def rr_cell(target, sessions, size, opts, meter, prefix=(), block=None):
    """One cell; with the cost block (`block`), guest instructions per
    transaction: the instructions of the whole cell (connect, warm-up and
    close included) over the measured transactions."""
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
        insns = (block.snapshot() - before).totals['insns']
        res['guest_insns'] = insns
        res['insns_per_txn'] = insns / res['transactions'] if res['transactions'] else None
    return res


def wait_echo_idle(launch, timeout=120):
    """ringside: wait until the echo service has closed the previous
    cell's sessions, so the next cell's fit in its connection table."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if guest_stats(launch.console, 60, 'services')['services']['echo']['conns'] == 0:
            return
        time.sleep(0.5)


def booted_guest(which, lopts, accel):
    return booted(lopts, accel, 'bench-rr-' + which, linux=is_linux(which))


def boot_and_measure(which, poll, opts, accel, ns, rows):
    cost_path = None
    args = ['--accel', accel] + guest_args(which, poll, ns)
    if opts.cost:
        cost_path = os.path.join(REPO, 'build', 'bench-rr-%s.cost' % which)
        args = ['--cost', cost_path] + args
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
        for sessions in opts.sessions:
            for size in opts.sizes:
                if which == 'ringside':
                    wait_echo_idle(launch)
                res = rr_cell(['--uds', uds], sessions, size, opts, meter, block=block)
                if not res:
                    continue
                rows.append(dict(res, guest=which, transport='vsock', backend=backend))
                progress(rows[-1])
        if ns and not poll:
            udp_cells(launch, which, opts, ns, meter, rows, '-', block)
        if which == 'ringside':
            launch.poweroff()


def udp_cells(launch, which, opts, ns, meter, rows, backend, block=None):
    """Every (sessions, size) cell over UDP to the guest's echo (port 7)
    from inside the namespace."""
    if is_linux(which):
        launch.console.send('udpecho\n')
        launch.console.wait_for(r'udpecho (ready|error.*)', 120)
    target = ['--udp', '%s:7' % netns.GUEST_IP, '--udp-timeout', str(opts.udp_timeout)]
    for sessions in opts.sessions:
        for size in opts.sizes:
            res = rr_cell(target, sessions, size, opts, meter, prefix=ns.prefix(), block=block)
            if not res:
                continue
            rows.append(dict(res, guest=which, transport='udp', backend=backend))
            host_costs(rows[-1])
            progress(rows[-1])


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


def boot_vhost_net(which, poll_us, opts, accel, ns, exits, rows):
    """One boot of `which` with its virtio-net on the kernel's vhost-net,
    busy polling poll_us: the UDP cells, with the host's CPU, the tap's
    packets and KVM's exits per cell. False if the guest did not come up."""
    lopts = rr.parse_args(['--accel', accel] + guest_args(which, False, ns, poll_us)
                          + opts.launcher_args)
    lopts.qemu = ns.qemu
    try:
        with booted_guest(which, lopts, accel) as launch:
            qemu = launch.qemu.pid
            meter = Meters(CpuMeter({'qemu': [qemu], 'vhost': vhost_workers(qemu)}),
                           TapMeter(ns, netns.TAP), ExitMeter(exits) if exits else None)
            udp_cells(launch, which, opts, ns, meter, rows, 'pu%d' % poll_us)
            if which == 'ringside':
                launch.poweroff()
    except rr.LaunchError as e:
        # a finding (the Linux guest once did not boot with poll-us=500),
        # not the end of the run
        print('%s: %s with poll-us=%d: %s' % (PROG, which, poll_us, e), flush=True)
        return False
    return True


def rtt_window(rows, which):
    """The busy-poll window that covers one round trip on this host: the
    p50 of `which`'s smallest cell (fewest sessions, smallest size) at
    poll-us=0, rounded up to 10 us; (window, p50 ns), or None."""
    base = [r for r in rows if r['guest'] == which and r['backend'] == 'pu0']
    if not base:
        return None
    r = min(base, key=lambda r: (r['sessions'], r['size']))
    return -(-int(r['p50']) // 10000) * 10, r['p50']


def measure_vhost_net(opts, guests, accel, base, rows):
    """--net vhost-net: per guest, one boot per busy-poll window, the
    windows in --poll-us order ('rtt' after the poll-us=0 boot)."""
    try:
        exits = kvm_exits.ExitCounter()
    except kvm_exits.ExitsUnavailable as e:
        print('%s: no exit counts: %s' % (PROG, e))
        exits = None
    windows = {}
    try:
        for which in guests:
            for w in opts.poll_us:
                if w == 'rtt':
                    got = rtt_window(rows, which)
                    if not got:
                        print('%s: %s: no poll-us=0 cell to take the round trip from'
                              % (PROG, which))
                        continue
                    w, p50 = got
                    windows[which] = {'poll_us': w, 'p50_ns': p50}
                    print('%s: %s busy-poll window %d us: the p50 round trip (%.0f us) of its '
                          'smallest cell at poll-us=0' % (PROG, which, w, p50 / 1000),
                          flush=True)
                with netns.NetNs(base.qemu) as ns:
                    boot_vhost_net(which, w, opts, accel, ns, exits, rows)
    finally:
        if exits:
            exits.close()
    return windows


def insns_text(r):
    v = r.get('insns_per_txn')
    return ', %.0f guest insns/txn' % v if v is not None else ''


def progress(r):
    print('  %-8s %-5s %-5s %4d x %5d B: %10.1f tps, p99 %9.0f ns, jain %.3f%s'
          % (r['guest'], r['transport'], r['backend'], r['sessions'], r['size'], r['tps'],
             r['p99'], r['jain'], insns_text(r)), flush=True)


def print_rows(rows):
    t = Table([Column('guest', 8, left=True), Column('trans', 5, left=True),
               Column('back', 5, left=True), Column('sess', 5, '%d'), Column('size', 5, '%d'),
               Column('tps', 10, '%.1f'), Column('tps/sess', 9, '%.2f'),
               Column('p50 ns', 9, '%.0f'), Column('p99 ns', 9, '%.0f'),
               Column('jain', 6, '%.3f'), Column('slowest', 9, '%.2f'),
               Column('be cpu', 7, '%.1f'), Column('qemu', 7, '%.1f'),
               Column('insns/txn', 10, '%.0f')],
              title='\nrequest/response (response = request size); CPU in % of one CPU')
    for r in rows:
        t.row(r['guest'], r['transport'], r['backend'], r['sessions'], r['size'], r['tps'],
              r['tps_per_session'], r['p50'], r['p99'], r['jain'], r['slowest_tps'],
              r.get('backend_cpu', r.get('vhost_cpu', 0)), r.get('qemu_cpu', 0),
              r.get('insns_per_txn'))
    t.print()


def index(rows):
    return {(r['guest'], r['transport'], r['backend'], r['sessions'], r['size']): r
            for r in rows}


def print_ratios(rows):
    idx = index(rows)
    for linux in LINUX_GUESTS:
        if not any(k[0] == linux for k in idx):
            continue
        out = Table([Column('trans', 5, left=True), Column('back', 5, left=True),
                     Column('sess', 5, '%d'), Column('size', 5, '%d'),
                     Column('tps rs', 10, '%.1f'), Column('tps ' + linux, 10, '%.1f'),
                     Column('tps', 8, '%.2f'), Column('p99', 8, '%.2f')],
                    title='\nringside / %s (tps ratio > 1 and p99 ratio < 1 favour ringside)'
                          % linux)
        for (g, t, b, s, z), r in idx.items():
            lx = idx.get((linux, t, b, s, z))
            if g != 'ringside' or not lx:
                continue
            out.row(t, b, s, z, r['tps'], lx['tps'], r['tps'] / lx['tps'] if lx['tps'] else 0,
                    r['p99'] / lx['p99'] if lx['p99'] else 0)
        out.print()
    out = Table([Column('guest', 8, left=True), Column('sess', 5, '%d'),
                 Column('size', 5, '%d'), Column('tps sleep', 10, '%.1f'),
                 Column('tps poll', 10, '%.1f'), Column('gain', 7, '%.2f'),
                 Column('cpu slp', 8, '%.1f'), Column('cpu poll', 8, '%.1f')],
                title='\nback end --poll against sleeping (vsock): gain and the CPU it costs')
    for (g, t, b, s, z), r in idx.items():
        p = idx.get((g, t, 'poll', s, z))
        if t != 'vsock' or b != 'sleep' or not p:
            continue
        out.row(g, s, z, r['tps'], p['tps'], p['tps'] / r['tps'] if r['tps'] else 0,
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
    guests = list(dict.fromkeys(r['guest'] for r in rows if r['backend'].startswith('pu')))
    for g in guests:
        windows = sorted({int(r['backend'][2:]) for r in rows
                          if r['guest'] == g and r['backend'].startswith('pu')} - {0})
        for w in windows:
            out = Table([Column('size', 5, '%d'), Column('session', 7, '%d'),
                         Column('+thu', 6), Column('+normalize', 10), Column('+tpkts', 7),
                         Column('+rpkts', 7), Column('+exits', 7), Column('p50 us 0 -> w', 15),
                         Column('exits/txn 0->w', 15)],
                        title='\n%s: vhost-net poll-us=%d against poll-us=0' % (g, w))
            for (g2, t, b, s, z), r in idx.items():
                p = idx.get((g, t, 'pu%d' % w, s, z))
                if g2 != g or b != 'pu0' or not p:
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
    series = sorted({(r['guest'], r['transport'], r['backend']) for r in rows})
    paths = []
    for name, metrics in (('rr-tps.png', [('tps', 'transactions/s')]),
                          ('rr-latency.png', [('p50', 'p50 latency, ns'),
                                              ('p99', 'p99 latency, ns')])):
        fig, axes = plt.subplots(len(metrics), len(sizes), squeeze=False,
                                 figsize=(5 * len(sizes), 4 * len(metrics)))
        for i, (key, label) in enumerate(metrics):
            for j, size in enumerate(sizes):
                ax = axes[i][j]
                for g, t, b in series:
                    pts = sorted((r['sessions'], r[key]) for r in rows
                                 if (r['guest'], r['transport'], r['backend'], r['size'])
                                 == (g, t, b, size))
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o',
                                label='%s %s%s' % (g, t, '' if b == '-' else ' ' + b))
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
        f.write('`host/bench-rr`, accel %s, sessions %s, sizes %s, %s.\n' % (
                accel, ','.join(map(str, sorted({r['sessions'] for r in rows}))),
                ','.join(map(str, sorted({r['size'] for r in rows}))),
                time.strftime('%Y-%m-%d %H:%M')))
        f.write('Under TCG only the ratios mean much.\n\n```\n%s\n```\n' % tables.strip())
        for p in plots:
            f.write('\n![%s](%s)\n' % (os.path.basename(p), os.path.basename(p)))
    return path


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


def main(argv):
    p = Parser(prog=PROG, description=__doc__.split('\n')[0],
               epilog='Launcher options after "--" go to every boot (host/ringside-run), '
                      'e.g. -- --backend CMD or -- --qemu PATH; the poll back ends add '
                      '--poll to the back end\'s command.')
    p.add_argument('-P', '--parallel', '--sessions', dest='sessions',
                   type=int_list, default=[1, 10, 100, 200],
                   help='concurrent sessions (1,10,100,200)')
    p.add_argument('--sizes', type=size_list, default=[1, 1024],
                   help='request = response sizes (1,1024)')
    p.add_argument('-t', '--time',
                   type=positive_float, default=3.0, help='measured seconds per cell (3)')
    p.add_argument('--warmup', type=nonneg_int, default=3,
                   help='unmeasured transactions per session first (3)')
    p.add_argument('--guests', type=guest_list, default='ringside,linux',
                   help='ringside and/or Linux guests: linux, linux-6.12 (ringside,linux)')
    p.add_argument('--backends', default='sleep,poll', help='sleep and/or poll')
    p.add_argument('--no-udp', action='store_true', help='vsock only, no namespace')
    p.add_argument('--udp-timeout', type=positive_float, default=1.0,
                   help='seconds before an unanswered UDP request is sent again (1)')
    p.add_argument('--cost', action='store_true',
                   help='guest instructions per transaction from the cost plugin '
                        '(build/host/ringside-cost.so)')
    p.add_argument('--net', choices=('tap', 'vhost-net'), default='tap',
                   help="the UDP cells' tap: QEMU's own (tap), or the kernel's vhost-net "
                        '(UDP only, one boot per --poll-us window, with the host\'s CPU, '
                        'tap packets and KVM exits per cell; needs /dev/vhost-net: '
                        'host/nested)')
    p.add_argument('--poll-us', type=poll_windows, default=[0, 50, 'rtt'], metavar='LIST',
                   help='--net vhost-net busy-poll windows in us, in order; rtt: the p50 '
                        'round trip of the poll-us=0 boot\'s smallest cell (0,50,rtt)')
    add_options(p)
    p.add_argument('--plots', metavar='DIR', default=OUT_DIR,
                   help='where the PNG plots go (build/bench)')
    p.add_argument('--from-json', metavar='FILE',
                   help='no runs: tables, plots and report from an earlier --json FILE')
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.from_json:
        with open(opts.from_json) as f:
            saved = json.load(f)
        return report(opts, saved['accel'], saved['cells'])
    guests = opts.guests
    backends = opts.backends.split(',')
    if not set(backends) <= {'sleep', 'poll'}:
        p.error('--backends takes sleep,poll')
    if max(opts.sessions) > 1000 or opts.time <= 0:
        p.error('at most 1000 sessions; --time must be positive')
    for path in [BENCH] + ([COST_PLUGIN] if opts.cost else []):
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
    # the launcher options, checked before anything boots
    base = rr.parse_args(['--vsock', '--boot', 'elf'] + opts.launcher_args)
    accel = 'kvm' if rr.kvm_usable() and rr.probe_kvm(base) else 'tcg'
    print('request/response: accel %s, sessions %s, sizes %s, %.1f s per cell, %s%s'
          % (accel, opts.sessions, opts.sizes, opts.time, time.strftime('%Y-%m-%d %H:%M'),
             ', back end ' + base.backend if base.backend else ''))
    rows = []
    if opts.net == 'vhost-net':
        windows = measure_vhost_net(opts, guests, accel, base, rows)
        status = report(opts, accel, rows)
        publish(PROG, opts, {'accel': accel, 'net': 'vhost-net', 'rtt_windows': windows,
                             'cells': rows}, accel=accel)
        return status
    for which in guests:
        for backend in backends:
            # UDP does not involve the back end: measured in the sleeping boot
            ns = netns.NetNs(base.qemu) if udp and backend == 'sleep' else None
            try:
                boot_and_measure(which, backend == 'poll', opts, accel, ns, rows)
            finally:
                if ns:
                    ns.close()
    status = report(opts, accel, rows)
    publish(PROG, opts, {'accel': accel, 'cells': rows}, accel=accel)
    return status


def report(opts, accel, rows):
    if not rows:
        print('%s: no cell was measured' % PROG)
        return 1
    tables = io.StringIO()
    with contextlib.redirect_stdout(tables):
        print_rows(rows)
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
