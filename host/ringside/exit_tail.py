# SPDX-License-Identifier: MIT
"""exits --tail N: the latency tail on KVM, every round trip kept.

Each variant boots under KVM with the kernel's vhost-vsock, the guest
alone on the host, and answers N 64 B round trips from the same client
(ringside-bench pingpong --trace): p50, p99, p99.9, the max, the round
trips over 10 and over 100 ms and the whole run. For ringside the
guest's own view beside it (`stats json idle`): the wake-ups its idle
watchdog found lost or owed by the device, and the interrupts that
landed on its hlt (shadow_breaks).

--shadow adds the host's view, with bpftrace on KVM's tracepoints: an
interrupt window that opened at the very instruction an external
interrupt had stopped the guest on (a VINTR exit at the RIP of the last
INTR exit: KVM saw an interrupt shadow there that then was gone), and,
of those, the ones where the guest then halted at that same RIP right
after the injection: it took the interrupt and slept through what it
announced, until the next injection (a lost halt, with its length).
docs/results/kvm.md has the sequence.

A variant is GUEST[@ELF][:KEY=VALUE,...]: ringside (its keys on the
command line, another build with @ELF) or a Linux guest (linux,
linux-6.12; keys are kernel parameters).
"""

import os
import signal
import subprocess
import tempfile
import time

import ringside as rr

from . import linux_guest
from .benchlib import BENCH, booted, wait_vsock_cid
from .guest_stats import guest_stats
from .images import is_linux, linux_missing
from .table import Column, Table

CID = 3
PROG = 'ringside exits'
DEFAULT_VARIANTS = ('ringside', 'ringside:idle_guard=0', 'linux')
# Round trips per connection: a guest lost under nesting (docs/results/kvm.md)
# keeps the chunks it finished.
CHUNK = 10000

# Exit reasons of AMD's SVM (the nested host's): INTR, VINTR, HLT.
SVM_INTR, SVM_VINTR, SVM_HLT = 0x60, 0x64, 0x78
# bpftrace compiles its program first: minutes in a loaded L1 under TCG.
ATTACH_TIMEOUT = 600
# Every exit but INTR with its RIP and the RIP of the thread's last INTR
# exit; every first injection. Printed as they come: the analysis pairs
# them per vCPU thread.
SHADOW_BT = '''
tracepoint:kvm:kvm_exit /args->exit_reason == %d/ { @intr_rip[tid] = args->guest_rip; }
tracepoint:kvm:kvm_exit /args->exit_reason != %d/ {
    printf("X %%llu %%d %%x %%llx %%llx\\n", nsecs, tid, args->exit_reason,
           args->guest_rip, @intr_rip[tid]);
}
tracepoint:kvm:kvm_inj_virq { printf("I %%llu %%d %%d\\n", nsecs, tid, args->%s); }
'''


class VariantFailed(Exception):
    """A variant that gave no figures; the others still run."""


def parse_variant(text):
    """GUEST[@ELF][:KEY=VALUE,...] -> (label, guest, elf or None, keys)."""
    head, _, keys = text.partition(':')
    guest, _, elf = head.partition('@')
    words = [w for w in keys.split(',') if w]
    if guest != 'ringside' and not is_linux(guest):
        raise ValueError('%r: the guest is ringside, linux or linux-6.12' % text)
    if elf and is_linux(guest):
        raise ValueError('%r: @ELF is for ringside' % text)
    if guest == 'ringside' and any('=' not in w for w in words):
        raise ValueError('%r: ringside keys are KEY=VALUE' % text)
    label = ' '.join([guest + ('@' + os.path.basename(elf) if elf else '')] + words)
    return label, guest, elf or None, ' '.join(words)


def launcher_args(guest, elf, keys):
    args = ['--vsock', '--vsock-transport', 'kernel', '--accel', 'kvm', '--boot', 'elf',
            '--vsock-cid', str(CID)]
    if is_linux(guest):
        return args + linux_guest.linux_launch_args(guest, keys)
    if elf:
        args += ['--kernel', elf]
    return args + (['--cmdline', keys] if keys else [])


def inj_field():
    """kvm_inj_virq's vector field: 'vector' on newer kernels, 'irq' before."""
    fmt = '/sys/kernel/tracing/events/kvm/kvm_inj_virq/format'
    try:
        with open(fmt) as f:
            return 'vector' if ' vector;' in f.read() else 'irq'
    except OSError:
        return 'irq'


class ShadowTrace:
    """bpftrace on KVM's exits and injections while a variant runs."""

    def __init__(self, path):
        self.path = path
        prog = SHADOW_BT % (SVM_INTR, SVM_INTR, inj_field())
        self.proc = subprocess.Popen(['bpftrace', '-o', path, '-e', prog],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        # tracing once the guest's first exit is in the file (an idle
        # guest exits a few times a second): the probes are attached
        deadline = time.monotonic() + ATTACH_TIMEOUT
        while time.monotonic() < deadline:
            if os.path.exists(path) and '\nX ' in open(path).read(65536):
                return
            if self.proc.poll() is not None:
                raise VariantFailed('bpftrace exited: %s' % self.proc.stdout.read().strip())
            time.sleep(0.2)
        self.stop()
        raise VariantFailed('bpftrace traced no exit within %d s' % ATTACH_TIMEOUT)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def analyse_shadow(path):
    """(shadow breaks, [lost halt ms, ...]) from a ShadowTrace's file."""
    events = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and w[0] == 'X' and len(w) == 6:
                events.append(('X', int(w[1]), w[2], int(w[3], 16), w[4], w[5]))
            elif w and w[0] == 'I' and len(w) == 4:
                events.append(('I', int(w[1]), w[2]))
    by_thread = {}
    for e in events:
        by_thread.setdefault(e[2], []).append(e)
    breaks, lost = 0, []
    for seq in by_thread.values():
        for i, e in enumerate(seq):
            if e[0] != 'X' or e[3] != SVM_VINTR or e[4] != e[5]:
                continue
            breaks += 1
            # the injection, then a HLT exit at the same RIP: a halt the
            # interrupt should have ended, which lasts to the next injection
            nxt = seq[i + 1:i + 3]
            if (len(nxt) == 2 and nxt[0][0] == 'I' and nxt[1][0] == 'X'
                    and nxt[1][3] == SVM_HLT and nxt[1][4] == e[4]):
                woke = next((x[1] for x in seq[i + 3:] if x[0] == 'I'), None)
                if woke is not None:
                    lost.append((woke - nxt[1][1]) / 1e6)
    return breaks, lost


def percentile(sorted_ns, p):
    return sorted_ns[min(len(sorted_ns) - 1, int(len(sorted_ns) * p / 100.0))]


def one_variant(label, guest, elf, keys, opts, work):
    """The row of one variant: latency figures, guest and host counts."""
    tag = ''.join(c if c.isalnum() else '-' for c in label)
    trace = os.path.join(work, 'rt-%s.txt' % tag)
    lopts = rr.parse_args(launcher_args(guest, elf, keys))
    shadow = None
    with booted(lopts, 'kvm', 'exit-tail', linux=is_linux(guest)) as launch:
        wait_vsock_cid(CID, prog=PROG)
        if opts.shadow:
            shadow = ShadowTrace(os.path.join(work, 'bt-%s.txt' % tag))
        try:
            ns, whole, lost = round_trips(opts.tail, trace)
        finally:
            if shadow:
                shadow.stop()
        if not ns:
            raise VariantFailed(lost)
        idle = None
        if not is_linux(guest) and not lost:
            idle = guest_stats(launch.console, 60, 'idle')['idle']
            launch.poweroff()
    ns.sort()
    row = {'round trips': len(ns), 'p50 us': percentile(ns, 50) / 1e3,
           'p99 us': percentile(ns, 99) / 1e3, 'p99.9 us': percentile(ns, 99.9) / 1e3,
           'max ms': ns[-1] / 1e6, 'over 10 ms': sum(1 for x in ns if x > 10e6),
           'over 100 ms': sum(1 for x in ns if x > 100e6), 'whole s': whole}
    if lost:
        row['lost'] = lost
    if idle:
        for k in ('shadow_breaks', 'lost_wakeups', 'missed_notifications', 'watchdog_looks'):
            row[k] = idle.get(k)
    if shadow:
        breaks, lost = analyse_shadow(shadow.path)
        row.update({'host shadow breaks': breaks, 'lost halts': len(lost),
                    'longest lost halt ms': max(lost) if lost else 0.0})
    return row


def round_trips(count, trace):
    """count 64 B round trips, CHUNK a connection: ([ns, ...], seconds,
    why the guest stopped answering or None)."""
    ns, whole = [], 0.0
    while len(ns) < count:
        n = min(CHUNK, count - len(ns))
        t0 = time.monotonic()
        proc = subprocess.run([BENCH, 'pingpong', '--cid', str(CID), '--size', '64',
                               '--count', str(n), '--warmup', '0' if ns else '200',
                               '--trace', trace, '--timeout', '120'],
                              capture_output=True, text=True, timeout=n * 0.05 + 600)
        whole += time.monotonic() - t0
        if proc.returncode:
            return ns, whole, ('ringside-bench pingpong failed (%d) after %d round trips: %s'
                               % (proc.returncode, len(ns), proc.stderr.strip()))
        with open(trace) as f:
            ns += [int(line.split()[2]) for line in f if line[:1].isdigit()]
    return ns, whole, None


def print_tail(rows, shadow):
    width = max(len(k) for k in rows)
    cols = [Column('variant', width, left=True), Column('p50 us', 8, '%.0f'),
            Column('p99 us', 8, '%.0f'), Column('p99.9 us', 9, '%.0f'),
            Column('max ms', 8, '%.1f'), Column('>10ms', 6, '%d'), Column('>100ms', 7, '%d'),
            Column('whole s', 8, '%.1f'), Column('g.shadow', 9, '%d'), Column('g.lost', 7, '%d'),
            Column('g.missed', 9, '%d')]
    if shadow:
        cols += [Column('h.shadow', 9, '%d'), Column('h.lost', 7, '%d'),
                 Column('h.lost max ms', 14, '%.1f')]
    t = Table(cols, title='\n64 B round trips on KVM, the kernel\'s vhost-vsock (g.: the '
                          'guest\'s own counts, ringside; h.: the host\'s trace)')
    for label, r in rows.items():
        if 'failed' in r:
            continue
        cells = [r['p50 us'], r['p99 us'], r['p99.9 us'], r['max ms'], r['over 10 ms'],
                 r['over 100 ms'], r['whole s'], r.get('shadow_breaks'), r.get('lost_wakeups'),
                 r.get('missed_notifications')]
        if shadow:
            cells += [r['host shadow breaks'], r['lost halts'], r['longest lost halt ms']]
        t.row(label, *cells)
    t.print()
    for label, r in rows.items():
        if 'failed' in r:
            print('%s: no figures: %s' % (label, r['failed']))
        elif 'lost' in r:
            print('%s: %d round trips, then: %s' % (label, r['round trips'], r['lost']))


def run(opts):
    """Every variant in turn; {label: row}."""
    variants = [parse_variant(v) for v in opts.variant or DEFAULT_VARIANTS]
    for _, guest, elf, _ in variants:
        if is_linux(guest) and linux_missing(guest):
            raise SystemExit('%s: error: %s' % (PROG, linux_missing(guest)))
        if elf and not os.path.exists(elf):
            raise SystemExit('%s: error: no such ELF: %s' % (PROG, elf))
    if opts.shadow and not any(os.access(os.path.join(d, 'bpftrace'), os.X_OK)
                               for d in os.environ.get('PATH', '').split(':')):
        raise SystemExit('%s: error: --shadow needs bpftrace (apt-get install bpftrace)' % PROG)
    rows = {}
    with tempfile.TemporaryDirectory(prefix='ringside-tail-') as work:
        for label, guest, elf, keys in variants:
            print('%s: %s: %d round trips' % (PROG, label, opts.tail), flush=True)
            try:
                rows[label] = one_variant(label, guest, elf, keys, opts, work)
            except VariantFailed as e:
                print('%s: %s: %s' % (PROG, label, e), flush=True)
                rows[label] = {'failed': str(e)}
    print('%s --tail: KVM, the kernel\'s vhost-vsock, %s; %d 64 B round trips a variant'
          % (PROG, time.strftime('%Y-%m-%d %H:%M'), opts.tail))
    print_tail(rows, opts.shadow)
    return rows
