# SPDX-License-Identifier: MIT
"""bench --tools: tools people already use, next to ringside-bench,
in the same boot and configuration.

Through the back end's TCP forwarding (--forward-tcp): Debian's sockperf
ping-pong against the guest's sockperf server (port 11111; --full-rtt, so
it reports round trips as ringside-bench does, not half of them), and
ringside-bench pingpong over TCP to the echo, beside ringside-bench over
the hybrid Unix socket directly: the last two differ only by the
forwarder (a TCP hop on loopback), which is its overhead. The same for
throughput: Debian's iperf3 against the guest's iperf3 server (5201),
forward, -R and --bidir, beside ringside-bench stream forwarded and
direct (for --bidir, its h2g and g2h runs at once).

On the kernel's vhost-vsock there is no back end to forward: socat
(`TCP-LISTEN` to `VSOCK-CONNECT`, Debian's socat) forwards instead, and
"direct" is ringside-bench on AF_VSOCK.
"""

import json
import os
import re
import shutil
import socket
import subprocess

from .benchlib import BENCH, run_bench
from .errors import LaunchError
from .process import Children
from .table import Column, Table
from .wait import until

GUEST_ECHO, GUEST_SINK, GUEST_SOURCE = 1234, 1235, 1236
GUEST_IPERF3, GUEST_SOCKPERF = 5201, 11111
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
    ports = {g: free_port() for g in (GUEST_ECHO, GUEST_SINK, GUEST_SOURCE, GUEST_IPERF3,
                                      GUEST_SOCKPERF)}
    args = []
    for guest, host in ports.items():
        args += ['--forward', '%d=%d' % (host, guest)]
    return args, ports


class SocatForwards:
    """forward_args()'s forwards for a guest on the kernel's vhost-vsock:
    one socat per port, TCP on 127.0.0.1 to AF_VSOCK CID:port, started
    listening and stopped (with the connections it forked) by Children."""

    def __init__(self, cid, ports, prog):
        self.children = Children()
        try:
            for guest, host in ports.items():
                # none of our pipes: a caller reading our output to its end
                # must not wait on a forward left behind
                proc = self.children.spawn(
                    'socat', ['socat', 'TCP-LISTEN:%d,bind=127.0.0.1,reuseaddr,fork' % host,
                              'VSOCK-CONNECT:%d:%d' % (cid, guest)], stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                self._wait_listening(proc, host, prog)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _wait_listening(proc, port, prog, timeout=20.0):
        def listening():
            with socket.socket() as s:
                return s.connect_ex(('127.0.0.1', port)) == 0
        try:
            until(listening, timeout, 'socat on 127.0.0.1:%d' % port, interval=0.05,
                  fail=lambda: proc.poll() is not None and 'socat exited')
        except LaunchError:
            raise SystemExit('%s: socat did not listen on 127.0.0.1:%d' % (prog, port))

    def close(self):
        self.children.stop_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def direct_name(target):
    return 'ringside-bench ' + ('hybrid' if target[0] == '--uds' else 'AF_VSOCK')


def run_tool(args, seconds, prog, **kwargs):
    """A tool's run of `seconds`, its output captured; one that does not
    end in ten times that and two minutes more is killed, and we say so."""
    kwargs.setdefault('stderr', subprocess.PIPE)
    try:
        return subprocess.run(args, stdout=subprocess.PIPE, text=True,
                              timeout=seconds * 10 + 120, **kwargs)
    except subprocess.TimeoutExpired as e:
        raise SystemExit('%s: %s did not end in %.0f s' % (prog, ' '.join(args), e.timeout))


def sockperf_cell(port, size, seconds, prog):
    """sockperf ping-pong over TCP; percentiles in ns (its output is usec).
    --full-rtt: without it sockperf reports half of each round trip as the
    message's latency, which made its p50 look half of ringside-bench's."""
    proc = run_tool(['sockperf', 'ping-pong', '--tcp', '-i', '127.0.0.1', '-p', str(port),
                     '-m', str(size), '-t', str(max(1, int(seconds))), '--full-rtt'],
                    seconds, prog, stderr=subprocess.STDOUT, env=dict(os.environ, TERM='dumb'))
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


def run_tools(opts, target, ports, prog):
    """Per size: sockperf (forwarded), ringside-bench forwarded, ringside-bench
    direct (`target`: hybrid or AF_VSOCK); adjacent in time so the machine's
    load hits all three alike."""
    rows = []
    have_sockperf = shutil.which('sockperf') is not None
    tcp = ['--tcp', '127.0.0.1:%d' % ports[GUEST_ECHO]]
    for size in opts.sizes:
        if have_sockperf and size >= 14:  # sockperf's header is 14 bytes
            rows.append(sockperf_cell(ports[GUEST_SOCKPERF], size, opts.time, prog))
        rows.append(bench_cell(tcp, 'ringside-bench tcp fwd', size, opts, prog))
        rows.append(bench_cell(target, direct_name(target), size, opts, prog))
    if not have_sockperf:
        print('%s: sockperf not installed (make deps): its rows are missing' % prog)
    return rows


def print_tools(rows):
    t = Table([Column('tool', 24, left=True), Column('size', 7, '%d'),
               Column('rounds', 8, '%d'), Column('50th', 10, '%.0f'),
               Column('99th', 10, '%.0f'), Column('99.9th', 10, '%.0f')],
              title='\ntools next to ringside-bench (same boot), ping-pong round trip, ns')
    for r in rows:
        t.row(r['tool'], r['size'], r['count'], r['p50'], r['p99'], r['p99_9'])
    t.print()
    direct = rows[-1]['tool']
    print('\nforwarder overhead (ringside-bench tcp fwd / %s)' % direct.split()[-1])
    by = {(r['tool'], r['size']): r for r in rows}
    for size in sorted({r['size'] for r in rows}):
        fwd = by.get(('ringside-bench tcp fwd', size))
        hyb = by.get((direct, size))
        if fwd and hyb and hyb['p50'] > 0:
            print('  %6d B: p50 %+.0f ns (x%.2f), p99 x%.2f' % (
                    size, fwd['p50'] - hyb['p50'], fwd['p50'] / hyb['p50'],
                    fwd['p99'] / hyb['p99'] if hyb['p99'] else 0))


# ---- throughput: iperf3 next to ringside-bench stream

def iperf3_cell(port, mode, streams, length, seconds, prog):
    """Debian's iperf3 through the forward; Gb/s each way as the receiving
    side counted it (the guest drains to the client's count)."""
    args = ['iperf3', '-c', '127.0.0.1', '-p', str(port), '-J', '-t', str(max(1, int(seconds))),
            '-P', str(streams), '-l', str(length)]
    args += {'h2g': [], 'g2h': ['-R'], 'bidir': ['--bidir']}[mode]
    proc = run_tool(args, seconds, prog)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = {}
    if proc.returncode != 0 or 'end' not in report or 'error' in report:
        raise SystemExit('%s: %s failed (%d): %s' % (prog, ' '.join(args), proc.returncode,
                                                     report.get('error', proc.stderr[-300:])))
    end = report['end']
    gbps = end['sum_received']['bits_per_second'] / 1e9
    if mode == 'bidir':
        return gbps, end['sum_received_bidir_reverse']['bits_per_second'] / 1e9
    return (gbps, 0.0) if mode == 'h2g' else (0.0, gbps)


def bench_streams(targets, streams, length, seconds, prog):
    """ringside-bench stream, one run per (direction, target) at once."""
    children, procs = Children(), []
    gbps = {'h2g': 0.0, 'g2h': 0.0}
    failed = None
    try:
        for d, target in targets:
            args = [BENCH, 'stream'] + target + ['--dir', d, '-l', str(length), '-P',
                                                 str(streams), '--time', str(seconds), '--json']
            procs.append((d, children.spawn('ringside-bench', args, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True)))
        for d, proc in procs:
            try:
                out, err = proc.communicate(timeout=seconds * 10 + 120)
            except subprocess.TimeoutExpired:
                children.stop(proc)
                out, err = proc.communicate()
            if proc.returncode != 0:
                failed = failed or 'ringside-bench stream --dir %s failed (%d): %s' % (
                    d, proc.returncode, err.strip())
            else:
                gbps[d] = json.loads(out)['gbps']
    finally:
        children.stop_all()
    if failed:
        raise SystemExit('%s: %s' % (prog, failed))
    return gbps['h2g'], gbps['g2h']


def run_tools_stream(opts, target, ports, prog):
    """Per direction (each of --dirs, then --bidir) and stream count: iperf3
    forwarded, ringside-bench forwarded, ringside-bench direct, adjacent in
    time; buffer length the largest of --lengths."""
    rows = []
    length = max(opts.length)
    have_iperf3 = shutil.which('iperf3') is not None
    tcp = {d: ['--tcp', '127.0.0.1:%d' % ports[g]]
           for d, g in (('h2g', GUEST_SINK), ('g2h', GUEST_SOURCE))}
    for mode in opts.dirs + ['bidir']:
        dirs = ['h2g', 'g2h'] if mode == 'bidir' else [mode]
        for streams in opts.parallel:
            cells = []
            if have_iperf3:
                cells.append(('iperf3 tcp fwd', lambda: iperf3_cell(
                    ports[GUEST_IPERF3], mode, streams, length, opts.time, prog)))
            cells.append(('ringside-bench tcp fwd', lambda: bench_streams(
                [(d, tcp[d]) for d in dirs], streams, length, opts.time, prog)))
            cells.append((direct_name(target), lambda: bench_streams(
                [(d, target) for d in dirs], streams, length, opts.time, prog)))
            for tool, run in cells:
                h2g, g2h = run()
                rows.append({'tool': tool, 'mode': mode, 'parallel': streams, 'len': length,
                             'h2g': h2g, 'g2h': g2h})
    if not have_iperf3:
        print('%s: iperf3 not installed (make deps): its rows are missing' % prog)
    return rows


def print_tools_stream(rows, seconds):
    if not rows:
        return
    t = Table([Column('tool', 24, left=True), Column('dir', 6), Column('P', 3, '%d'),
               Column('h2g', 8, '%.3f'), Column('g2h', 8, '%.3f'), Column('total', 8, '%.3f')],
              title='\ntools next to ringside-bench (same boot), stream, Gb/s (G = 10^9), '
                    '-l %d, %.0f s' % (rows[0]['len'], seconds))
    for r in rows:
        t.row(r['tool'], r['mode'], r['parallel'], r['h2g'] if r['mode'] != 'g2h' else None,
              r['g2h'] if r['mode'] != 'h2g' else None, r['h2g'] + r['g2h'])
    t.print()
    direct = rows[-1]['tool']
    print('\nforwarder overhead, stream (total Gb/s ratios)')
    by = {(r['tool'], r['mode'], r['parallel']): r['h2g'] + r['g2h'] for r in rows}
    for mode, par in sorted({(r['mode'], r['parallel']) for r in rows}):
        fwd = by.get(('ringside-bench tcp fwd', mode, par))
        hyb = by.get((direct, mode, par))
        ip = by.get(('iperf3 tcp fwd', mode, par))
        line = '  %-5s -P %d:' % (mode, par)
        if fwd and hyb:
            line += ' ringside-bench tcp fwd / %s x%.2f' % (direct.split()[-1], fwd / hyb)
        if ip and fwd:
            line += ', iperf3 / ringside-bench tcp fwd x%.2f' % (ip / fwd)
        print(line)
