#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Guest instructions per operation, counted by the ringside-cost plugin.

Boots ringside with the vsock back end and the plugin, then measures with
the counters bracketed tightly around each workload:

    /usr/bin/python3 tests/qemu/cost_measure.py [--runs 3] [--cmdline ...]

What the guest does while it waits (LAPIC ticks, poll loop) is measured as
an idle rate just before each workload and subtracted for the workload's
duration, so the numbers are the work of the operations themselves.
tests/qemu/test_cost.py uses the same functions; the measuring pieces
(idle rate, spans, the work/poll/heap split) live in the package,
host/ringside/cost_measure.py, shared with the benchmark scripts.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), 'host'))

from ringside import cost  # noqa: E402
from ringside.cost_measure import (  # noqa: E402,F401 (re-exported for the tests)
    HEAP, POLL_PASS, IDLE_WINDOW, IdleRate, Span, idle_rate, settle, split_insns, spread)
from ringside_qemu import Guest  # noqa: E402
import vsockhost  # noqa: E402
from vsockhost import hybrid_connect  # noqa: E402

ECHO, SINK, SOURCE = 1234, 1235, 1236
CMDLINE = 'irq=msix idle=halt'
KIB = 1024


def boot(block_path, cmdline=CMDLINE, opts='prof=on', name='cost'):
    """A started vsock guest whose cost block is block_path."""
    cost_arg = block_path + (',' + opts if opts else '')
    g = Guest('--boot', 'elf', '--vsock', '--cmdline', cmdline,
              '--cost', cost_arg, name=name)
    g.start()
    deadline = time.monotonic() + 60
    while True:     # the back end takes connections once it has the rings
        try:
            hybrid_connect(g.vsock_uds, ECHO).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                g.stop()
                raise
            time.sleep(0.2)
    return g


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
        with hybrid_connect(uds, ECHO) as s:
            return pingpong(block, uds, size, count, warmup, s, gap)
    data = bytes(i % 251 for i in range(size))
    for _ in range(warmup):
        sock.sendall(data)
        assert recv_exact(sock, size) == data
    rate = idle_rate(block)
    with Span(block, rate) as span:
        for _ in range(count):
            sock.sendall(data)
            got = recv_exact(sock, size)
            if gap:
                time.sleep(gap)
    assert got == data
    return span.insns() / count, span


def stream_h2g(block, uds, total, buf=64 * KIB):
    """(instructions per KiB, Span): `total` bytes into the guest's sink,
    until the guest has gone back to idle."""
    data = bytes(i % 251 for i in range(buf))
    with hybrid_connect(uds, SINK) as s:
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
    with hybrid_connect(uds, SOURCE) as s:
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
    with hybrid_connect(uds, ECHO) as s:
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


def print_row(name, vals):
    print('%-30s %10.1f %10.1f %10.1f %7.2f%%' % (
        name, statistics.mean(vals), min(vals), max(vals), spread(vals)))


def read_kallsyms(q, path):
    """The Linux guest's /proc/kallsyms (kernel and modules) into path:
    Debian's /boot/System.map is a stub. Returns the symbols."""
    m = q.command('kallsyms', r'kallsyms-begin\r?\n((?:.|\n)*?)kallsyms-end\r?\n',
                  timeout=600)
    with open(path, 'w') as f:
        f.write(m.group(1).decode(errors='replace').replace('\r', ''))
    return cost.system_map_symbols(path)


def linux_measure(opts, path):
    """The Linux guest (make linux-guest) on the same QEMU, back end and
    plugin; symbols from the guest's /proc/kallsyms."""
    kernel, initrd = vsockhost.build_all()
    tmp = os.path.dirname(path)
    plugin = os.path.join(vsockhost.BUILD, 'host', 'ringside-cost.so')
    with vsockhost.Backend(tmp) as be, vsockhost.Qemu(
            be, kernel, initrd,
            extra=['-plugin', '%s,shm=%s,prof=on' % (plugin, path)]) as q:
        q.wait_ready()
        symbols = read_kallsyms(q, os.path.join(tmp, 'kallsyms'))
        block = cost.CostBlock(path)
        print('Linux guest; %d runs; round trips: %d per run, %g s apart; symbols: %s'
              % (opts.runs, opts.count, opts.gap, os.path.join(tmp, 'kallsyms')))
        print('%-30s %10s %10s %10s %8s' % ('guest instructions', 'mean', 'min', 'max', 'spread'))
        print_row('idle, per second', [idle_rate(block, 2.0) for _ in range(opts.runs)])
        last = None
        for size in (64, 4096):
            vals = []
            with hybrid_connect(be.uds, ECHO) as s:
                pingpong(block, None, size, 200, sock=s, gap=opts.gap)
                for _ in range(opts.runs):
                    v, span = pingpong(block, None, size, opts.count, 0, s, opts.gap)
                    vals.append(v)
                    last = last or span
            print_row('%d B round trip, total' % size, vals)
        total = opts.mib << 20
        print_row('h2g stream 64 KiB, per KiB',
                  [stream_h2g(block, be.uds, total)[0] for _ in range(opts.runs)])
        print_row('g2h stream 64 KiB, per KiB',
                  [stream_g2h(block, be.uds, total)[0] for _ in range(opts.runs)])
        print('\ntop functions of a 64 B round trip (first run; idle included):')
        for line in cost.report(last.delta, symbols, opts.count, opts.top, 'rt')[10:]:
            print(line)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--runs', type=int, default=3)
    p.add_argument('--count', type=int, default=2000, help='round trips per run')
    p.add_argument('--gap', type=float, default=0.0005,
                   help='seconds after each reply (0: back to back)')
    p.add_argument('--mib', type=int, default=32, help='MiB per stream run')
    p.add_argument('--cmdline', default=CMDLINE)
    p.add_argument('--top', type=int, default=10)
    p.add_argument('--stream-top', type=int, default=0,
                   help='also the top functions of each stream, per 64 KiB')
    p.add_argument('--linux', action='store_true',
                   help='measure the Linux guest instead (make linux-guest)')
    opts = p.parse_args()
    tmp = tempfile.mkdtemp(prefix='ringside-cost-')
    path = os.path.join(tmp, 'guest.cost')
    if opts.linux:
        return linux_measure(opts, path)
    g = boot(path, opts.cmdline, name='cost-measure')
    try:
        block = cost.CostBlock(path)
        symbols = cost.elf_symbols(os.path.join(HERE, '..', '..', 'build', 'ringside.elf'))
        print('guest: %s; %d runs; round trips: %d per run, %g s apart, one connection'
              % (opts.cmdline, opts.runs, opts.count, opts.gap))
        print('%-30s %10s %10s %10s %8s' % ('guest instructions', 'mean', 'min', 'max', 'spread'))
        rates = [idle_rate(block, 2.0) for _ in range(opts.runs)]
        print_row('idle, per second', rates)
        print_row('idle, per wake-up', [r.per_halt for r in rates])
        spans64 = None
        for size in (64, 4096):
            rows, spans = roundtrips(block, g.vsock_uds, symbols, size, opts.count,
                                     opts.runs, opts.gap)
            spans64 = spans64 or spans
            for key, vals in rows.items():
                print_row('%d B round trip, %s' % (size, key), vals)
        total = opts.mib << 20
        streams = {}
        for name, fn in (('h2g', stream_h2g), ('g2h', stream_g2h)):
            runs = [fn(block, g.vsock_uds, total) for _ in range(opts.runs)]
            print_row('%s stream 64 KiB, per KiB' % name, [r[0] for r in runs])
            streams[name] = runs[-1][1]
        last = spans64[-1]
        print('\ntop functions of a 64 B round trip (last run; idle wake-ups included):')
        for line in cost.report(last.delta, symbols, opts.count, opts.top, 'rt')[10:]:
            print(line)
        if opts.stream_top:
            for name, span in streams.items():
                print('\ntop functions of a %s stream per 64 KiB (last run):' % name)
                for line in cost.report(span.delta, symbols, total >> 16, opts.stream_top,
                                        '64K')[10:]:
                    print(line)
        status = g.poweroff()
        return 0 if status == 0 else 1
    finally:
        g.stop()


if __name__ == '__main__':
    sys.exit(main())
