# SPDX-License-Identifier: MIT
"""exits: a guest's VM exits per operation on KVM, ringside beside Linux.

On a KVM host (or the nested one: `ringside nested exits`), boots each
guest under KVM with the kernel's vhost-vsock (`vhost-vsock-pci`, AF_VSOCK
to its CID) and counts the host's VM exits by kind (ringside/kvm_exits.py)
around each workload, the guest alone on the host:

  idle        per second of an idle guest
  64 B rt     per 64-byte echo round trip (ringside-bench pingpong)
  4 KiB rt    per 4 KiB round trip
  h2g MiB     per MiB the host writes to the guest's sink (64 KiB writes)
  g2h MiB     per MiB the host reads from the guest's source

Every row has the exits by kind (see kvm_exits.KINDS) and the ports and
MSRs behind them. For ringside the guest's own kicks and interrupts per
round trip (its `stats virtio-vsock`) stand beside the exits: a kick is a
notify exit, so the two agree. The Linux guests are Debian's kernels:
`linux` (6.1, build/linux-guest, `make linux-guest`) and `linux-6.12`
(`make linux-guest-6.12`), seed 000's before and after:
`ringside nested exits --guests linux,linux-6.12`.

--floor measures the notification floor instead (exit_floor.py): 64 B
round trips with each guest halting and polling against devices that
sleep and devices that poll (our back end's --poll, vhost-net's poll-us):
`ringside nested exits --floor`.

--tail N measures the latency tail instead (exit_tail.py): N 64 B round
trips per variant, every one kept, with the guest's and (--shadow) the
host's count of the wake-ups lost on the halt path:
`ringside nested exits --tail 100000 --shadow`.
"""

import os
import time

import ringside as rr

from .. import exit_floor, exit_tail, kvm_exits, linux_guest, measure
from ..benchlib import BENCH, Progress, run_bench, wait_vsock_cid
from ..cli import Parser, positive_float, positive_int
from ..guest_stats import config_all, config_changed, guest_stats, vsock_queue_sum
from ..images import is_linux, linux_missing
from ..process import read_text, vhost_workers
from ..results import Cells, add_options, publish
from ..table import Column, Table

NAME = 'exits'
SUMMARY = 'VM exits per operation on KVM, ringside beside Linux'
GROUP = 'measure'
ALIASES = ('exit-cost',)
PROG = 'ringside exits'
CID = 3
ECHO, SINK, SOURCE = 1234, 1235, 1236
ROWS = ('idle', '64 B rt', '4 KiB rt', 'h2g MiB', 'g2h MiB')
MIB = 1 << 20


def launcher_args(which, extra, opts):
    """`ringside run`'s arguments for guest `which` with `extra` on its command line."""
    args = ['--vsock', '--vsock-transport', 'kernel', '--accel', 'kvm', '--boot', 'elf',
            '--vsock-cid', str(CID)]
    if is_linux(which):
        return args + linux_guest.linux_launch_args(
                which, ' '.join(w for w in (opts.linux_cmdline, extra) if w))
    cmdline = ' '.join(w for w in (opts.cmdline, extra) if w)
    if opts.elf:
        args += ['--kernel', opts.elf]
    return args + (['--cmdline', cmdline] if cmdline else [])


def variants(opts):
    """(label, guest, extra command line) for every guest to boot, in order."""
    out = []
    for which in opts.guests:
        if not opts.idle_ab:
            out.append((which, which, ''))
            continue
        halt = 'idle=halt' if which == 'ringside' else ''   # Linux halts by default
        out += [(which + ' idle=halt', which, halt), (which + ' idle=poll', which, 'idle=poll')]
    return out


def ringside_counters(console, per_queue=None):
    """(kicks, interrupts) the guest counted on its vsock queues; the kicks
    of each queue into the dict per_queue too."""
    st = guest_stats(console, 60, 'virtio-vsock')
    if per_queue is not None:
        per_queue.update((q, c['kicks']) for q, c in st['virtio-vsock']['queues'].items())
    return vsock_queue_sum(st, 'kicks'), vsock_queue_sum(st, 'interrupts')


def host_cpu_ns(qemu_pid):
    """CPU time the guest costs this host so far: QEMU's threads and the
    vhost workers the kernel runs for it ([vhost-PID]), in ns."""
    pids = ['%d/task/%s' % (qemu_pid, t) for t in os.listdir('/proc/%d/task' % qemu_pid)]
    pids += vhost_workers(qemu_pid)
    return sum(int((read_text('/proc/%s/schedstat' % p) or '0').split()[0]) for p in pids)


def around(counter, qemu_pid, run, ops_of):
    """run()'s result, and what it cost per operation: exits by kind and
    host CPU microseconds ('cpu us')."""
    before, cpu = counter.snapshot(), host_cpu_ns(qemu_pid)
    res = run()
    cpu = host_cpu_ns(qemu_pid) - cpu
    ops = ops_of(res)
    per_op = kvm_exits.delta(before, counter.snapshot(), ops)
    per_op['cpu us'] = cpu / 1000.0 / ops
    return res, per_op


def measure_guest(which, launch, counter, opts):
    """{row: {kind: exits per operation, ...}} for one booted guest."""
    rows = {}
    console, pid = launch.console, launch.qemu.pid
    target = ['--cid', str(CID)]
    _, rows['idle'] = around(counter, pid, lambda: time.sleep(opts.idle), lambda r: opts.idle)
    rts = opts.count + opts.warmup
    for size, row in ((64, '64 B rt'), (4096, '4 KiB rt')):
        q0, q1 = {}, {}
        guest_before = ringside_counters(console, q0) if which == 'ringside' else None
        irq_before = linux_guest.virtio_irqs(console) if is_linux(which) else None
        args = ['pingpong'] + target + ['--size', str(size), '--count', str(opts.count),
                                        '--warmup', str(opts.warmup)]
        res, rows[row] = around(counter, pid, lambda: run_bench(args, 900, PROG),
                                lambda r: rts)
        for p in ('p1', 'p50', 'mean', 'p99'):
            rows[row][p + ' us'] = res['results'][0][p] / 1000.0
        if guest_before:
            kicks, irqs = ringside_counters(console, q1)
            rows[row]['guest kicks'] = (kicks - guest_before[0]) / rts
            rows[row]['guest irqs'] = (irqs - guest_before[1]) / rts
            # which queue kicked: the TX kick is the reply's, the rest refills
            rows[row]['guest kicks by queue'] = {
                q: (n - q0.get(q, 0)) / rts for q, n in q1.items()}
        if irq_before is not None:
            rows[row]['guest irqs'] = (linux_guest.virtio_irqs(console) - irq_before) / rts
    for d, port in (('h2g', SINK), ('g2h', SOURCE)):
        args = ['stream'] + target + ['--port', str(port), '--dir', d, '-l', '65536',
                                      '-P', '1', '--time', str(opts.time)]
        res, rows[d + ' MiB'] = around(
                counter, pid, lambda: run_bench(args, opts.time * 10 + 120, PROG),
                lambda r: max(r['bytes'], 1) / MIB)
        rows[d + ' MiB']['Gb/s'] = res['gbps']
    return rows


def run_guest(which, extra, opts, counter):
    lopts = rr.parse_args(launcher_args(which, extra, opts))
    base = os.path.join(rr.REPO, 'build', 'exits-%s' % which)
    log, serial = open(base + '.log', 'w'), open(base + '.serial.log', 'wb')
    with log, serial, rr.Launch(lopts, 'kvm', qemu_stderr=log, log=serial) as launch:
        launch.wait_ready(linux=is_linux(which))
        wait_vsock_cid(CID, ECHO, prog=PROG)
        config = {}
        if which == 'ringside':
            config = {'all': config_all(launch.console, 60),
                      'changed': config_changed(launch.console, 60)}
        rows = measure_guest(which, launch, counter, opts)
        launch.poweroff()
    return rows, config


def print_table(results):
    kinds = list(kvm_exits.KINDS) + ['inj']
    width = max(len(name) for name in results)
    first = [Column('guest', width, left=True), Column('op', 9, left=True)]
    t = Table(first + [Column(k, 7, '%.2f') for k in kinds]
              + [Column('g.kick', 7, '%.2f'), Column('g.irq', 7, '%.2f'),
                 Column('ports, MSRs, vectors', gap='  ', left=True)],
              title='\nVM exits per operation, by kind (KVM tracepoints on this host; inj: '
                    'interrupts injected,\nnot exits; g.kick, g.irq: the guest\'s own counts)')
    for name, rows in results.items():
        for row in ROWS:
            r = rows[row]
            t.row(name, row + ('/s' if row == 'idle' else ''), *[r[k] for k in kinds],
                  r.get('guest kicks'), r.get('guest irqs'),
                  ' '.join([kvm_exits.details(r)] + ['kick:%s %.2f' % qk for qk in sorted(
                      r.get('guest kicks by queue', {}).items()) if qk[1]]))
    t.print()
    t = Table(first + [Column(p, 8, '%.1f') for p in ('p1', 'p50', 'mean', 'p99')]
              + [Column('cpu us', 8, '%.1f'), Column('exits', 7, '%.2f')],
              title='\nround trips and streams: latency (us), host CPU (QEMU and its vhost '
                    'worker, us per op)')
    for name, rows in results.items():
        for row in ROWS:
            r = rows[row]
            t.row(name, row + ('/s' if row == 'idle' else ''),
                  *[r.get(p + ' us') for p in ('p1', 'p50', 'mean', 'p99')], r['cpu us'],
                  r['exits'])
    t.print()
    names = list(results)
    if len(names) > 1:
        print('\nall exits, each guest against %s:' % names[0])
        for other in names[1:]:
            for row in ROWS:
                a, b = results[other][row]['exits'], results[names[0]][row]['exits']
                print('  %-*s %-9s %8.2f / %8.2f = %.2f' % (width, other, row, a, b,
                                                            a / b if b else float('nan')))


def parse_args(argv):
    p = Parser(prog=PROG, description=__doc__.split('\n')[0], usage='%(prog)s [options]')
    measure.add(p, guests='ringside,linux', count=2000, warmup=20, time=3.0)
    p.add_argument('--idle', type=positive_float, default=5.0, metavar='S',
                   help='seconds idle (5)')
    p.add_argument('--cmdline', default='', metavar='KEYS',
                   help="ringside's keys, e.g. 'idle=poll'")
    p.add_argument('--elf', metavar='PATH', more=True,
                   help="ringside's ELF, to compare builds (build/ringside.elf)")
    p.add_argument('--linux-cmdline', default='', metavar='ARGS', more=True,
                   help="the Linux guest's extra kernel parameters, e.g. 'idle=poll'")
    p.add_argument('--idle-ab', action='store_true',
                   help='boot every guest twice, halting and polling when idle (ringside '
                        'idle=halt|poll, Linux default|idle=poll)')
    p.add_argument('--floor', action='store_true',
                   help='the notification floor: exits per 64 B round trip, guests and '
                        'devices halting and polling')
    p.add_argument('--poll-us', type=exit_floor.windows, default='0,2000', metavar='LIST',
                   more=True,
                   help="--floor: vhost-net's busy-poll windows, us (0,2000)")
    p.add_argument('--tail', type=positive_int, metavar='N',
                   help='the latency tail: N 64 B round trips per --variant')
    p.add_argument('--variant', action='append', metavar='GUEST[@ELF][:KEYS]', more=True,
                   help='--tail: a guest and its keys, repeatable (ringside, '
                        'ringside:idle_guard=0, linux)')
    p.add_argument('--shadow', action='store_true',
                   help="--tail: the host's count of lost halts too (bpftrace)")
    add_options(p)
    opts = p.parse_args(argv)
    if any('=' not in w for w in opts.cmdline.split()):
        p.error('--cmdline takes KEY=VALUE words')
    if (opts.floor or opts.tail) and (opts.idle_ab or opts.cmdline or opts.linux_cmdline):
        p.error('--floor and --tail set each guest\'s keys themselves: no --idle-ab, '
                '--cmdline or --linux-cmdline')
    if opts.floor and opts.tail:
        p.error('--floor or --tail, not both')
    if opts.elf and (opts.floor or opts.tail):
        p.error('--elf goes without --floor and --tail (--tail: --variant ringside@ELF)')
    if (opts.variant or opts.shadow) and not opts.tail:
        p.error('--variant and --shadow go with --tail')
    for v in opts.variant or ():
        try:
            exit_tail.parse_variant(v)
        except ValueError as e:
            p.error('--variant %s' % e)
    return opts


def main(argv):
    opts = parse_args(argv)
    opts.argv = argv
    if not os.path.exists('/dev/vhost-vsock'):
        raise SystemExit('%s: error: no /dev/vhost-vsock: run on a KVM host with vhost_vsock, '
                         'or here through ringside nested' % PROG)
    why = kvm_exits.available()
    if why:
        raise SystemExit('%s: error: cannot count VM exits: %s' % (PROG, why))
    for path in (BENCH, opts.elf or rr.DEFAULT_ELF):
        if not os.path.exists(path):
            raise SystemExit('%s: error: %s missing (run make)' % (PROG, path))
    for which in opts.guests:
        if is_linux(which) and linux_missing(which):
            raise SystemExit('%s: error: %s' % (PROG, linux_missing(which)))
    if opts.tail:
        rows = exit_tail.run(opts)
        publish(PROG, opts, {'tail': rows}, accel='kvm')
        return 1 if any('failed' in r or 'lost' in r for r in rows.values()) else 0
    if opts.floor:
        try:
            cells = exit_floor.run(opts)
        except kvm_exits.ExitsUnavailable as e:
            raise SystemExit('%s: error: cannot count VM exits: %s' % (PROG, e))
        publish(PROG, opts, {'floor': cells}, accel='kvm')
        return 0
    results, configs = {}, {}
    try:
        with kvm_exits.ExitCounter() as counter:
            todo = variants(opts)
            progress = Progress(PROG, len(todo))
            for name, which, extra in todo:
                progress.step(name)
                results[name], configs[name] = run_guest(which, extra, opts, counter)
    except kvm_exits.ExitsUnavailable as e:
        raise SystemExit('%s: error: cannot count VM exits: %s' % (PROG, e))
    print('%s: KVM (halt_poll_ns %s), kernel vhost-vsock, %s; %d round trips per size, '
          '%g s streams, %g s idle' % (
              PROG, read_text('/sys/module/kvm/parameters/halt_poll_ns') or '?',
              time.strftime('%Y-%m-%d %H:%M'), opts.count + opts.warmup, opts.time, opts.idle))
    for which, config in configs.items():
        if config:
            print('%s: keys %s' % (which, ' '.join('%s=%s' % kv for kv in
                                                   config['changed'].items()) or 'as default'))
    print_table(results)
    cells = Cells()
    for name, rows in results.items():
        for row, r in rows.items():
            cells.add({'cell': 'exits', 'guest': name, 'op': row}, 'exits', 'exits', r['exits'],
                      'lower')
    publish(PROG, opts, {'results': results, 'config': configs}, cells, accel='kvm')
    return 0
