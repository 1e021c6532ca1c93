# SPDX-License-Identifier: MIT
"""Measuring guest cost around a workload: the idle rate, spans of counters
with the idle rate taken off, waiting for the guest to settle, the split of
a span into work, poll passes and heap, per-operation cost cells, and the
standard workloads (echo round trips, a stream each way) bracketed by them.

The commands (bench, vs-linux, net, seeds, cost) and the tests
(tests/qemu/test_cost.py) share these, so a benchmark's cost column is
what the tests check.
"""

import statistics
import time

from . import cost
from .benchlib import hybrid_connect

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


# ------------------------------------------------ the standard workloads

ECHO, SINK, SOURCE = 1234, 1235, 1236
CMDLINE = 'irq=msix idle=halt'
KIB = 1024
IO_TIMEOUT = 120


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
