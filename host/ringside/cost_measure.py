# SPDX-License-Identifier: MIT
"""Measuring guest cost around a workload: the idle rate, spans of counters
with the idle rate taken off, waiting for the guest to settle, the split of
a span into work, poll passes and heap, and per-operation cost cells.

The benchmark scripts (bench-vsock, bench-compare, bench-net, bench-seeds)
and the tests (tests/qemu/test_cost.py) share these, so a benchmark's cost
column is what the tests check.

main() is host/cost-measure, the standard table of guest instructions per
operation: it boots ringside (or, with --linux, the Linux guest of make
linux-guest) with the vsock back end and the ringside-cost plugin, then
measures with the counters bracketed tightly around each workload (idle,
64 B and 4 KiB echo round trips, a stream each way). What the guest does
while it waits is measured as an idle rate just before each workload and
taken off, so the numbers are the work of the operations themselves.
"""

import os
import re
import statistics
import sys
import tempfile
import time

import ringside as rr

from . import cost
from .benchlib import hybrid_connect
from .cli import Parser, nonneg_float, nonneg_int, positive_int
from .images import LINUX_INITRD, LINUX_KERNEL, REPO
from .results import add_options, publish
from .table import Column, Table

IDLE_WINDOW = 1.0   # seconds of idle counting before each workload


class IdleRate(float):
    """Guest instructions per second while nothing is asked of it; also
    `per_halt`: instructions per idle wake-up (tick, poll loop, halt), and
    `per_halted_s`: instructions per second the guest spent halted (the
    plugin's idle_ns), the rate to charge for halted time in a busy span."""
    per_halt = 0.0
    per_halted_s = 0.0


def idle_rate(block, seconds=IDLE_WINDOW):
    t0, c0 = time.monotonic(), block.snapshot()
    time.sleep(seconds)
    t1, c1 = time.monotonic(), block.snapshot()
    d = c1 - c0
    rate = IdleRate(d.totals['insns'] / (t1 - t0))
    rate.per_halt = d.totals['insns'] / max(1, d.totals['halts'])
    halted = d.totals['idle_ns'] / 1e9
    rate.per_halted_s = d.totals['insns'] / halted if halted > 0 else float(rate)
    return rate


def settle(block, rate, limit=30.0, quiet=3):
    """Wait until the guest is back to its idle instruction rate (it has
    finished the work it was given) for `quiet` 0.1 s windows in a row;
    returns the time that took."""
    start = time.monotonic()
    last, t_last = block.snapshot().totals['insns'], start
    calm = 0
    while time.monotonic() - start < limit and calm < quiet:
        time.sleep(0.1)
        now, t_now = block.snapshot().totals['insns'], time.monotonic()
        calm = calm + 1 if now - last <= 1.5 * rate * (t_now - t_last) + 2000 else 0
        last, t_last = now, t_now
    return time.monotonic() - start


class Span:
    """Counters around one workload, with the idle rate taken off."""

    def __init__(self, block, rate):
        self.block, self.rate = block, rate

    def __enter__(self):
        self.t0 = time.monotonic()
        self.c0 = self.block.snapshot()
        return self

    def __exit__(self, *exc):
        self.c1 = self.block.snapshot()
        self.seconds = time.monotonic() - self.t0
        self.delta = self.c1 - self.c0

    def insns(self):
        """Instructions of the work: the delta less idle for its duration."""
        return self.delta.totals['insns'] - self.rate * self.seconds

    def insns_by_halts(self, ops):
        """Instructions of `ops` operations that each end in one halt: the
        delta less an idle wake-up cycle for every other halt (timer ticks
        while the guest waited). Unlike insns(), this does not depend on
        how long the span took."""
        extra = self.delta.totals['halts'] - ops
        return self.delta.totals['insns'] - extra * getattr(self.rate, 'per_halt', 0.0)


# The poll loop and the interrupt: functions that run on every pass
# (poll_loop is inlined into kmain) or on every interrupt, work or not, and
# the pending() hooks idle_wait asks before a halt. How many passes and
# timer interrupts a round trip takes depends on timing (does the device
# complete the TX before the guest halts?), so their instructions vary
# from run to run. Everything else is work: the driver, the rings, the
# socket layer and the services (which run only for ready sockets).
POLL_PASS = frozenset((
    'kmain', 'poll_once', 'poll_pending', 'idle_wait', 'shell_poll', 'console_rx_ready',
    'console_getc', 'virtq_has_used', 'virtq_has_used_split', 'virtq_has_used_packed',
    'isr_common', 'trap_dispatch', 'irq_common', 'irq_dispatch', 'lapic_eoi', 'timer_tick',
    'arm_deadline', 'arm_deadline_slow', 'lapic_timer_oneshot', 'now_ns',
))
POLL_PASS_PREFIXES = ('isr_',)
POLL_PASS_SUFFIXES = ('_pending',)


def is_poll_pass(name):
    """Whether a function belongs to the loop and the interrupt."""
    return (name in POLL_PASS or name.startswith(POLL_PASS_PREFIXES)
            or name.endswith(POLL_PASS_SUFFIXES))


# newlib's allocator: its path per packet depends on the heap's layout, which
# depends on how allocations and frees interleaved (timing again); a run
# settles in one of a few modes (e.g. 162 or 316 instructions per round trip
# in _malloc_r).
HEAP = frozenset((
    '_malloc_r', '_free_r', 'malloc', 'free', '_memalign_r', 'memalign',
    '__malloc_lock', '__malloc_unlock', '_sbrk_r', '_sbrk', '_malloc_trim_r',
))


def split_insns(counters, symbols):
    """(work, poll passes, heap) instructions of a span (needs the
    profile): the work is what repeats from run to run."""
    work = passes = heap = 0
    for name, n in cost.by_function(counters.profile, symbols).items():
        if is_poll_pass(name):
            passes += n
        elif name in HEAP:
            heap += n
        else:
            work += n
    return work, passes, heap


def spread(values):
    """(max - min) / mean in %, 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    mean = statistics.mean(values)
    return 100.0 * (max(values) - min(values)) / mean if mean else 0.0


def cell_cost(span, ops, irqs=None):
    """Per-operation cost of one measured cell: a dict with insns (idle
    taken off where it is noise), insns_raw (all the span counted) and
    insns_raw_vcpu (that, per vCPU),
    halts, mmio/pio accesses and notify writes (all zero unless io=on),
    irqs (from the guest's own counters, when given), the idle rate and
    the instructions taken off per operation.

    Idle is noise only while the guest had nothing to do: the instructions
    taken off are the idle rate per halted second times the time the guest
    spent halted within the span (the plugin's idle_ns), i.e. the tick
    wake-ups while it waited. A guest busy the whole span (pktgen against
    a full ring, a stream) loses nothing it actually did."""
    t = span.delta.totals
    rate = span.rate
    halted = min(t['idle_ns'] / 1e9, span.seconds)
    idle = getattr(rate, 'per_halted_s', float(rate)) * halted
    idle = min(idle, t['insns'])
    ops = max(ops, 1e-9)
    out = {'insns': (t['insns'] - idle) / ops, 'insns_raw': t['insns'] / ops,
           'halts': t['halts'] / ops,
           'io': (t['mmio_reads'] + t['mmio_writes'] + t['pio_reads'] + t['pio_writes']) / ops,
           'notify': t['notify_writes'] / ops, 'idle_rate': float(rate),
           'idle_per_op': idle / ops, 'halted_s': halted, 'seconds': span.seconds,
           'insns_raw_vcpu': [v['insns'] / ops for v in span.delta.vcpus]}
    if irqs is not None:
        out['irqs'] = irqs / ops
    return out


def virtio_bars(lspci):
    """(base, size) of the memory BARs of virtio functions (vendor 1af4)
    in ringside's `lspci` output: the windows whose stores count as
    notifies (with io=on; CostBlock.set_notify)."""
    bars, in_virtio = [], False
    for line in lspci.splitlines():
        dev = re.match(r'\S+ ([0-9a-f]{4}):[0-9a-f]{4} class', line)
        if dev:
            in_virtio = dev.group(1) == '1af4'
            continue
        m = re.match(r'\s+bar\d: mem (0x[0-9a-f]+) size (0x[0-9a-f]+)', line)
        if in_virtio and m:
            bars.append((int(m.group(1), 16), int(m.group(2), 16)))
    return bars


class Meter:
    """A guest's cost block for a benchmark: measure(run, ops_of) brackets
    one cell with an idle-rate window before it and a span around it.
    After it, `rate` is that cell's idle rate and `last_delta` its counters
    (with the profile, for top functions by `symbols` when given)."""

    def __init__(self, path, symbols=None, idle_window=IDLE_WINDOW, writable=False):
        self.block = cost.CostBlock(path, writable=writable)
        self.symbols = symbols
        self.idle_window = idle_window
        self.rate = IdleRate(0.0)
        self.last_delta = None

    def measure(self, run, ops_of, after_run=None):
        """(result of run(), cost dict): ops_of(result) is the operation
        count ringside-bench reported; after_run(), when given, runs inside
        the span once run() returned (the guest draining what was sent)."""
        self.rate = idle_rate(self.block, self.idle_window)
        with Span(self.block, self.rate) as span:
            res = run()
            if after_run:
                after_run()
        self.last_delta = span.delta
        return res, cell_cost(span, ops_of(res))

    def close(self):
        self.block.close()


# ---------------------------------------------------------------- host/cost-measure

ECHO, SINK, SOURCE = 1234, 1235, 1236
CMDLINE = 'irq=msix idle=halt'
KIB = 1024
IO_TIMEOUT = 120
BOOT_TIMEOUT = 300
ELF = os.path.join(REPO, 'build', 'ringside.elf')
PLUGIN = os.path.join(REPO, 'build', 'host', 'ringside-cost.so')
PROG = 'cost-measure'


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError('echo closed after %d of %d bytes' % (len(buf), n))
        buf += chunk
    return bytes(buf)


def pingpong(block, uds, size, count, warmup=50, sock=None, gap=0.0):
    """(instructions per round trip, Span) for `count` echo round trips,
    on `sock` if given (an echo connection), else on a new connection.
    gap: seconds to wait after each reply, so that the guest has gone idle
    before the next request (isolated round trips: the guest's path no
    longer depends on whether the next request beats its halt)."""
    if sock is None:
        with hybrid_connect(uds, ECHO, IO_TIMEOUT) as s:
            return pingpong(block, uds, size, count, warmup, s, gap)
    data = bytes(i % 251 for i in range(size))
    for _ in range(warmup):
        sock.sendall(data)
        if recv_exact(sock, size) != data:
            raise ConnectionError('echo of %d bytes came back different' % size)
    rate = idle_rate(block)
    with Span(block, rate) as span:
        for _ in range(count):
            sock.sendall(data)
            got = recv_exact(sock, size)
            if gap:
                time.sleep(gap)
    if got != data:
        raise ConnectionError('echo of %d bytes came back different' % size)
    return span.insns() / count, span


def stream_h2g(block, uds, total, buf=64 * KIB):
    """(instructions per KiB, Span): `total` bytes into the guest's sink,
    until the guest has gone back to idle."""
    data = bytes(i % 251 for i in range(buf))
    with hybrid_connect(uds, SINK, IO_TIMEOUT) as s:
        s.sendall(data[:4096])
        rate = idle_rate(block)
        with Span(block, rate) as span:
            sent = 0
            while sent < total:
                s.sendall(data)
                sent += len(data)
            settle(block, rate)
    return span.insns() / (sent / KIB), span


def stream_g2h(block, uds, total, buf=64 * KIB):
    """(instructions per KiB, Span): read `total` bytes from the guest's
    source. The guest may have sent up to one credit window more when the
    span ends (it stops when we stop reading): <= 256 KiB of `total`."""
    with hybrid_connect(uds, SOURCE, IO_TIMEOUT) as s:
        recv_exact(s, 4096)
        rate = idle_rate(block)
        with Span(block, rate) as span:
            got = 0
            while got < total:
                chunk = s.recv(buf)
                if not chunk:
                    raise ConnectionError('source closed after %d bytes' % got)
                got += len(chunk)
    return span.insns() / (got / KIB), span


def roundtrips(block, uds, symbols, size, count, runs, gap):
    """Rows for `runs` runs of `count` round trips on one connection."""
    rows = {'total': [], 'work': [], 'poll passes': [], 'heap': [], 'halts': []}
    spans = []
    with hybrid_connect(uds, ECHO, IO_TIMEOUT) as s:
        pingpong(block, None, size, 200, sock=s, gap=gap)
        for _ in range(runs):
            span = pingpong(block, None, size, count, 0, s, gap)[1]
            work, passes, heap = split_insns(span.delta, symbols)
            rows['total'].append(span.insns_by_halts(count) / count)
            rows['work'].append(work / count)
            rows['poll passes'].append(passes / count)
            rows['heap'].append(heap / count)
            rows['halts'].append(span.delta.totals['halts'] / count)
            spans.append(span)
    return rows, spans


class CostTable:
    """The guest instructions table: printed as it grows, kept for --json."""

    def __init__(self):
        self.rows = []
        self.table = Table([Column('guest instructions', 30, left=True),
                            Column('mean', 10, '%.1f'), Column('min', 10, '%.1f'),
                            Column('max', 10, '%.1f'), Column('spread', 8, '%.2f%%')])
        print('\n'.join(self.table.head()))

    def row(self, name, vals):
        r = {'what': name, 'mean': statistics.mean(vals), 'min': min(vals), 'max': max(vals),
             'spread_pct': spread(vals), 'runs': list(vals)}
        self.rows.append(r)
        print(self.table.format(name, r['mean'], r['min'], r['max'], r['spread_pct']))


def launch(opts, block_path, log_dir):
    """A started Launch with the vsock back end and the plugin counting
    into block_path: ringside by PVH, or the Linux guest with --linux."""
    args = ['--boot', 'elf', '--vsock', '--accel', 'tcg', '--cost', block_path + ',prof=on']
    if opts.linux:
        args += ['--kernel', LINUX_KERNEL, '--cmdline', 'console=ttyS0 quiet panic=-1',
                 '--qemu-arg=-initrd', '--qemu-arg=%s' % LINUX_INITRD]
    else:
        args += ['--cmdline', opts.cmdline]
    err = open(os.path.join(log_dir, 'qemu.stderr.log'), 'wb')
    ser = open(os.path.join(log_dir, 'serial.log'), 'wb')
    la = rr.Launch(rr.parse_args(args), 'tcg', qemu_stderr=err, log=ser)
    la.start()
    la.wait_ready(BOOT_TIMEOUT, linux=opts.linux)
    deadline = time.monotonic() + 60
    while True:     # the back end takes connections once it has the rings
        try:
            hybrid_connect(la.opts.vsock_uds, ECHO, IO_TIMEOUT).close()
            return la
        except OSError:
            if time.monotonic() > deadline:
                la.stop()
                raise
            time.sleep(0.2)


def read_kallsyms(console, path):
    """The Linux guest's /proc/kallsyms (kernel and modules) into path:
    Debian's /boot/System.map is a stub. Returns the symbols."""
    console.send('kallsyms\n')
    m = console.wait_for(r'kallsyms-begin\r?\n((?:.|\n)*?)kallsyms-end\r?\n', 600,
                         what='kallsyms')
    with open(path, 'w') as f:
        f.write(m.group(1).replace('\r', ''))
    return cost.system_map_symbols(path)


def measure_linux(opts, la, block, tmp):
    symbols = read_kallsyms(la.console, os.path.join(tmp, 'kallsyms'))
    uds = la.opts.vsock_uds
    print('Linux guest; %d runs; round trips: %d per run, %g s apart; symbols: %s'
          % (opts.runs, opts.count, opts.gap, os.path.join(tmp, 'kallsyms')))
    table = CostTable()
    table.row('idle, per second', [idle_rate(block, 2.0) for _ in range(opts.runs)])
    last = None
    for size in (64, 4096):
        vals = []
        with hybrid_connect(uds, ECHO, IO_TIMEOUT) as s:
            pingpong(block, None, size, 200, sock=s, gap=opts.gap)
            for _ in range(opts.runs):
                v, span = pingpong(block, None, size, opts.count, 0, s, opts.gap)
                vals.append(v)
                last = last or span
        table.row('%d B round trip, total' % size, vals)
    total = opts.mib << 20
    table.row('h2g stream 64 KiB, per KiB',
              [stream_h2g(block, uds, total)[0] for _ in range(opts.runs)])
    table.row('g2h stream 64 KiB, per KiB',
              [stream_g2h(block, uds, total)[0] for _ in range(opts.runs)])
    print('\ntop functions of a 64 B round trip (first run; idle included):')
    for line in cost.report(last.delta, symbols, opts.count, opts.top, 'rt')[10:]:
        print(line)
    return table.rows


def measure_ringside(opts, la, block, tmp):
    symbols = cost.elf_symbols(ELF)
    uds = la.opts.vsock_uds
    print('guest: %s; %d runs; round trips: %d per run, %g s apart, one connection'
          % (opts.cmdline, opts.runs, opts.count, opts.gap))
    table = CostTable()
    rates = [idle_rate(block, 2.0) for _ in range(opts.runs)]
    table.row('idle, per second', rates)
    table.row('idle, per wake-up', [r.per_halt for r in rates])
    spans64 = None
    for size in (64, 4096):
        rows, spans = roundtrips(block, uds, symbols, size, opts.count, opts.runs, opts.gap)
        spans64 = spans64 or spans
        for key, vals in rows.items():
            table.row('%d B round trip, %s' % (size, key), vals)
    total = opts.mib << 20
    streams = {}
    for name, fn in (('h2g', stream_h2g), ('g2h', stream_g2h)):
        runs = [fn(block, uds, total) for _ in range(opts.runs)]
        table.row('%s stream 64 KiB, per KiB' % name, [r[0] for r in runs])
        streams[name] = runs[-1][1]
    print('\ntop functions of a 64 B round trip (last run; idle wake-ups included):')
    for line in cost.report(spans64[-1].delta, symbols, opts.count, opts.top, 'rt')[10:]:
        print(line)
    if opts.stream_top:
        for name, span in streams.items():
            print('\ntop functions of a %s stream per 64 KiB (last run):' % name)
            for line in cost.report(span.delta, symbols, total >> 16, opts.stream_top,
                                    '64K')[10:]:
                print(line)
    return table.rows


def build_parser():
    p = Parser(prog=PROG, description='Guest instructions per operation (idle, echo round '
               'trips, streams), counted by the ringside-cost plugin under TCG.')
    p.add_argument('--runs', type=positive_int, default=3, help='runs of each workload')
    p.add_argument('--count', type=positive_int, default=2000, help='round trips per run')
    p.add_argument('--gap', type=nonneg_float, default=0.0005,
                   help='seconds after each reply (0: back to back)')
    p.add_argument('--mib', type=positive_int, default=32, help='MiB per stream run')
    p.add_argument('--cmdline', default=CMDLINE,
                   help='ringside kernel command line (default %(default)r)')
    p.add_argument('--top', type=positive_int, default=10,
                   help='functions listed for the 64 B round trip')
    p.add_argument('--stream-top', type=nonneg_int, default=0, metavar='N',
                   help='also the top N functions of each stream, per 64 KiB')
    p.add_argument('--linux', action='store_true',
                   help='measure the Linux guest instead (make linux-guest)')
    add_options(p)
    return p


def main(argv=None):
    p = build_parser()
    opts = p.parse_args(argv)
    need = [PLUGIN] + ([LINUX_KERNEL, LINUX_INITRD] if opts.linux else [ELF])
    missing = [path for path in need if not os.path.exists(path)]
    if missing:
        print('%s: %s missing (run make%s)' % (PROG, os.path.relpath(missing[0], REPO),
                                               ' linux-guest' if opts.linux else ''),
              file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix='ringside-cost-')
    path = os.path.join(tmp, 'guest.cost')
    la = launch(opts, path, tmp)
    try:
        block = cost.CostBlock(path)
        guest = 'linux' if opts.linux else 'ringside'
        rows = (measure_linux if opts.linux else measure_ringside)(opts, la, block, tmp)
        status = 0 if opts.linux or la.poweroff() == 0 else 1
        publish(PROG, opts, {'guest': guest, 'cmdline': None if opts.linux else opts.cmdline,
                             'runs': opts.runs, 'count': opts.count, 'rows': rows},
                accel='tcg')
        return status
    finally:
        la.stop()
