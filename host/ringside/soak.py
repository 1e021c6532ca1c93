# SPDX-License-Identifier: MIT
"""soak: many concurrent vsock connections for a long time, every byte
checked, memory flat from start to end.

Boots the appliance with our vhost-user back end (the launcher's --vsock,
plus the back end's --uds-seqpacket) and runs --conns workers for
--duration seconds. Each worker opens one connection after another
(churn), each to a service picked at random, with random sizes, all from
--seed:

  echo       stream to port 1234: random bytes out, the same bytes back
             (sha256 of what was sent against sha256 of what came back)
  sink       stream to port 1235: random bytes out, then SHUT_WR and wait
             for the guest's close; the guest's `stats services` sink byte
             count must grow by exactly what all sink connections sent
  source     stream from port 1236: read N bytes and hang up mid-stream;
             the guest sends byte i of a connection as i % 251
             (app/services.h), so every byte is compared with that
  seqpacket  SOCK_SEQPACKET to port 1234: messages of random sizes, each
             must come back whole, as one message of the same bytes

The run has a warm-up phase first (--warmup), the same mix. Flat means:
  guest: once only its listeners are left and its packet buffers alive
    are back (`vsock`, asked until so), and the packet pool's free lists
    are given back to the heap (`vsock trim`: their size follows the
    load's peak), the heap's bytes in use (`mem`) equal those before the
    warm-up, exactly; so do the packet buffers alive;
  back end: once it holds no connection (no connected hybrid socket in
    its fds, and its SIGUSR1 counters: every connection made is freed),
    its open fds and mappings equal those before the warm-up, and its
    private memory (RssAnon) is within --rss-tolerance of that after the
    warm-up. It runs with BACKEND_TUNABLES (below), so its 256 KiB
    connection buffers go back to the kernel on free; the small blocks
    stay in glibc's heap at the warm-up's high-water.

Exits 1 on any mismatch, connection error or growth.
"""

import argparse
import hashlib
import os
import random
import re
import select
import shutil
import signal
import socket
import tempfile
import threading
import time

import ringside as rr

from .benchlib import hybrid_connect, wait_vsock_up
from .cli import Parser, nonneg_float, nonneg_int, positive_float, positive_int, size
from .guest_stats import cpus_online, guest_stats
from .images import REPO
from .results import add_options, publish
from .table import Column, Table

PROG = 'soak'
PORT_ECHO, PORT_SINK, PORT_SOURCE = 1234, 1235, 1236
KINDS = ('echo', 'sink', 'source', 'seqpacket')
IO_TIMEOUT = 120.0      # one socket operation, TCG on busy cores
SETTLE_TIMEOUT = 120.0  # the guest and back end closing everything
SEQ_MAX = 65536         # a Unix SOCK_SEQPACKET message must fit the socket buffer
PATTERN = bytes(range(251))
COUNTER_RE = re.compile(r'^  (\w+) +(\d+)$', re.M)
COUNTERS_END = re.compile(r'^  host_io_errors +\d+\n', re.M)

HEAP_RE = re.compile(r'heap: .* in use \((\d+) B\)')
CHUNKS_RE = re.compile(r'heap chunks in use: (\d+), (\d+) B')
CHUNK_SIZE_RE = re.compile(r'^ +(\d+) B x (\d+)$', re.M)
TRIM_RE = re.compile(r'vsock: (\d+) pooled packet buffers freed')
SOCKET_RE = re.compile(r'^(?:stream|seqpkt)\s+(\S+)', re.M)
VSOCK_RE = re.compile(r'(\d+) socket\(s\), (\d+) packet buffers \((\d+) KiB\) alive')


class SoakError(Exception):
    """A connection that failed or came back wrong."""


# ------------------------------------------------------------- host side

def pattern(off, n):
    """The source service's bytes off..off+n: byte i is i % 251."""
    start = off % 251
    reps = (start + n) // 251 + 1
    return (PATTERN * reps)[start:start + n]


def recv_some(s, n):
    data = s.recv(n)
    if not data:
        raise SoakError('EOF from the guest')
    return data


def echo_stream(uds, data):
    """Write `data` while reading the echo; True when sha256s match."""
    s = hybrid_connect(uds, PORT_ECHO, IO_TIMEOUT)
    sent, got = 0, hashlib.sha256()
    left = len(data)
    try:
        s.setblocking(False)
        while left:
            w = [s] if sent < len(data) else []
            r, w, _ = select.select([s], w, [], IO_TIMEOUT)
            if not r and not w:
                raise SoakError('echo stalled: %d of %d bytes back'
                                % (len(data) - left, len(data)))
            if w:
                try:
                    sent += s.send(data[sent:sent + 65536])
                except BlockingIOError:
                    pass
            if r:
                try:
                    chunk = recv_some(s, min(left, 65536))
                except BlockingIOError:
                    continue
                got.update(chunk)
                left -= len(chunk)
    finally:
        s.close()
    return got.digest() == hashlib.sha256(data).digest()


def sink(uds, data):
    """Send `data`, half-close, wait for the guest's close (it has read all)."""
    s = hybrid_connect(uds, PORT_SINK, IO_TIMEOUT)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        if s.recv(1):
            raise SoakError('the sink sent data')
    finally:
        s.close()
    return True


def source(uds, n):
    """Read n bytes of the source's pattern and hang up; True if they match."""
    s = hybrid_connect(uds, PORT_SOURCE, IO_TIMEOUT)
    got = hashlib.sha256()
    left = n
    try:
        while left:
            chunk = recv_some(s, min(left, 65536))
            got.update(chunk)
            left -= len(chunk)
    finally:
        s.close()
    return got.digest() == hashlib.sha256(pattern(0, n)).digest()


def seqpacket(uds_seq, messages):
    """Each message must come back whole: one recv, the same bytes."""
    s = hybrid_connect(uds_seq, PORT_ECHO, IO_TIMEOUT, socket.SOCK_SEQPACKET)
    ok = True
    try:
        for msg in messages:
            s.sendall(msg)
            back = s.recv(SEQ_MAX + 1)
            if not back:
                raise SoakError('EOF from the guest')
            ok &= back == msg
    finally:
        s.close()
    return ok


class Backend:
    """The back end's memory and descriptors, from /proc."""

    def __init__(self, proc, log_path):
        self.proc, self.pid = proc, proc.pid
        self.log_path = log_path  # where its stderr goes

    def counters(self, timeout=30.0):
        """Its counters: SIGUSR1 makes it print them to stderr (the log)."""
        mark = os.path.getsize(self.log_path)
        os.kill(self.pid, signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while True:
            with open(self.log_path) as f:
                f.seek(mark)
                text = f.read()
            if COUNTERS_END.search(text):
                return {k: int(v) for k, v in COUNTER_RE.findall(text)}
            if time.monotonic() > deadline or not self.alive():
                raise SystemExit('%s: the back end printed no counters on SIGUSR1' % PROG)
            time.sleep(0.05)

    def live_conns(self):
        """Connections it still holds, host side closed or not (a reset one
        lives until its RST has gone to the guest, its buffer with it)."""
        c = self.counters()
        return c['conns_host'] + c['conns_guest'] - c['conns_closed']

    def alive(self):
        return self.proc.poll() is None

    def sample(self):
        status = {}
        with open('/proc/%d/status' % self.pid) as f:
            for line in f:
                key, _, value = line.partition(':')
                status[key] = value.split()[0] if value.split() else ''
        with open('/proc/%d/maps' % self.pid) as f:
            maps = sum(1 for _ in f)
        return {'rss_kib': int(status['VmRSS']), 'anon_kib': int(status['RssAnon']),
                'fds': len(os.listdir('/proc/%d/fd' % self.pid)), 'maps': maps}

    def host_conns(self, paths):
        """Connected Unix sockets the back end holds on `paths` (its hybrid
        sockets): the host connections it has not closed yet."""
        bound = {}
        with open('/proc/net/unix') as f:
            next(f)
            for line in f:
                cols = line.split()
                # Num RefCount Protocol Flags Type St Inode [Path]; St 03: connected
                if len(cols) == 8 and cols[5] == '03' and cols[7] in paths:
                    bound[cols[6]] = True
        n = 0
        fd_dir = '/proc/%d/fd' % self.pid
        for fd in os.listdir(fd_dir):
            try:
                link = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            n += link.startswith('socket:[') and link[8:-1] in bound
        return n

    def settled(self, paths, timeout=SETTLE_TIMEOUT):
        """A sample once the back end has closed every host connection
        (it closes after the guest's close, a few events later)."""
        deadline = time.monotonic() + timeout
        while (self.host_conns(paths) or self.live_conns()) and time.monotonic() < deadline:
            time.sleep(0.1)
        s = self.sample()
        s['host_conns'] = max(self.host_conns(paths), self.live_conns())
        return s


# The back end's glibc malloc, told to map every block of 64 KiB or more
# (the 256 KiB connection buffers) with its own mmap and unmap it on free,
# instead of raising that threshold after the first free and caching freed
# buffers in its heap. Then RssAnon follows what the back end holds, not
# the pages its busiest moment happened to touch, and a leaked buffer shows
# as a mapping too.
BACKEND_TUNABLES = 'glibc.malloc.mmap_threshold=65536'


class TunedChildren(rr.Children):
    """Children that start the vhost-user back end with BACKEND_TUNABLES."""

    def spawn(self, name, argv, **popen_kw):
        if name == 'vhost-vsock':
            popen_kw['env'] = dict(os.environ, GLIBC_TUNABLES=BACKEND_TUNABLES)
        return super().spawn(name, argv, **popen_kw)


def backend_of(launch, log_path):
    for name, proc in launch.children.procs:
        if name == 'vhost-vsock':
            return Backend(proc, log_path)
    raise SystemExit('%s: no vhost-user back end running' % PROG)


# ------------------------------------------------------------ guest side

class Guest:
    def __init__(self, console, prog=PROG):
        self.console = console
        self.prog = prog

    def command(self, cmd):
        out = self.console.command(cmd, IO_TIMEOUT)
        if out.lstrip().startswith('error:'):
            raise SystemExit('%s: guest rejected %r: %s' % (self.prog, cmd, out.strip()))
        return out

    def vsock(self):
        out = self.command('vsock')
        m = VSOCK_RE.search(out)
        if not m:
            raise SystemExit('%s: no socket summary in the guest\'s `vsock`' % self.prog)
        busy = sum(state != 'listen' for state in SOCKET_RE.findall(out))
        return {'sockets': int(m.group(1)), 'busy': busy, 'pkts': int(m.group(2))}

    def services(self):
        return {name: {'conns': s['conns'], 'accepted': s['accepted'], 'closed': s['closed'],
                       'in': s['bytes_in'], 'out': s['bytes_out']}
                for name, s in guest_stats(self.console, IO_TIMEOUT,
                                           'services')['services'].items()}

    def settle(self, want=None, timeout=SETTLE_TIMEOUT):
        """Ask until only listeners are left and the packet buffers alive
        are down to `want`'s (the guest closes after its peer, close
        handshakes and TX completions take a few passes). Without `want`
        (the first snapshot), until two answers in a row agree: a pass
        that received packets leaves the RX ring short of up to an eighth
        (refills go in batches), and `vsock` has the device settle (its
        next pass tops the ring up and takes sent buffers back), so the
        answer after it has them; with `want` too, fewer buffers than it
        had are waited on like more."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            v = self.vsock()
            if want:
                done = not v['busy'] and v['pkts'] == want['pkts']
            else:
                done = not v['busy'] and v == last
            if done or time.monotonic() > deadline:
                return v
            last = v
            time.sleep(0.2)

    def memory(self, want=None):
        """Sockets, packet buffers alive and heap bytes in use once the
        guest is idle (see settle), the packet pool given back to the heap
        first."""
        v = self.settle(want)
        m = TRIM_RE.search(self.command('vsock trim'))
        v['trimmed'] = int(m.group(1)) if m else 0
        m = HEAP_RE.search(self.command('mem'))
        if not m:
            raise SystemExit('%s: no heap line in the guest\'s `mem`' % self.prog)
        v['heap'] = int(m.group(1))
        out = self.command('mem chunks')
        m = CHUNKS_RE.search(out)
        if not m or 'other sizes' in out:
            raise SystemExit('%s: no heap census in the guest\'s `mem chunks`' % self.prog)
        v['chunks'] = int(m.group(1))
        v['sizes'] = {int(size): int(n) for size, n in CHUNK_SIZE_RE.findall(out)}
        return v


# --------------------------------------------------------------- the load

class Totals:
    def __init__(self):
        self.lock = threading.Lock()
        self.conns = dict.fromkeys(KINDS, 0)
        self.sent = dict.fromkeys(KINDS, 0)      # host to guest
        self.received = dict.fromkeys(KINDS, 0)  # guest to host
        self.messages = 0
        self.mismatches = 0
        self.errors = []
        self.cpus = 0                            # the guest's CPUs online

    def add(self, kind, sent, received, ok, messages=0):
        with self.lock:
            self.conns[kind] += 1
            self.sent[kind] += sent
            self.received[kind] += received
            self.messages += messages
            self.mismatches += not ok

    def error(self, kind, e):
        with self.lock:
            self.errors.append('%s: %s' % (kind, e))


def random_size(rng, top):
    """Log-uniform in 1..top: many small transfers, some large."""
    return max(1, min(top, int(2 ** rng.uniform(0, top.bit_length()))))


def one_connection(rng, paths, top, totals):
    kind = rng.choice(KINDS)
    try:
        if kind == 'echo':
            data = rng.randbytes(random_size(rng, top))
            totals.add(kind, len(data), len(data), echo_stream(paths[0], data))
        elif kind == 'sink':
            data = rng.randbytes(random_size(rng, top))
            totals.add(kind, len(data), 0, sink(paths[0], data))
        elif kind == 'source':
            n = random_size(rng, top)
            totals.add(kind, 0, n, source(paths[0], n))
        else:
            msgs = [rng.randbytes(random_size(rng, min(top, SEQ_MAX)))
                    for _ in range(rng.randint(1, 8))]
            n = sum(map(len, msgs))
            totals.add(kind, n, n, seqpacket(paths[1], msgs), len(msgs))
    except (OSError, SoakError) as e:
        totals.error(kind, e)


def run_load(paths, opts, seconds, seed, totals):
    """opts.conns workers, connection after connection, for `seconds`."""
    deadline = time.monotonic() + seconds

    def worker(i):
        rng = random.Random('%d/%d' % (seed, i))
        while time.monotonic() < deadline:
            one_connection(rng, paths, opts.max_size, totals)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True)
               for i in range(opts.conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# ----------------------------------------------------------------- checks

def service_checks(before, after, totals):
    """The guest's own counts against ours; a list of failures."""
    fails = []
    d = {k: {f: after[k][f] - before[k][f] for f in after[k]} for k in after}
    echo_in = totals.sent['echo'] + totals.sent['seqpacket']
    if d['echo']['in'] != echo_in or d['echo']['out'] != echo_in:
        fails.append('guest echo counted in %d out %d B, clients sent %d B'
                     % (d['echo']['in'], d['echo']['out'], echo_in))
    if d['sink']['in'] != totals.sent['sink']:
        fails.append('guest sink counted %d B, clients sent %d B'
                     % (d['sink']['in'], totals.sent['sink']))
    if d['source']['out'] < totals.received['source']:
        fails.append('guest source counted %d B out, clients read %d B'
                     % (d['source']['out'], totals.received['source']))
    want = {'echo': totals.conns['echo'] + totals.conns['seqpacket'],
            'sink': totals.conns['sink'], 'source': totals.conns['source']}
    for k, n in want.items():
        if d[k]['accepted'] != n or d[k]['closed'] != n or after[k]['conns']:
            fails.append('guest %s accepted %d closed %d (%d open), clients made %d'
                         % (k, d[k]['accepted'], d[k]['closed'], after[k]['conns'], n))
    return fails


# newlib's malloc hands out a free chunk whole when cutting it would leave
# less than its smallest chunk (32 B): a buffer freed and allocated again
# can sit in a chunk one alignment step (16 B) bigger than before.
CHUNK_WHOLE_SLACK = 16


def heap_census_diff(start, end):
    """Chunks in use by size, start against end: (failures, chunks handed
    out whole). Every chunk must be matched by one of the same size, or one
    CHUNK_WHOLE_SLACK bigger at the end; the number of chunks is exact."""
    fails, whole = [], []
    left = dict(start)
    extra = []
    for chunk, n in sorted(end.items()):
        kept = min(n, left.get(chunk, 0))
        left[chunk] = left.get(chunk, 0) - kept
        extra += [chunk] * (n - kept)
    for chunk in extra:
        if left.get(chunk - CHUNK_WHOLE_SLACK, 0) > 0:
            left[chunk - CHUNK_WHOLE_SLACK] -= 1
            whole.append(chunk)
        else:
            fails.append('guest heap: a %d B chunk in use at the end was not there at '
                         'the start' % chunk)
    for chunk, n in sorted(left.items()):
        if n:
            fails.append('guest heap: %d chunk(s) of %d B in use at the start are gone at '
                         'the end' % (n, chunk))
    return fails, whole


def memory_checks(g0, g1, b0, bw, b1, tolerance):
    fails = []
    if g1['busy']:
        fails.append('guest still has %d socket(s) not closed' % g1['busy'])
    for key in ('sockets', 'pkts', 'chunks'):
        if g1[key] != g0[key]:
            fails.append('guest %s %d at start, %d at end' % (key, g0[key], g1[key]))
    census_fails, whole = heap_census_diff(g0['sizes'], g1['sizes'])
    fails += census_fails
    if not census_fails and g1['heap'] != g0['heap'] + CHUNK_WHOLE_SLACK * len(whole):
        fails.append('guest heap %d at start, %d at end, %d chunk(s) handed out whole'
                     % (g0['heap'], g1['heap'], len(whole)))
    if b1['host_conns']:
        fails.append('back end still holds %d host connection(s)' % b1['host_conns'])
    for key in ('fds', 'maps'):
        if b1[key] != b0[key]:
            fails.append('back end %s %d at start, %d at end' % (key, b0[key], b1[key]))
    if b1['anon_kib'] > bw['anon_kib'] + tolerance:
        fails.append('back end RssAnon %d KiB after warm-up, %d KiB at end (tolerance %d)'
                     % (bw['anon_kib'], b1['anon_kib'], tolerance))
    return fails


def print_report(opts, totals, mem, fails, secs):
    t = Table([Column('service', 10, left=True), Column('conns', 10, '%d'),
               Column('host->guest B', 16, '%d'), Column('guest->host B', 16, '%d')],
              title='\nsoak: %d connections at a time, %.0f s (warm-up %.0f s), seed %d, '
                    '%d guest CPUs' % (opts.conns, secs, opts.warmup, opts.seed, totals.cpus))
    for k in KINDS:
        t.row(k, totals.conns[k], totals.sent[k], totals.received[k])
    t.row('total', sum(totals.conns.values()), sum(totals.sent.values()),
          sum(totals.received.values()))
    t.print()
    print('seqpacket messages %d, mismatches %d, connection errors %d'
          % (totals.messages, totals.mismatches, len(totals.errors)))
    for e in totals.errors[:5]:
        print('  error: %s' % e)
    g0, g1 = mem['guest_start'], mem['guest_end']
    print('guest: heap in use %d -> %d B in %d -> %d chunks, packet buffers %d -> %d, '
          'sockets %d -> %d (pooled buffers freed before counting: %d, %d)'
          % (g0['heap'], g1['heap'], g0['chunks'], g1['chunks'], g0['pkts'], g1['pkts'],
             g0['sockets'], g1['sockets'], g0['trimmed'], g1['trimmed']))
    whole = heap_census_diff(g0['sizes'], g1['sizes'])[1]
    if whole:
        print('guest: %d chunk(s) handed out whole by malloc (%d B more than at the start: '
              '%s B)' % (len(whole), CHUNK_WHOLE_SLACK * len(whole),
                         ', '.join(map(str, whole))))
    b0, bw, b1 = mem['backend_start'], mem['backend_warm'], mem['backend_end']
    print('back end: VmRSS %d / %d / %d KiB, RssAnon %d / %d / %d KiB (start / after '
          'warm-up / end), fds %d -> %d, maps %d -> %d'
          % (b0['rss_kib'], bw['rss_kib'], b1['rss_kib'], b0['anon_kib'], bw['anon_kib'],
             b1['anon_kib'], b0['fds'], b1['fds'], b0['maps'], b1['maps']))
    for f in fails:
        print('FAIL: %s' % f)
    print('soak: %s' % ('FAIL' if fails else 'ok'))


# ------------------------------------------------------------------ main

def parse_args(argv):
    p = Parser(prog=PROG, description='Many concurrent vsock connections (echo, sink, '
               'source, seqpacket) for a long time; every byte checked, memory flat.',
               epilog='Launcher options after "--" go to host/ringside-run.')
    p.add_argument('-t', '--time', '--duration', dest='duration',
                   type=positive_float, default=600.0,
                   help='seconds of load after the warm-up (600)')
    p.add_argument('--warmup', type=nonneg_float,
                   help='seconds of warm-up load first (default: a tenth of --duration, '
                        '5..60)')
    p.add_argument('--conns', type=positive_int, default=64, help='concurrent connections (64)')
    p.add_argument('--seed', type=int, default=1, help='random sizes and bytes (1)')
    p.add_argument('--max-size', type=size, default=262144,
                   help='largest transfer per connection, bytes (262144)')
    p.add_argument('--rss-tolerance', type=nonneg_int, default=256, metavar='KIB',
                   help='back end RssAnon growth allowed after the warm-up (256 KiB)')
    p.add_argument('--boot', choices=['iso', 'elf'], default='elf')
    add_options(p)
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.duration <= 0 or opts.conns <= 0 or opts.max_size <= 0 or opts.rss_tolerance < 0:
        p.error('--duration, --conns and --max-size must be positive, --rss-tolerance not '
                'negative')
    if opts.warmup is None:
        opts.warmup = min(60.0, max(5.0, opts.duration / 10))
    if opts.warmup < 0:
        p.error('--warmup must not be negative')
    return opts


def launch_args(opts, uds_seq):
    return ['--vsock', '--boot', opts.boot, '--accel', 'auto',
            '--vsock-arg=--uds-seqpacket=' + uds_seq] + opts.launcher_args


def soak(launch, paths, opts, log_path):
    """The run on a booted guest: (totals, memory samples, failures)."""
    guest = Guest(launch.console)
    backend = backend_of(launch, log_path)
    totals = Totals()
    totals.cpus = cpus_online(launch.console, IO_TIMEOUT)
    mem = {'guest_start': guest.memory()}
    mem['backend_start'] = backend.settled(paths)
    svc0 = guest.services()
    if opts.warmup:
        run_load(paths, opts, opts.warmup, opts.seed + 1000003, totals)
    guest.settle(mem['guest_start'])
    mem['backend_warm'] = backend.settled(paths)
    run_load(paths, opts, opts.duration, opts.seed, totals)
    mem['guest_end'] = guest.memory(mem['guest_start'])
    mem['backend_end'] = backend.settled(paths)
    fails = ['%d connection(s) came back wrong' % totals.mismatches] if totals.mismatches else []
    if totals.errors:
        fails.append('%d connection error(s), first: %s'
                     % (len(totals.errors), totals.errors[0]))
    fails += service_checks(svc0, guest.services(), totals)
    fails += memory_checks(mem['guest_start'], mem['guest_end'], mem['backend_start'],
                           mem['backend_warm'], mem['backend_end'], opts.rss_tolerance)
    return totals, mem, fails


def main(argv):
    opts = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix='ringside-soak-')
    uds_seq = os.path.join(tmp, 'vsock-seq')
    lopts = rr.parse_args(launch_args(opts, uds_seq))
    accel = rr.choose_accel(lopts)
    if rr.vsock_kernel(lopts, accel):
        raise SystemExit('%s: needs the vhost-user back end (--vsock-transport vhost-user)'
                         % PROG)
    os.makedirs(os.path.join(REPO, 'build'), exist_ok=True)
    log_path = os.path.join(REPO, 'build', 'soak-qemu.log')
    log = open(log_path, 'w')
    try:
        with rr.Launch(lopts, accel, children=TunedChildren(lopts.verbose),
                       qemu_stderr=log) as launch:
            launch.wait_ready()
            wait_vsock_up(launch.opts.vsock_uds, prog=PROG)
            start = time.monotonic()
            totals, mem, fails = soak(launch, (launch.opts.vsock_uds, uds_seq), opts,
                                      log_path)
            secs = time.monotonic() - start
            launch.poweroff()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        log.close()
    print_report(opts, totals, mem, fails, secs)
    publish(PROG, opts, {'cpus': totals.cpus, 'conns': totals.conns, 'sent': totals.sent,
                         'received': totals.received, 'messages': totals.messages,
                         'mismatches': totals.mismatches, 'errors': totals.errors,
                         'memory': mem, 'failures': fails})
    return 1 if fails else 0
