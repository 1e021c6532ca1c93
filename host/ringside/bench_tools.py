# SPDX-License-Identifier: MIT
"""bench-vsock --tools: tools people already use, next to ringside-bench,
in the same boot and configuration.

Through the back end's TCP forwarding (--forward-tcp): Debian's sockperf
ping-pong against the guest's sockperf server (port 11111), and
ringside-bench pingpong over TCP to the echo, beside ringside-bench over
the hybrid Unix socket directly: the last two differ only by the
forwarder (a TCP hop on loopback), which is its overhead.
"""

import os
import re
import shutil
import socket
import subprocess

from .benchlib import run_bench

GUEST_ECHO, GUEST_SOCKPERF = 1234, 11111
PCT_RE = re.compile(r'percentile (\d+\.\d+) = +([\d.]+)')


def free_port():
    s = socket.socket()
    try:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]
    finally:
        s.close()


def forward_args():
    """Launcher arguments for the forwards --tools uses, and their ports."""
    ports = {GUEST_ECHO: free_port(), GUEST_SOCKPERF: free_port()}
    args = []
    for guest, host in ports.items():
        args += ['--forward', '%d=%d' % (host, guest)]
    return args, ports


def sockperf_cell(port, size, seconds, prog):
    """sockperf ping-pong over TCP; percentiles in ns (its output is usec)."""
    proc = subprocess.run(['sockperf', 'ping-pong', '--tcp', '-i', '127.0.0.1', '-p', str(port),
                           '-m', str(size), '-t', str(max(1, int(seconds)))],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=seconds * 10 + 120, env=dict(os.environ, TERM='dumb'))
    pct = {float(p): float(v) * 1000 for p, v in PCT_RE.findall(proc.stdout)}
    m = re.search(r'ReceivedMessages=(\d+)', proc.stdout)
    if proc.returncode != 0 or not m or 50.0 not in pct:
        raise SystemExit('%s: sockperf failed (%d): %s'
                         % (prog, proc.returncode, proc.stdout[-500:]))
    return {'tool': 'sockperf tcp fwd', 'size': size, 'count': int(m.group(1)),
            'p50': pct[50.0], 'p99': pct.get(99.0, 0), 'p99_9': pct.get(99.9, 0)}


def bench_cell(target, name, size, opts, prog):
    r = run_bench(['pingpong'] + target + ['--size', str(size), '--count', str(opts.count),
                                           '--warmup', str(opts.warmup)], 600, prog)['results'][0]
    return {'tool': name, 'size': size, 'count': r['count'], 'p50': r['p50'], 'p99': r['p99'],
            'p99_9': r['p99_9']}


def run_tools(opts, uds, ports, prog):
    """Per size: sockperf (forwarded), ringside-bench forwarded, ringside-bench
    hybrid; adjacent in time so the machine's load hits all three alike."""
    rows = []
    have_sockperf = shutil.which('sockperf') is not None
    tcp = ['--tcp', '127.0.0.1:%d' % ports[GUEST_ECHO]]
    for size in opts.sizes:
        if have_sockperf and size >= 14:  # sockperf's header is 14 bytes
            rows.append(sockperf_cell(ports[GUEST_SOCKPERF], size, opts.time, prog))
        rows.append(bench_cell(tcp, 'ringside-bench tcp fwd', size, opts, prog))
        rows.append(bench_cell(['--uds', uds], 'ringside-bench hybrid', size, opts, prog))
    if not have_sockperf:
        print('%s: sockperf not installed (make deps): its rows are missing' % prog)
    return rows


def print_tools(rows):
    print('\ntools next to ringside-bench (same boot), ping-pong round trip, ns')
    print('%-24s %7s %8s %10s %10s %10s' % ('tool', 'size', 'rounds', '50th', '99th', '99.9th'))
    for r in rows:
        print('%-24s %7d %8d %10.0f %10.0f %10.0f' % (r['tool'], r['size'], r['count'],
                                                      r['p50'], r['p99'], r['p99_9']))
    print('\nforwarder overhead (ringside-bench tcp fwd / hybrid)')
    by = {(r['tool'], r['size']): r for r in rows}
    for size in sorted({r['size'] for r in rows}):
        fwd = by.get(('ringside-bench tcp fwd', size))
        hyb = by.get(('ringside-bench hybrid', size))
        if fwd and hyb and hyb['p50'] > 0:
            print('  %6d B: p50 %+.0f ns (x%.2f), p99 x%.2f' % (
                    size, fwd['p50'] - hyb['p50'], fwd['p50'] / hyb['p50'],
                    fwd['p99'] / hyb['p99'] if hyb['p99'] else 0))
