# SPDX-License-Identifier: MIT
"""net: ringside's pktgen into DPDK testpmd (rxonly) over vhost-user-net,
and Linux's pktgen against the same testpmd as the baseline.

One testpmd; in each round one ringside boot (virtio-net-pci with packed=on,
so the guest can choose either layout) runs every combination of ring layout
(`set ring=`, which re-probes the device) and TX reclaim mode (`set
txpoll=`); rounds interleave, so slow drifts of a busy host hit
all of them alike. Each run: read testpmd's counters, `pktgen count=N
size=S burst=B dst=IP,MAC`, read testpmd's RX-packets again; the run fails
unless testpmd received exactly what pktgen sent.

Linux column (--guests includes linux, the default): in each round, after
ringside, Debian's kernel (build/linux-guest, `make linux-guest`) boots once
per layout with the same QEMU options (virtio-net-pci packed=off, then
packed=on) against the same testpmd and runs its pktgen module on eth0: one
UDP flow, one kpktgend thread, the same count, frame size and burst
(xmit_more), checked against testpmd the same way. Linux's pktgen counts
whole bursts and may overshoot its count by up to burst-1 frames, so the
guest runs it in pieces that cannot overshoot (mostly one, then a short
one for the remainder); its Mpps is all frames over the summed run times
pktgen measured (host/linux-guest/guest-server.c). Linux boots with
pci=nomsi (INTx), see linux_guest.NO_MSI. With --queues N both guests get N
vCPUs and N queue pairs: ringside's pktgen sends a share from each CPU
on the pair it owns, Linux's from N kpktgend threads, thread q on CPU q
and queue q.

Reported per combination: the guest's Mpps (median over rounds, min..max),
kicks per packet, how often the TX ring was full, and ratios side by side;
then per layout ringside's Mpps next to Linux's and their ratio.
Under TCG absolute numbers mean little; the ratios are the result.

With --cost both guests run under the ringside-cost QEMU plugin
(docs/benchmarks.md, cost accounting) and every run also gets the guest's instructions, halts and
interrupts (its own counters: ringside's `virtio` queue lines, Linux's
/proc/interrupts virtio lines) per packet sent; ringside adds `idle=halt` to
its command line (its virtio-net stays polled, see linux_guest.NO_MSI), Linux
halts when idle by default. The idle rate is measured before each run
(ringside/cost_measure.py).

--peer vhost-net (seed 001 on the back end it was written for): the
frames go into a tap served by the kernel's vhost-net instead, in a
network namespace of the run's own; the tap's rx_packets must grow by
exactly what pktgen sent (ringside/vhost_net.py, TapSink), and each run
also gets KVM's exits per frame. Split ring only (the kernel's vhost has
no packed ring); accel auto, so on the nested host (`ringside nested
net --peer vhost-net`) the guests run under KVM.

tests/qemu/test_net_testpmd.py uses TestPmd and guest_args()
(ringside/testpmd.py) as this does, so the tests run what the benchmark
runs; both peers are a peer.FramePeer.
"""

import subprocess
import os
import shutil
import statistics
import sys
import tempfile

import ringside as rr

from .. import kvm_exits, linux_guest, measure, vhost_net
from ..cli import Parser, csv_list, nonneg_int, positive_float, positive_int, size
from ..config_doc import key_range
from ..cost_measure import Meter, spread
from ..guest_stats import virtio_bars, virtio_irqs
from ..images import LINUX_INITRD, LINUX_KERNEL
from ..netguest import (GUEST_IP, PEER_IP, PEER_MAC, NetError, check_key, pairs_in_use,
                        pinned_qemu, pktgen)
from ..results import Cells, add_options, publish
from ..table import Column, Table
from ..testpmd import GUEST_MAC, TESTPMD, TestPmd, TestPmdError, guest_args
from ..vhost_net import TapSink

NAME = 'net'
SUMMARY = 'virtio-net TX: pktgen Mpps into testpmd or a tap'
GROUP = 'measure'
ALIASES = ('bench-net',)
PROG = 'ringside net'

PEERS = {'testpmd': 'dpdk-testpmd rxonly (vhost-user-net)',
         'vhost-net': "a tap counting frames (the kernel's vhost-net)"}


def linux_guest_argv(sock, packed, accel='tcg', machine='q35', net=None):
    """`ringside run` arguments for the Linux guest with the QEMU options
    ringside gets (guest_args(), or `net`)."""
    return linux_guest.net_launch_args(net or guest_args(sock, packed=packed), accel, machine)


def exits_measured(exits, run):
    """run() with r['exits'], KVM's exits per packet by kind
    (kvm_exits.KINDS), when an exit counter is open."""
    if exits is None:
        return run()
    before = exits.snapshot()
    r = run()
    r['exits'] = kvm_exits.delta(before, exits.snapshot(), max(r['packets'], 1))
    return r


def cost_args(workdir, name, opts):
    """`ringside run` arguments for a cost block, and its path ([], None
    without --cost)."""
    if opts.cost is None:
        return [], None
    path = os.path.join(workdir, '%s.cost' % name)
    return ['--cost-block', path + (',' + opts.cost if opts.cost else '')], path


def costed(meter, irqs, run):
    """run() -> pktgen result dict; with a meter, bracketed by the cost
    block and the guest's interrupt count, with r['cost'] per packet."""
    if meter is None:
        return run()
    before = irqs()
    r, c = meter.measure(run, lambda r: r['packets'])
    c['irqs'] = (irqs() - before) / max(r['packets'], 1)
    r['cost'] = c
    return r


def drops(st):
    """', D dropped' where the peer counts drops (the tap) and had some."""
    return ', %d dropped' % st['rx_dropped'] if st.get('rx_dropped') else ''


IRQ_CPUS = ('own', 'other')
IRQ_SMP = 2     # --irq-cpu: pktgen's vCPU and one other
PAIR_CPUS = ('spread', 'cpu0')   # --pair-cpu: ringside's net_pair_cpu


def ringside_cmdline(cost=False, irq_cpu=None, queues=1, pair_cpu=None):
    """ringside's boot keys. Without irq_cpu, irq=poll: QEMU 7.2 (TCG)
    exits when virtio-net on vhost-user starts with MSI-X (linux_guest.NO_MSI);
    with it (own|other), MSI-X with net_irq placing the TX interrupt on
    pktgen's vCPU or another. idle=poll spins as a timing run should.
    queues > 1: that many pairs, owned as pair_cpu says (net_pair_cpu)."""
    irq = 'irq=msix net_irq=%s' % irq_cpu if irq_cpu else 'irq=poll'
    pairs = (' net_queues=%d net_pair_cpu=%s' % (queues, pair_cpu or PAIR_CPUS[0])
             if queues > 1 else '')
    return 'ip=%s gw=%s %s idle=%s%s' % (GUEST_IP, PEER_IP, irq, 'halt' if cost else 'poll',
                                         pairs)


def guest_qemu_args(net, irq_cpu=None, queues=1):
    """QEMU arguments after the launcher's, for either guest: the network,
    and as many vCPUs as queue pairs, at least IRQ_SMP with irq_cpu."""
    smp = max(IRQ_SMP if irq_cpu else 1, queues)
    return (['-smp', str(smp)] if smp > 1 else []) + list(net)


def wait_pairs(con, queues, timeout):
    """NetError unless ringside has `queues` pairs in use (once the
    device answered on its control queue)."""
    got = pairs_in_use(con, timeout)
    if got != queues:
        raise NetError('ringside has %s queue pairs in use, not %d' % (got, queues))


def run_ringside_round(rr, opts, accel, pmd, sock, workdir, rnd, results):
    for irq_cpu in opts.irq_cpu or [None]:
        for pair_cpu in opts.pair_cpu or [None]:
            run_ringside_boot(rr, opts, accel, pmd, workdir, rnd, results, irq_cpu, pair_cpu)


def run_ringside_boot(rr, opts, accel, pmd, workdir, rnd, results, irq_cpu=None,
                      pair_cpu=None):
    """One ringside boot of a round: every ring layout and txpoll mode."""
    name = '-'.join(['ringside', str(rnd)] + [x for x in (irq_cpu, pair_cpu) if x])
    extra, block = cost_args(workdir, name, opts)
    gopts = rr.parse_args(['--accel', accel, '--boot', 'elf', '--machine', opts.machine,
                           '--cmdline', ringside_cmdline(block, irq_cpu, opts.queues, pair_cpu),
                           *extra, '--',
                           *guest_qemu_args(pmd.net_args(True, GUEST_MAC), irq_cpu,
                                            opts.queues)])
    gopts.qemu = pmd.guest_qemu(gopts.qemu)
    if opts.pin is not None:
        # QEMU (all its threads) on one CPU, testpmd's forwarding lcore
        # on another: the two busy loops do not take turns on one CPU.
        gopts.qemu = pinned_qemu(workdir, opts.pin, gopts.qemu)
    launch = rr.Launch(gopts, accel, qemu_stderr=subprocess.DEVNULL)
    try:
        launch.start()
        launch.wait_ready(opts.timeout)
        con = launch.console
        if irq_cpu:
            check_key(con, 'net_irq', irq_cpu, opts.timeout)
        meter = Meter(block, writable=True) if block else None
        if meter and 'io=on' in opts.cost:
            # notifies: stores into the virtio BARs (the guest's lspci)
            meter.block.set_notify(virtio_bars(con, opts.timeout))
        for ring in opts.rings:
            con.command('set ring=%s' % ring, opts.timeout)
            if opts.queues > 1:
                wait_pairs(con, opts.queues, opts.timeout)   # a ring= change probes again
            for txpoll in opts.txpoll:
                con.command('set txpoll=%d' % txpoll, opts.timeout)
                base = pmd.port_stats()
                r = exits_measured(opts.exits, lambda: costed(
                        meter, lambda: virtio_irqs(con, opts.timeout),
                        lambda: pktgen(con, opts.count, opts.size, opts.burst, opts.timeout,
                                       queues=opts.queues)))
                st = pmd.wait_rx(r['packets'], base, timeout=opts.timeout)
                r.update(round=rnd, ring=ring, txpoll=txpoll, testpmd_rx=st['rx'],
                         irq_cpu=irq_cpu, pair_cpu=pair_cpu)
                results.append(r)
                if opts.verbose:
                    print('round %d ringside ring=%s txpoll=%d%s: %.4f Mpps, %d sent, %d at '
                          'the peer' % (rnd, ring, txpoll, ' net_irq=' + irq_cpu if irq_cpu
                                        else '', r['mpps'], r['packets'], st['rx']),
                          file=sys.stderr)
                if r['packets'] != opts.count or st['rx'] != r['packets']:
                    raise TestPmdError('ring=%s txpoll=%d: pktgen sent %d of %d, the peer '
                                       'received %d%s' % (ring, txpoll, r['packets'],
                                                          opts.count, st['rx'], drops(st)))
        launch.poweroff(30)
    finally:
        launch.stop()


def linux_pktgen(console, opts):
    """The Linux guest's kernel pktgen with the run's parameters."""
    try:
        return linux_guest.pktgen(console, PEER_IP, PEER_MAC, opts.count, opts.size, opts.burst,
                                  opts.timeout, queues=opts.queues)
    except linux_guest.PktgenError as e:
        raise NetError(str(e))


def run_linux_round(rr, opts, accel, pmd, sock, workdir, rnd, results):
    for ring in opts.rings:
        extra, block = cost_args(workdir, 'linux-%d-%s' % (rnd, ring), opts)
        gopts = rr.parse_args(extra + linux_guest_argv(
                sock, ring == 'packed', accel, opts.machine,
                # as many vCPUs as ringside has (--irq-cpu: two)
                net=guest_qemu_args(pmd.net_args(ring == 'packed', GUEST_MAC),
                                    (opts.irq_cpu or [None])[0], opts.queues)))
        gopts.qemu = pmd.guest_qemu(gopts.qemu)
        if opts.pin is not None:
            gopts.qemu = pinned_qemu(workdir, opts.pin, gopts.qemu)
        log = (open(os.path.join(workdir, 'linux-%d-%s.serial.log' % (rnd, ring)), 'wb')
               if opts.verbose else None)
        launch = rr.Launch(gopts, accel, qemu_stderr=subprocess.DEVNULL, log=log)
        try:
            launch.start()
            launch.wait_ready(opts.timeout, linux=True)
            if opts.queues > 1:
                pairs = linux_guest.queue_pairs(launch.console)
                if pairs != opts.queues:
                    raise TestPmdError('the Linux guest enabled %s queue pairs, not %d'
                                       % (pairs, opts.queues))
            meter = Meter(block) if block else None
            base = pmd.port_stats()
            r = exits_measured(opts.exits, lambda: costed(
                    meter, lambda: linux_guest.virtio_irqs(launch.console),
                    lambda: linux_pktgen(launch.console, opts)))
            st = pmd.wait_rx(r['packets'], base, timeout=opts.timeout)
            r.update(round=rnd, ring=ring, testpmd_rx=st['rx'], testpmd_rx_bytes=st['rx_bytes'])
            results.append(r)
            if opts.verbose:
                print('round %d linux ring=%s: %.4f Mpps, %d sent, %d at the peer'
                      % (rnd, ring, r['mpps'], r['packets'], st['rx']), file=sys.stderr)
            if r['packets'] != opts.count or st['rx'] != r['packets']:
                raise TestPmdError('Linux ring=%s: pktgen sent %d of %d, the peer received %d%s'
                                   % (ring, r['packets'], opts.count, st['rx'], drops(st)))
        finally:
            launch.stop()  # no poweroff in the Linux guest: QEMU is stopped by PID
            if log:
                log.close()


def run_bench(opts):
    """(ringside results, Linux results): the rounds interleave ringside's
    combinations and one Linux boot per layout, all against one testpmd."""
    accel = opts.accel = rr.choose_accel(rr.parse_args(['--accel', opts.accel, '--boot', 'elf']))
    workdir = tempfile.mkdtemp(prefix='ringside-bench-net-')
    sock = os.path.join(workdir, 'vhost-net.sock')
    log = open(os.path.join(workdir, 'testpmd.log'), 'w') if opts.verbose else None
    if opts.peer == 'vhost-net':
        pmd = TapSink(rr.parse_args(['--boot', 'elf']).qemu, queues=opts.queues)
    else:
        pmd = TestPmd(sock, mode='rxonly', log=log, lcores=opts.lcores, queues=opts.queues)
    results, linux = [], []
    opts.exits = None
    try:
        if opts.peer == 'vhost-net' and not kvm_exits.available():
            opts.exits = kvm_exits.ExitCounter()
        pmd.start()
        for rnd in range(opts.rounds):
            if 'ringside' in opts.guests:
                run_ringside_round(rr, opts, accel, pmd, sock, workdir, rnd, results)
            if 'linux' in opts.guests:
                run_linux_round(rr, opts, accel, pmd, sock, workdir, rnd, linux)
    finally:
        pmd.stop()
        if opts.exits:
            opts.exits.close()
        if log:
            log.close()
            print('testpmd log and Linux serial logs: %s' % workdir, file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return results, linux


def cpu_medians(rs):
    """{cpu: median Mpps} over the runs that counted each CPU's part."""
    cpus = sorted({c for r in rs for c in r.get('cpu_mpps', {})})
    return {c: statistics.median(r['cpu_mpps'][c] for r in rs if c in r['cpu_mpps'])
            for c in cpus}


def per_cpu_text(t):
    return ' '.join('%d=%.4f' % c for c in sorted(t['cpu_mpps_median'].items())) or '-'


def summarize(results):
    rows = {}
    for r in results:
        rows.setdefault((r['ring'], r['txpoll'], r.get('irq_cpu'), r.get('pair_cpu')),
                        []).append(r)
    table = []
    for (ring, txpoll, irq_cpu, pair_cpu), rs in rows.items():
        mpps = [r['mpps'] for r in rs]
        table.append({'ring': ring, 'txpoll': txpoll, 'irq_cpu': irq_cpu, 'pair_cpu': pair_cpu,
                      'runs': len(rs), 'cpu_mpps_median': cpu_medians(rs),
                      'mpps_median': statistics.median(mpps), 'mpps_min': min(mpps),
                      'mpps_max': max(mpps),
                      'kicks_per_packet': statistics.median(r['kicks_per_packet'] for r in rs),
                      'ring_full': statistics.median(r['ring_full'] for r in rs),
                      'packets': rs[0]['packets'], 'testpmd_rx': sum(r['testpmd_rx'] for r in rs)})
        table[-1].update(cost_summary(rs))
        table[-1].update(exit_summary(rs))
    return table


def exit_summary(rs):
    """Median VM exits and notifies per packet over runs; {} where KVM's
    exits were not counted."""
    es = [r['exits'] for r in rs if 'exits' in r]
    if not es:
        return {}
    return {'exits_per_packet': statistics.median(e['exits'] for e in es),
            'kvm_notify_per_packet': statistics.median(e['notify'] for e in es)}


EXIT_COLUMNS = [Column('exits/pkt', 9, '%.4f'), Column('kick/pkt', 9, '%.4f')]


def exit_cells(t):
    if 'exits_per_packet' not in t:
        return [None] * len(EXIT_COLUMNS)
    return [t['exits_per_packet'], t['kvm_notify_per_packet']]


def cost_summary(rs):
    """Medians over runs of the per-packet cost, and the instructions'
    spread (%); {} without --cost."""
    cs = [r['cost'] for r in rs if 'cost' in r]
    if not cs:
        return {}
    insns = [c['insns'] for c in cs]
    return {'insns_per_packet': statistics.median(insns), 'insns_spread': spread(insns),
            'insns_min': min(insns),
            'halts_per_packet': statistics.median(c['halts'] for c in cs),
            'irqs_per_packet': statistics.median(c['irqs'] for c in cs),
            'io_per_packet': statistics.median(c['io'] for c in cs),
            'notify_per_packet': statistics.median(c['notify'] for c in cs),
            'idle_rate': statistics.median(c['idle_rate'] for c in cs),
            'insns_raw_per_packet': statistics.median(c['insns_raw'] for c in cs),
            'insns_raw_vcpu_per_packet': [statistics.median(v) for v in
                                          zip(*(c['insns_raw_vcpu'] for c in cs))]}


COST_COLUMNS = [Column('insn/pkt', 9, '%.0f'), Column('spread', 7, '%.1f%%'),
                Column('hlt/pkt', 8, '%.4f'), Column('irq/pkt', 8, '%.4f'),
                Column('io/pkt', 8, '%.4f'), Column('ntf/pkt', 8, '%.4f')]


def cost_cells(t):
    if 'insns_per_packet' not in t:
        return [None] * len(COST_COLUMNS)
    return [t['insns_per_packet'], t['insns_spread'], t['halts_per_packet'],
            t['irqs_per_packet'], t['io_per_packet'], t['notify_per_packet']]


def cost_exit_columns(table):
    """The cost and exit columns the rows of `table` have."""
    return ((COST_COLUMNS if any('insns_per_packet' in t for t in table) else [])
            + (EXIT_COLUMNS if any('exits_per_packet' in t for t in table) else []))


def cost_exit_cells(t, columns):
    return ((cost_cells(t) if COST_COLUMNS[0] in columns else [])
            + (exit_cells(t) if EXIT_COLUMNS[0] in columns else []))


def min_max(t):
    return '%8.4f..%-8.4f' % (t['mpps_min'], t['mpps_max'])


def summarize_linux(linux):
    rows = {}
    for r in linux:
        rows.setdefault(r['ring'], []).append(r)
    table = []
    for ring, rs in rows.items():
        mpps = [r['mpps'] for r in rs]
        table.append({'ring': ring, 'runs': len(rs), 'mpps_median': statistics.median(mpps),
                      'cpu_mpps_median': cpu_medians(rs),
                      'mpps_min': min(mpps), 'mpps_max': max(mpps), 'packets': rs[0]['packets'],
                      'errors': sum(r['errors'] for r in rs),
                      'testpmd_rx': sum(r['testpmd_rx'] for r in rs)})
        table[-1].update(cost_summary(rs))
        table[-1].update(exit_summary(rs))
    return table


def compare(table, linux_table, results, linux, opts):
    """Per layout: ringside's median Mpps per txpoll, Linux's, the ratios;
    with --irq-cpu or --pair-cpu, ringside's boots of the first placement."""
    first = ((opts.irq_cpu or [None])[0], (opts.pair_cpu or [None])[0])
    table = [t for t in table if (t.get('irq_cpu'), t.get('pair_cpu')) == first]
    results = [r for r in results if (r.get('irq_cpu'), r.get('pair_cpu')) == first]
    by = {(t['ring'], t['txpoll']): t['mpps_median'] for t in table}
    lx = {t['ring']: t['mpps_median'] for t in linux_table}
    per_run = {(r['round'], r['ring'], r.get('txpoll')): r['mpps'] for r in results + linux}
    out = []
    for ring in opts.rings:
        row = {'ring': ring, 'linux_mpps': lx.get(ring)}
        for txpoll in opts.txpoll:
            m = by.get((ring, txpoll))
            row['ringside_txpoll%d_mpps' % txpoll] = m
            row['ratio_txpoll%d' % txpoll] = m / lx[ring] if m and lx.get(ring) else None
            # the same ratio within each round (ringside and Linux ran
            # back to back there)
            row['round_ratios_txpoll%d' % txpoll] = [
                    per_run[(rnd, ring, txpoll)] / per_run[(rnd, ring, None)]
                    for rnd in range(opts.rounds)
                    if per_run.get((rnd, ring, txpoll)) and per_run.get((rnd, ring, None))]
        out.append(row)
    return out


def print_table(table, opts):
    print('ringside pktgen -> %s, %d x %d B frames, burst %d, '
          '%d round(s), accel %s, QEMU on CPU %s%s%s'
          % (PEERS[opts.peer], opts.count, opts.size, opts.burst, opts.rounds, opts.accel,
             'any' if opts.pin is None else opts.pin,
             ', testpmd lcores ' + opts.lcores if opts.peer == 'testpmd' else '',
             ', %d queue pairs on %d vCPUs' % (opts.queues, opts.queues)
             if opts.queues > 1 else ''))
    extra = cost_exit_columns(table)
    irq = [Column('irq', 5, left=True)] if any(t.get('irq_cpu') for t in table) else []
    pairs = ([Column('pairs', 6, left=True), Column('Mpps per cpu', 20, left=True)]
             if any(t.get('pair_cpu') for t in table) else [])
    out = Table([Column('ring', 7, left=True), Column('txpoll', 6, '%d', left=True)] + irq
                + pairs + [Column('Mpps', 10, '%.4f'), Column('min..max', 17),
                           Column('kicks/pkt', 10, '%.5f'), Column('ring full', 10, '%d')]
                + extra)
    for t in table:
        out.row(t['ring'], t['txpoll'], *([t['irq_cpu']] if irq else []),
                *([t['pair_cpu'], per_cpu_text(t)] if pairs else []), t['mpps_median'],
                min_max(t), t['kicks_per_packet'], t['ring_full'], *cost_exit_cells(t, extra))
    out.print()
    print_vcpu_cost(table)
    print_irq_ratios(table)
    print_pair_ratios(table)
    first = (opts.irq_cpu or [None])[0]
    by = {(t['ring'], t['txpoll']): t['mpps_median'] for t in table
          if t.get('irq_cpu') == first}
    for ring in opts.rings:
        if (ring, 1) in by and (ring, 0) in by and by[(ring, 0)]:
            print('%s: txpoll=1 / txpoll=0 = %.2fx' % (ring, by[(ring, 1)] / by[(ring, 0)]))
    for txpoll in opts.txpoll:
        if ('packed', txpoll) in by and ('split', txpoll) in by and by[('split', txpoll)]:
            print('txpoll=%d: packed / split = %.2fx'
                  % (txpoll, by[('packed', txpoll)] / by[('split', txpoll)]))


def print_vcpu_cost(table, guest='ringside'):
    """--cost with several vCPUs (--irq-cpu): each vCPU's instructions per
    packet beside all of them (idle not taken off: it is not split by vCPU)."""
    rows = [t for t in table if len(t.get('insns_raw_vcpu_per_packet') or []) > 1]
    if not rows:
        return
    n = max(len(t['insns_raw_vcpu_per_packet']) for t in rows)
    out = Table([Column('ring', 7, left=True), Column('txpoll', 6, left=True),
                 Column('irq', 5, left=True), Column('insn/pkt', 9, '%.0f')]
                + [Column('cpu%d' % i, 9, '%.0f') for i in range(n)],
                title='%s guest instructions per packet per vCPU, idle included' % guest)
    for t in rows:
        per = t['insns_raw_vcpu_per_packet']
        out.row(t['ring'], t.get('txpoll', '-'), t.get('irq_cpu'), t['insns_raw_per_packet'],
                *(per + [None] * (n - len(per))))
    out.print()


def print_pair_ratios(table):
    """--pair-cpu spread,cpu0: per layout and txpoll, the pairs on their own
    CPUs against all on CPU 0."""
    by = {(t['ring'], t['txpoll'], t.get('irq_cpu'), t.get('pair_cpu')): t['mpps_median']
          for t in table}
    for (ring, txpoll, irq_cpu, pair_cpu), mpps in by.items():
        cpu0 = by.get((ring, txpoll, irq_cpu, 'cpu0'))
        if pair_cpu == 'spread' and cpu0:
            print('%s txpoll=%d%s: net_pair_cpu=spread / cpu0 = %.2fx'
                  % (ring, txpoll, ' net_irq=' + irq_cpu if irq_cpu else '', mpps / cpu0))


def print_irq_ratios(table):
    """--irq-cpu own,other: per layout and txpoll, the TX interrupt on
    another vCPU against on pktgen's own."""
    by = {(t['ring'], t['txpoll'], t.get('irq_cpu')): t['mpps_median'] for t in table}
    for (ring, txpoll, irq_cpu), mpps in by.items():
        own = by.get((ring, txpoll, 'own'))
        if irq_cpu == 'other' and own:
            print('%s txpoll=%d: net_irq=other / net_irq=own = %.2fx'
                  % (ring, txpoll, mpps / own))


def print_linux(linux_table, cmp, opts):
    n = opts.queues
    print('Linux %s pktgen (%s) -> the same peer, same QEMU options, '
          '%d x %d B frames, burst %d' % (
              linux_guest.kernel_version(), '1 kpktgend thread, 1 flow' if n == 1 else
              '%d kpktgend threads, each on its CPU and queue' % n,
              opts.count, opts.size, opts.burst))
    extra = cost_exit_columns(linux_table)
    per = [Column('Mpps per cpu', 20, left=True)] if n > 1 else []
    out = Table([Column('ring', 7, left=True)] + per + [Column('Mpps', 10, '%.4f'),
                Column('min..max', 17), Column('errors', 8, '%d')] + extra)
    for t in linux_table:
        out.row(t['ring'], *([per_cpu_text(t)] if per else []), t['mpps_median'], min_max(t),
                t['errors'], *cost_exit_cells(t, extra))
    out.print()
    if not cmp or not any(r['ringside_txpoll%d_mpps' % opts.txpoll[0]] for r in cmp):
        return
    out = Table([Column('ring', 7, left=True)]
                + [Column('ringside tp=%d' % tp, 13, '%.4f') for tp in opts.txpoll]
                + [Column('Linux', 10, '%.4f')]
                + [Column('tp=%d / Linux' % tp, 14, '%.2fx') for tp in opts.txpoll])
    for r in cmp:
        out.row(r['ring'], *[r['ringside_txpoll%d_mpps' % tp] for tp in opts.txpoll],
                r['linux_mpps'], *[r['ratio_txpoll%d' % tp] for tp in opts.txpoll])
    out.print()
    parts = []
    for r in cmp:
        rr = ['tp=%d %.2fx' % (txpoll, statistics.median(r['round_ratios_txpoll%d' % txpoll]))
              for txpoll in opts.txpoll if r['round_ratios_txpoll%d' % txpoll]]
        if rr:
            parts.append('%s %s' % (r['ring'], ' '.join(rr)))
    if parts:
        print('ringside / Linux within each round, median: %s' % '; '.join(parts))


def pin_cpu(text):
    """--pin: a host CPU, or -1 / none for no pinning (-1 out)."""
    if text in ('-1', 'none'):
        return -1
    return nonneg_int(text)


def build_parser():
    """The options; --help fits a screen, --help-all has the rest."""
    p = Parser(prog=PROG, usage='%(prog)s [options]',
               description='pktgen Mpps of ringside and Linux into testpmd or a tap.')
    a = p.add_argument
    measure.add(p, count=200000, rounds=3, guests='ringside,linux', cost=None)
    a('--size', type=size, default=64, metavar='B', help='frame bytes without FCS (64)')
    a('--burst', type=positive_int, default=256, metavar='N',
      help='frames per kick at most (256)')
    a('--rings', type=csv_list(str, ('split', 'packed')), metavar='LIST',
      help='layouts (split,packed; vhost-net: split)')
    a('--txpoll', type=csv_list(int, (0, 1)), default=[1, 0], metavar='LIST',
      help='TX reclaim modes (1,0)')
    a('--peer', choices=('testpmd', 'vhost-net'), default='testpmd', metavar='testpmd|vhost-net',
      help="receiver: testpmd, or the kernel's vhost-net")
    a('--irq-cpu', type=csv_list(str, IRQ_CPUS), metavar='LIST',
      help="ringside's TX interrupt: own,other vCPU (off)")
    a('--queues', type=positive_int, default=1, metavar='N',
      help='N queue pairs, N vCPUs, a sender on each (1)')
    a('--pair-cpu', type=csv_list(str, PAIR_CPUS), metavar='LIST', more=True,
      help="with --queues: ringside's pair owners (net_pair_cpu) as an axis, a boot each "
           "(spread)")
    a('--machine', choices=('q35', 'pc'), default='q35', metavar='q35|pc', more=True,
      help="the guests' machine type (q35)")
    a('--lcores', default='0-1', more=True, help='testpmd -l: main, forwarding lcore (0-1)')
    a('--pin', type=pin_cpu, default=0, metavar='CPU',
      help='QEMU on this CPU only (0; -1 or none: not pinned)')
    a('--accel', choices=('auto', 'kvm', 'tcg'), metavar='auto|kvm|tcg', more=True,
      help='tcg (testpmd) or auto (vhost-net)')
    a('--timeout', type=positive_float, default=300.0, metavar='S', more=True,
      help='seconds per step (300)')
    add_options(p)
    a('-v', '--verbose', action='store_true', more=True, help='progress on stderr, keep logs')
    return p


def main(argv=None):
    p = build_parser()
    opts = p.parse_args(argv)
    opts.argv = argv
    if set(opts.guests) - {'ringside', 'linux'}:
        p.error('--guests: net boots ringside and linux (6.1)')
    if opts.irq_cpu and ('ringside' not in opts.guests
                         or len(set(opts.irq_cpu)) != len(opts.irq_cpu)):
        p.error('--irq-cpu takes own and/or other, each once, for ringside (in --guests)')
    most = key_range('net_queues')[1]
    if opts.queues > most:
        p.error('--queues: ringside takes at most %d queue pairs (its net_queues key)' % most)
    if opts.pair_cpu and (opts.queues < 2 or len(set(opts.pair_cpu)) != len(opts.pair_cpu)):
        p.error('--pair-cpu takes spread and/or cpu0, each once, with --queues 2 or more')
    if opts.pin < 0:
        opts.pin = None
    if opts.peer == 'vhost-net':
        why = vhost_net.usable()
        if why:
            p.error('--peer vhost-net: ' + why)
        if opts.rings and 'packed' in opts.rings:
            # QEMU: vhost_set_features failed (95), and nothing completes
            p.error('--peer vhost-net: the kernel\'s vhost has no packed ring; --rings split')
        opts.rings = opts.rings or ['split']
        opts.accel = opts.accel or 'auto'
    elif not shutil.which(TESTPMD):
        print('%s: %s not found (apt-get install dpdk-dev)' % (PROG, TESTPMD), file=sys.stderr)
        return 1
    opts.rings = opts.rings or ['split', 'packed']
    opts.accel = opts.accel or 'tcg'
    if 'linux' in opts.guests and not (os.path.exists(LINUX_KERNEL)
                                       and os.path.exists(LINUX_INITRD)):
        print('%s: %s missing (make linux-guest)' % (PROG, LINUX_INITRD), file=sys.stderr)
        return 1
    if opts.pin is not None and not shutil.which('taskset'):
        print('%s: taskset not found (package util-linux)' % PROG, file=sys.stderr)
        return 1
    try:
        results, linux = run_bench(opts)
    except (TestPmdError, NetError, rr.LaunchError) as e:
        print('%s: %s' % (PROG, e), file=sys.stderr)
        return 1
    table = summarize(results)
    linux_table = summarize_linux(linux)
    cmp = compare(table, linux_table, results, linux, opts) if linux_table else []
    if table:
        print_table(table, opts)
    if linux_table:
        if table:
            print()
        print_linux(linux_table, cmp, opts)
    publish(PROG, opts, {'runs': results, 'summary': table, 'linux_runs': linux,
                         'linux_summary': linux_table, 'compare': cmp,
                         'linux_kernel': linux_guest.kernel_version() if linux else None,
                         'params': {'count': opts.count, 'size': opts.size, 'burst': opts.burst,
                                    'rounds': opts.rounds, 'accel': opts.accel, 'pin': opts.pin,
                                    'lcores': opts.lcores, 'machine': opts.machine,
                                    'peer': opts.peer, 'irq_cpu': opts.irq_cpu,
                                    'queues': opts.queues, 'pair_cpu': opts.pair_cpu}},
            cells_of(results, linux), accel=opts.accel)
    return 0


def cells_of(results, linux):
    """Each run's Mpps and cost per packet, a sample per round."""
    cells = Cells()
    for guest, runs in (('ringside', results), ('linux', linux)):
        for r in runs:
            config = {'cell': 'pktgen', 'guest': guest, 'ring': r['ring']}
            config.update({k: r[k] for k in ('txpoll', 'irq_cpu', 'pair_cpu')
                           if r.get(k) is not None})
            cells.add(config, 'Mpps', 'Mpps', r['mpps'], 'higher')
            if 'cost' in r:
                cells.add(config, 'insn/pkt', 'insn', r['cost']['insns'], 'lower')
            if 'exits' in r:
                cells.add(config, 'exits/pkt', 'exits', r['exits']['exits'], 'lower')
    return cells
