# SPDX-License-Identifier: MIT
"""bench --vsock-perf: the kernel's own vsock_perf
(tools/testing/vsock/, `make vsock-perf`) as an independent client, beside
ringside-bench, on the kernel's vhost-vsock (vsock_perf speaks AF_VSOCK
only: a KVM host, or host/nested).

Per guest (ringside in bench's boot; with `--vsock-perf
ringside,linux` the Linux baseline guest in a boot of its own after it),
per round and buffer length B, adjacent in time:

  h2g  vsock_perf --sender CID --port 1235 --bytes N --buf-size B against
       the guest's sink, then ringside-bench stream --dir h2g -l B;
  g2h  vsock_perf listening (--buf-size B: its read() size) while the
       guest connects out and writes (ringside: `vsock stream 2 PORT B
       SECONDS`, --time; Linux: `send PORT N B`), then ringside-bench
       stream --dir g2h -l B from the guest's source.

What each counts (vsock_perf.c): the sender's "tx performance" is bytes
over the time spent inside send() only (not connect, not the loop, not
the drain of the last socket buffer: the peer's credit, 256 KiB on
Linux); its "total time in tx loop" gives the loop's rate, printed too.
The receiver's "rx performance" is bytes over accept-to-EOF: the sender's
connect is outside, its close inside. ringside-bench counts bytes over its
--time on a connected socket. The guest's own figure (g2h) is the
sender's: ringside's bytes over its SECONDS, Linux's over connected to
closed.
"""

import os
import re
import statistics
import subprocess

from .benchlib import run_bench
from .guest_stats import StatsError, json_of
from .images import repo_path
from .process import Children
from .table import Column, Table

VSOCK_PERF = repo_path('build', 'vsock-tools', 'vsock_perf')
HOST_CID = 2
GUEST_SINK = 1235
SENDER_RE = {
    'bytes': re.compile(r'^total bytes sent: (\d+)$', re.M),
    'gbps': re.compile(r'^tx performance: ([\d.]+) Gbits/s$', re.M),
    'loop_s': re.compile(r'^total time in tx loop: ([\d.]+) sec$', re.M),
}
RECEIVER_RE = {
    'bytes': re.compile(r'^total bytes received: (\d+)$', re.M),
    'gbps': re.compile(r'^rx performance: ([\d.]+) Gbits/s$', re.M),
    'wakeups': re.compile(r'^POLLIN wakeups: (\d+)$', re.M),
}
CONNECT_TRIES = 50   # the guest's connects until vsock_perf listens


def available():
    """None, or why --vsock-perf cannot run."""
    if not os.access(VSOCK_PERF, os.X_OK):
        return '%s missing (make vsock-perf)' % os.path.relpath(VSOCK_PERF, repo_path())
    return None


def parse(text, regexes, what):
    out = {}
    for key, rx in regexes.items():
        m = rx.search(text)
        if not m:
            raise SystemExit('vsock_perf %s: no %r in its output: %r' % (what, key, text[-500:]))
        out[key] = float(m.group(1)) if '.' in m.group(1) else int(m.group(1))
    return out


def sender(cid, port, nbytes, buf, timeout=600):
    """vsock_perf --sender: {bytes, gbps (time in send()), loop_gbps}."""
    proc = subprocess.run([VSOCK_PERF, '--sender', str(cid), '--port', str(port), '--bytes',
                           str(nbytes), '--buf-size', str(buf)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise SystemExit('vsock_perf --sender %d --port %d failed (%d): %s'
                         % (cid, port, proc.returncode, (proc.stderr + proc.stdout)[-500:]))
    r = parse(proc.stdout, SENDER_RE, 'sender')
    r['loop_gbps'] = r['bytes'] * 8 / r['loop_s'] / 1e9 if r['loop_s'] else 0.0
    return r


def receiver_port():
    """A host port for vsock_perf to listen on, apart per process."""
    return 40000 + os.getpid() % 20000


class Receiver:
    """vsock_perf listening on `port` for one connection, stopped by PID."""

    def __init__(self, port, buf):
        self.port = port
        self.children = Children()
        self.proc = self.children.spawn(
                'vsock_perf', [VSOCK_PERF, '--port', str(port), '--buf-size', str(buf)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                stdin=subprocess.DEVNULL)

    def exited(self):
        return self.proc.poll() is not None

    def result(self, timeout=120):
        """Its figures once the guest's connection ended: {bytes, gbps, wakeups}."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.close()
            raise SystemExit('vsock_perf receiver on port %d: no EOF within %d s'
                             % (self.port, timeout))
        if self.proc.returncode != 0:
            raise SystemExit('vsock_perf receiver on port %d failed (%d): %s'
                             % (self.port, self.proc.returncode, (err + out)[-500:]))
        return parse(out, RECEIVER_RE, 'receiver')

    def close(self):
        self.children.stop_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def ringside_send(console, port, buf, seconds, gone):
    """The ringside guest connects to the host's `port` and writes B-byte
    buffers for `seconds` (`vsock stream`); retried while nothing listens
    there yet (vsock_perf's listen() has no output to wait for) and the
    receiver runs (`gone()` false)."""
    for _ in range(CONNECT_TRIES):
        if gone():
            break
        try:
            r = json_of(console, 'vsock stream %d %d %d %d' % (HOST_CID, port, buf, seconds),
                        seconds + 120)
        except StatsError as e:
            if 'connect to' not in str(e):
                raise SystemExit('ringside: vsock stream to port %d: %s' % (port, e))
            continue
        return {'bytes': r['bytes'], 'gbps': r['bytes'] * 8 / r['ns'] if r['ns'] else 0.0}
    raise SystemExit('ringside: no listener on host port %d (vsock_perf %s)'
                     % (port, 'exited' if gone() else 'still not listening'))


def linux_send(console, port, nbytes, buf, gone):
    """The Linux guest's `send PORT BYTES SIZE`, retried like ringside_send."""
    for _ in range(CONNECT_TRIES):
        if gone():
            break
        console.send('send %d %d %d\n' % (port, nbytes, buf))
        m = console.wait_for(r'send %d (ok (\d+) ns (\d+)|error ([^\r\n]*))\r?\n' % port, 600,
                             what='the Linux guest\'s send')
        if m.group(2):
            got, ns = int(m.group(2)), int(m.group(3))
            return {'bytes': got, 'gbps': got * 8 / ns if ns else 0.0}
        if 'reset' not in m.group(4) and 'refused' not in m.group(4):
            raise SystemExit('linux guest: send to port %d: %s' % (port, m.group(4)))
    raise SystemExit('linux guest: no listener on host port %d (vsock_perf %s)'
                     % (port, 'exited' if gone() else 'still not listening'))


def bench_stream(target, direction, buf, seconds, prog):
    return run_bench(['stream'] + target + ['--dir', direction, '-l', str(buf), '-P', '1',
                                            '--time', str(seconds)],
                     seconds * 10 + 120, prog)['gbps']


def run_guest(guest, target, send, opts, prog):
    """Every round, direction and length on one guest: rows, one per
    measurement. `send(port, buf, gone)` has the guest connect out and write."""
    cid = int(target[1])
    rows = []
    for rnd in range(opts.rounds):
        for d in opts.dirs:
            for buf in opts.length:
                row = {'guest': guest, 'dir': d, 'len': buf, 'round': rnd}
                if d == 'h2g':
                    r = sender(cid, GUEST_SINK, opts.vsock_perf_bytes, buf)
                    row.update(vp_gbps=r['gbps'], vp_loop_gbps=r['loop_gbps'],
                               vp_bytes=r['bytes'])
                else:
                    with Receiver(receiver_port(), buf) as rx:
                        g = send(rx.port, buf, rx.exited)
                        r = rx.result()
                    row.update(vp_gbps=r['gbps'], vp_bytes=r['bytes'],
                               vp_wakeups=r['wakeups'], guest_gbps=g['gbps'],
                               guest_bytes=g['bytes'])
                row['bench_gbps'] = bench_stream(target, d, buf, opts.time, prog)
                rows.append(row)
    return rows


def ratio(a, b):
    return a / b if b else float('nan')


def print_rows(rows, nbytes, seconds):
    if not rows:
        return
    t = Table([Column('guest', 9, left=True), Column('dir', 4), Column('len', 7, '%d'),
               Column('rounds', 6, '%d'), Column('vsock_perf', 10, '%.3f'),
               Column('loop', 9, '%.3f'), Column('guest', 9, '%.3f'),
               Column('ringside-bench', 14, '%.3f'), Column('perf/bench', 11, '%.2f')],
              title='\nvsock_perf (the kernel\'s tools/testing/vsock) next to ringside-bench, '
              'Gb/s (G = 10^9), -P 1;\nh2g: vsock_perf --sender --bytes %d to the sink (send: '
              'time in send(), loop: its tx loop);\ng2h: vsock_perf receiving what the guest '
              'sends (accept to EOF), guest: the sender\'s own figure;\nringside-bench stream '
              '--time %g\nmedians over rounds; perf/bench: the median of each round\'s ratio '
              '(the two ran back to back)' % (nbytes, seconds))
    cells = []
    for r in rows:
        key = (r['guest'], r['dir'], r['len'])
        if key not in cells:
            cells.append(key)
    for key in cells:
        rs = [r for r in rows if (r['guest'], r['dir'], r['len']) == key]
        vp = statistics.median(r['vp_gbps'] for r in rs)
        bench = statistics.median(r['bench_gbps'] for r in rs)
        loop = statistics.median(r.get('vp_loop_gbps', 0) for r in rs)
        own = statistics.median(r.get('guest_gbps', 0) for r in rs)
        t.row(key[0], key[1], key[2], len(rs), vp, loop if key[1] == 'h2g' else None,
              own if key[1] == 'g2h' else None, bench,
              statistics.median(ratio(r['vp_gbps'], r['bench_gbps']) for r in rs))
        each = '  '.join('%.3f/%.3f' % (r['vp_gbps'], r['bench_gbps']) for r in rs)
        t.note('  each round: %s' % each, under=5)
        short = [r for r in rs if r['dir'] == 'g2h' and r['vp_bytes'] != r['guest_bytes']]
        for r in short:
            t.note('  round %d: vsock_perf read %d of the %d bytes the guest sent'
                   % (r['round'] + 1, r['vp_bytes'], r['guest_bytes']), under=5)
    t.print()
