# SPDX-License-Identifier: MIT
"""netrx: virtio-net receive rate, ringside against Linux.

dpdk-testpmd in txonly mode sends 64-byte frames toward the guest over
vhost-user (testpmd's net_vhost PMD; QEMU's virtio-net-pci). ringside
counts them with `netsink` (an RX tap ahead of the protocols: counted and
dropped at the driver); the Linux guest counts at its interface
(/sys/class/net/eth0/statistics/rx_packets through the guest server's
`rxcount`). One boot per (ring layout, mergeable buffers) and guest.

The rate is the steady state: two readings of the guest's own count and
clock `--time` seconds apart while testpmd sends, after `--warmup-time` s.
After testpmd stops, every frame it counted as sent must be counted by the
guest (frames + drops by reason for ringside, rx_packets for Linux); the
table says so in its `exact` column.

irq: ringside polls (irq=poll). irq=msix is not measured: QEMU 7.2 under
TCG exits when a guest starts virtio-net on vhost-user with MSI-X (the
Linux guest runs with pci=nomsi for the same reason, so it takes INTx).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import ringside as rr

from .. import linux_guest, measure
from ..cli import Parser, csv_list, nonneg_float, nonneg_int, positive_float, size
from ..images import LINUX_INITRD, LINUX_KERNEL
from ..netguest import GUEST_IP, PEER_IP, NetError, netsink, pinned_qemu
from ..results import Cells, add_options, publish
from ..table import Column, Table
from ..testpmd import TESTPMD, TestPmd, TestPmdError, guest_args
from ..wait import poll_for

NAME = 'netrx'
SUMMARY = 'virtio-net RX: testpmd into netsink, ringside and Linux'
GROUP = 'measure'
ALIASES = ('bench-netrx',)
PROG = 'ringside netrx'

RXCOUNT = re.compile(r'rxcount: ns (\d+) rx_packets (\d+) rx_bytes (\d+) rx_dropped (\d+) '
                     r'rx_errors (\d+)')


class RingsideSink:
    """ringside's side: `netsink on|show|off` on its console."""

    def __init__(self, console, timeout):
        self.con, self.timeout = console, timeout

    def start(self):
        self.con.command('netsink on', self.timeout)

    def read(self):
        """(frames counted so far, drops, guest seconds)."""
        r = netsink(self.con, 'show', self.timeout)
        return r['frames'], r['drops_total'], r['seconds']

    def finish(self):
        return netsink(self.con, 'off', self.timeout)


class LinuxSink:
    """Linux's side: eth0's counters via the guest server's `rxcount`."""

    def __init__(self, console, timeout):
        self.con, self.timeout = console, timeout
        self.base = None

    def _rxcount(self):
        self.con.send('rxcount\n')
        m = self.con.wait_for(r'rxcount(: [^\r\n]*| error: [^\r\n]*)\r?\n', self.timeout,
                              what='rxcount')
        c = RXCOUNT.search(m.group(0))
        if not c:
            raise NetError('Linux guest: %s' % m.group(0).strip())
        return [int(x) for x in c.groups()]

    def start(self):
        self.base = self._rxcount()

    # rx_packets counts every frame the driver passed up; rx_dropped also
    # counts frames the stack dropped after that (unknown protocols), so it
    # is reported, not added: every frame sent must be in rx_packets.
    def read(self):
        ns, packets, _, _, _ = self._rxcount()
        return packets - self.base[1], 0, ns / 1e9

    def finish(self):
        now = self._rxcount()
        return {'frames': now[1] - self.base[1], 'bytes': now[2] - self.base[2],
                'drops_total': 0, 'rx_dropped': now[3] - self.base[3],
                'rx_errors': now[4] - self.base[4]}


def send_at_least(pmd, want, timeout):
    """testpmd sends until it counts `want` sent (or the timeout), then
    stops; returns what it sent."""
    base = pmd.port_stats()
    pmd.forward_start()
    try:
        poll_for(lambda: pmd.wait_rx(0, base)['tx'] >= want, timeout, interval=0.5)
    finally:
        pmd.forward_stop()
    return pmd.wait_rx(0, base)['tx']


def wait_counted(sink, sent, timeout):
    """Wait until the guest counted `sent` frames (received or dropped):
    it drains what was already in its ring after testpmd stopped."""
    def counted():
        frames, drops, _ = sink.read()
        return frames + drops >= sent
    poll_for(counted, timeout, interval=0.5)


def measure_rate(sink, pmd, opts):
    """Send, read the rate at steady state, stop, and wait until the guest
    has counted everything testpmd sent (or the timeout)."""
    sink.start()
    base = pmd.port_stats()
    pmd.forward_start()
    try:
        time.sleep(opts.warmup_time)   # testpmd sends meanwhile: a steady state
        f1, _, t1 = sink.read()
        time.sleep(opts.time)
        f2, _, t2 = sink.read()
    finally:
        pmd.forward_stop()
    sent = pmd.wait_rx(0, base)['tx']
    wait_counted(sink, sent, opts.timeout)
    r = sink.finish()
    r.update(sent=sent, mpps=(f2 - f1) / (t2 - t1) / 1e6 if t2 > t1 else 0.0,
             exact=r['frames'] + r['drops_total'] == sent)
    return r


def boot_argv(guest, ring, mrg, sock, accel, machine):
    net = guest_args(sock, packed=ring == 'packed', mrg_rxbuf=mrg)
    if guest == 'linux':
        return linux_guest.net_launch_args(net, accel, machine)
    return ['--accel', accel, '--boot', 'elf', '--machine', machine,
            '--cmdline', 'ip=%s gw=%s irq=poll' % (GUEST_IP, PEER_IP), '--', *net]


def run_cell(guest, ring, mrg, opts, accel, pmd, sock, workdir):
    gopts = rr.parse_args(boot_argv(guest, ring, mrg, sock, accel, opts.machine))
    if opts.pin is not None:
        gopts.qemu = pinned_qemu(workdir, opts.pin, gopts.qemu)
    launch = rr.Launch(gopts, accel, qemu_stderr=subprocess.DEVNULL)
    try:
        launch.start()
        launch.wait_ready(opts.timeout, linux=guest == 'linux')
        if guest == 'linux':
            sink = LinuxSink(launch.console, opts.timeout)
        else:
            sink = RingsideSink(launch.console, opts.timeout)
        r = measure_rate(sink, pmd, opts)
        if guest == 'ringside':
            launch.poweroff(30)
    finally:
        launch.stop()  # Linux has no poweroff command: QEMU is stopped by PID
    r.update(guest=guest, ring=ring, mrg=mrg, irq='poll' if guest == 'ringside' else 'intx')
    if opts.verbose:
        print('%s ring=%s mrg=%s: %.4f Mpps, sent %d, counted %d, drops %d'
              % (guest, ring, 'on' if mrg else 'off', r['mpps'], r['sent'], r['frames'],
                 r['drops_total']), file=sys.stderr, flush=True)
    return r


def run_bench(opts):
    accel = rr.choose_accel(rr.parse_args(['--accel', opts.accel, '--boot', 'elf']))
    workdir = tempfile.mkdtemp(prefix='ringside-bench-netrx-')
    sock = os.path.join(workdir, 'vhost-net.sock')
    log = open(os.path.join(workdir, 'testpmd.log'), 'w') if opts.verbose else None
    pmd = TestPmd(sock, mode='txonly', log=log, lcores=opts.lcores, auto_start=False,
                  txpkts=opts.size)
    results = []
    try:
        pmd.start()
        for ring in opts.rings:
            for mrg in opts.mrg:
                for guest in opts.guests:
                    results.append(run_cell(guest, ring, mrg == 'on', opts, accel, pmd, sock,
                                            workdir))
    finally:
        pmd.stop()
        if log:
            log.close()
            print('testpmd log: %s' % workdir, file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return results


def print_table(results):
    by = {(r['guest'], r['ring'], r['mrg']): r for r in results}
    t = Table([Column('ring', 7, left=True), Column('mrg', 4, left=True),
               Column('ringside (irq)', 14, left=True), Column('exact', 7),
               Column('Linux (irq)', 14, left=True), Column('exact', 7),
               Column('rs/lx', 7, '%.2fx')],
              title='virtio-net RX, testpmd txonly -> guest (Mpps at steady state; exact: every '
                    'frame testpmd sent was counted)')

    def cells(r):
        if not r:
            return [None, None]
        return ['%8.4f (%s)' % (r['mpps'], r['irq']), 'yes' if r['exact'] else 'NO']
    keys = sorted({(r['ring'], r['mrg']) for r in results}, key=lambda k: (k[0], not k[1]))
    for ring, mrg in keys:
        rs, lx = by.get(('ringside', ring, mrg)), by.get(('linux', ring, mrg))
        ratio = rs['mpps'] / lx['mpps'] if rs and lx and lx['mpps'] else None
        t.row(ring, 'on' if mrg else 'off', *cells(rs), *cells(lx), ratio)
    t.print()


def main(argv=None):
    p = Parser(prog=PROG, description=__doc__.split('\n\n')[0], usage='%(prog)s [options]')
    measure.add(p, time=5.0, guests='ringside,linux')
    p.add_argument('--rings', type=csv_list(str, ('split', 'packed')), default=['split', 'packed'],
                   metavar='LIST', help='layouts (split,packed)')
    p.add_argument('--mrg', type=csv_list(str, ('on', 'off')), default=['on', 'off'],
                   metavar='LIST', help='mergeable RX buffers, mrg_rxbuf (on,off)')
    p.add_argument('--size', type=size, default=64, metavar='B',
                   help='frame bytes (testpmd --txpkts, 64)')
    p.add_argument('--warmup-time', type=nonneg_float, default=1.0, metavar='S',
                   help='seconds of sending before measuring (1)')
    p.add_argument('--machine', choices=('q35', 'pc'), default='q35', metavar='q35|pc',
                   more=True, help="the guests' machine type (q35)")
    p.add_argument('--lcores', default='0-1', more=True,
                   help='testpmd -l: main lcore, then the forwarding one (0-1)')
    p.add_argument('--pin', type=nonneg_int, default=0, metavar='CPU',
                   help='run QEMU on this CPU only (0; -1: no pinning)')
    p.add_argument('--accel', choices=('auto', 'kvm', 'tcg'), default='tcg', more=True,
                   metavar='auto|kvm|tcg', help='tcg')
    p.add_argument('--timeout', type=positive_float, default=300.0, metavar='S', more=True,
                   help='seconds per step (300)')
    add_options(p)
    p.add_argument('-v', '--verbose', action='store_true', more=True,
                   help='progress on stderr, keep logs')
    opts = p.parse_args(argv)
    opts.argv = argv
    if set(opts.guests) - {'ringside', 'linux'}:
        p.error('--guests: netrx boots ringside and linux (6.1)')
    if opts.pin < 0:
        opts.pin = None
    if not 60 <= opts.size <= 1514:
        p.error('--size takes 60..1514')
    if not shutil.which(TESTPMD):
        print('%s: %s not found (apt-get install dpdk-dev)' % (PROG, TESTPMD), file=sys.stderr)
        return 1
    if 'linux' in opts.guests and not (os.path.exists(LINUX_KERNEL)
                                       and os.path.exists(LINUX_INITRD)):
        print('%s: %s missing (make linux-guest)' % (PROG, LINUX_INITRD), file=sys.stderr)
        return 1
    if opts.pin is not None and not shutil.which('taskset'):
        print('%s: taskset not found (package util-linux)' % PROG, file=sys.stderr)
        return 1
    try:
        results = run_bench(opts)
    except (TestPmdError, NetError, rr.LaunchError) as e:
        print('%s: %s' % (PROG, e), file=sys.stderr)
        return 1
    print_table(results)
    params = {k: v for k, v in vars(opts).items() if k not in ('json', 'csv', 'no_save', 'argv')}
    cells = Cells()
    for r in results:
        cells.add({'cell': 'netrx', 'guest': r['guest'], 'ring': r['ring'],
                   'mrg': 'on' if r['mrg'] else 'off'}, 'Mpps', 'Mpps', r['mpps'], 'higher')
    publish(PROG, opts, {'runs': results, 'params': params}, cells)
    return 0 if all(r['exact'] for r in results) else 1
