# SPDX-License-Identifier: MIT
"""soak: many concurrent vsock connections for a long time, every byte
checked, memory flat from start to end.

Boots the appliance with vsock (our back end, or yours: -- --backend CMD)
and runs --conns workers for --time seconds. Each worker opens one
connection after another (churn), each to a service picked at random,
with random sizes, all from --seed:

  echo       stream to port 1234: random bytes out, the same bytes back
             (sha256 of what was sent against sha256 of what came back)
  sink       stream to port 1235: random bytes out, then SHUT_WR and wait
             for the guest's close; the guest's `stats services` sink byte
             count must grow by exactly what all sink connections sent
  source     stream from port 1236: read N bytes and hang up mid-stream;
             the guest sends byte i of a connection as i % 251
             (app/services.h), so every byte is compared with that
  seqpacket  SOCK_SEQPACKET to port 1234: messages of random sizes, each
             must come back whole, as one message of the same bytes (our
             back end's --uds-seqpacket: left out with another back end)

The run has a warm-up phase first (--warmup-time), the same mix. Flat means:
  guest: once only its listeners are left and its packet buffers alive
    are back (`vsock json`, asked until so), and the packet pool's free
    lists are given back to the heap (`vsock trim`: their size follows the
    load's peak), the heap's bytes in use (`mem json`) equal those before
    the warm-up, exactly, chunk by chunk; so do the packet buffers alive;
  back end: once it holds no connection (no connected hybrid socket in
    its fds, and with its counters, every connection made is freed), its
    open fds and mappings equal those before the warm-up, and its private
    memory (RssAnon) is within --rss-tolerance of that after the warm-up.
    Ours runs with backend_ctl.BACKEND_TUNABLES, so its 256 KiB connection
    buffers go back to the kernel on free.

The back end's counters come through its control socket ({control}); a
back end without one is checked on the rest, and the run says which
checks it left out. Exits 1 on any mismatch, connection error or growth.
"""

import argparse
import hashlib
import os
import random
import select
import shutil
import socket
import tempfile
import threading
import time

import ringside as rr

from .. import measure
from ..backend_ctl import TunedChildren
from ..backends import missing
from ..benchlib import hybrid_connect, wait_vsock_up
from ..cli import LAUNCHER_EPILOG, Parser, nonneg_float, nonneg_int, positive_int, size
from ..guest_stats import cpus_online, guest_stats, json_of
from ..images import REPO
from ..results import Cells, add_options, publish
from ..table import Column, Table
from ..wait import poll_for

NAME = 'soak'
SUMMARY = 'endurance: 64 connections at a time, memory flat'
GROUP = 'check'
ALIASES = ('soak',)
PROG = 'ringside soak'
PORT_ECHO, PORT_SINK, PORT_SOURCE = 1234, 1235, 1236
KINDS = ('echo', 'sink', 'source', 'seqpacket')
IO_TIMEOUT = 120.0      # one socket operation, TCG on busy cores
SETTLE_TIMEOUT = 120.0  # the guest and back end closing everything
SEQ_MAX = 65536         # a Unix SOCK_SEQPACKET message must fit the socket buffer
PATTERN = bytes(range(251))


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
    """The back end, whoever wrote it: its process (/proc), and its
    counters when it has a control socket (else None)."""

    def __init__(self, launch):
        self.proc = launch.backend_process()
        if self.proc is None:
            raise SystemExit('%s: no vhost-user back end running' % PROG)
        self.control = launch.backend_control()

    def alive(self):
        return self.proc.alive()

    def live_conns(self):
        return self.control.live_conns() if self.control else 0

    def settled(self, paths, timeout=SETTLE_TIMEOUT):
        """A sample once the back end has closed every host connection
        (it closes after the guest's close, a few events later)."""
        poll_for(lambda: not self.proc.host_conns(paths) and not self.live_conns(), timeout)
        s = self.proc.sample()
        s['host_conns'] = max(self.proc.host_conns(paths), self.live_conns())
        return s


# ------------------------------------------------------------ guest side

class Guest:
    def __init__(self, console, prog=PROG):
        self.console = console
        self.prog = prog

    def json(self, cmd):
        try:
            return json_of(self.console, cmd, IO_TIMEOUT)
        except rr.LaunchError as e:
            raise SystemExit('%s: %s' % (self.prog, e))

    def vsock(self):
        v = self.json('vsock')
        return {'sockets': len(v['sockets']), 'pkts': v['pkts_alive'],
                'busy': sum(s['state'] != 'listen' for s in v['sockets'])}

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
        seen = {'last': None}

        def idle():
            v = self.vsock()
            prev, seen['last'] = seen['last'], v
            if want:
                return v if not v['busy'] and v['pkts'] == want['pkts'] else None
            return v if not v['busy'] and v == prev else None
        return poll_for(idle, timeout, interval=0.2) or seen['last']

    def memory(self, want=None):
        """Sockets, packet buffers alive and heap bytes in use once the
        guest is idle (see settle), the packet pool given back to the heap
        first."""
        v = self.settle(want)
        v['trimmed'] = self.json('vsock trim')['freed']
        m = self.json('mem chunks')
        if m['chunks']['other_count']:
            raise SystemExit('%s: more chunk sizes in the guest\'s heap than `mem chunks` '
                             'counts one by one' % self.prog)
        v['heap'] = m['heap_in_use']
        v['chunks'] = m['chunks']['count']
        v['sizes'] = {c['size']: c['count'] for c in m['chunks']['sizes']}
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
    kind = rng.choice(KINDS if paths[1] else KINDS[:-1])
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
    deadline = time.monotonic() + seconds   # the load runs for its time

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


def print_report(opts, totals, mem, fails, secs, skipped):
    t = Table([Column('service', 10, left=True), Column('conns', 10, '%d'),
               Column('host->guest B', 16, '%d'), Column('guest->host B', 16, '%d')],
              title='%s: %d connections at a time, %.0f s (warm-up %.0f s), seed %d, '
                    '%d guest CPUs' % (PROG, opts.conns, secs, opts.warmup_time, opts.seed,
                                       totals.cpus))
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
    for what in skipped:
        print('not checked: %s' % what)
    for f in fails:
        print('FAIL: %s' % f)
    print('%s: %s' % (PROG, 'FAIL' if fails else 'ok'))


# ------------------------------------------------------------------ main

def parse_args(argv):
    p = Parser(prog=PROG, usage='%(prog)s [options] [-- launcher options]',
               description='Many concurrent vsock connections (echo, sink, source, '
               'seqpacket)\nfor a long time; every byte checked, memory flat.',
               epilog=LAUNCHER_EPILOG)
    measure.add(p, time=600.0)
    p.add_argument('--warmup-time', type=nonneg_float, metavar='S',
                   help='seconds of warm-up load first (a tenth of --time, 5..60)')
    p.add_argument('--conns', type=positive_int, default=64, metavar='N',
                   help='concurrent connections (64)')
    p.add_argument('--seed', type=int, default=1, metavar='N',
                   help='random sizes and bytes (1)')
    p.add_argument('--max-size', type=size, default=262144, metavar='B',
                   help='largest transfer per connection, bytes (256k)')
    p.add_argument('--rss-tolerance', type=nonneg_int, default=256, metavar='KIB',
                   help='back end RssAnon growth allowed after the warm-up (256 KiB)')
    p.add_argument('--boot', choices=['iso', 'elf'], default='elf', metavar='iso|elf',
                   more=True, help='the ELF (default) or the ISO')
    add_options(p)
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.warmup_time is None:
        opts.warmup_time = min(60.0, max(5.0, opts.time / 10))
    return opts


def soak(launch, paths, opts):
    """The run on a booted guest: (totals, memory samples, failures)."""
    guest = Guest(launch.console)
    backend = Backend(launch)
    totals = Totals()
    totals.cpus = cpus_online(launch.console, IO_TIMEOUT)
    mem = {'guest_start': guest.memory()}
    mem['backend_start'] = backend.settled(paths)
    svc0 = guest.services()
    if opts.warmup_time:
        run_load(paths, opts, opts.warmup_time, opts.seed + 1000003, totals)
    guest.settle(mem['guest_start'])
    mem['backend_warm'] = backend.settled(paths)
    run_load(paths, opts, opts.time, opts.seed, totals)
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
    opts.argv = argv
    tmp = tempfile.mkdtemp(prefix='ringside-soak-')
    uds_seq = os.path.join(tmp, 'vsock-seq')
    largs = ['--vsock', '--boot', opts.boot, '--accel', 'auto']
    lopts = rr.parse_args(largs + opts.launcher_args)
    lack = missing(lopts, ['counters', 'seqpacket'])
    skipped = []
    if 'seqpacket' not in lack:
        lopts = rr.parse_args(largs + ['--vsock-arg=--uds-seqpacket=' + uds_seq]
                              + opts.launcher_args)
    else:
        uds_seq = None
        skipped.append('SOCK_SEQPACKET connections (the back end has no --uds-seqpacket)')
    if 'counters' in lack:
        skipped.append("the back end's own count of connections freed (no control "
                       "socket: a --backend CMD without {control})")
    accel = rr.choose_accel(lopts)
    if rr.vsock_kernel(lopts, accel):
        raise SystemExit("%s: needs a vhost-user back end (its process is checked), not the "
                         "kernel's vhost-vsock (-- --vsock-transport vhost-user)" % PROG)
    os.makedirs(os.path.join(REPO, 'build'), exist_ok=True)
    log = open(os.path.join(REPO, 'build', 'soak-qemu.log'), 'w')
    try:
        with rr.Launch(lopts, accel, children=TunedChildren(lopts.verbose),
                       qemu_stderr=log) as launch:
            launch.wait_ready()
            wait_vsock_up(launch.opts.vsock_uds, prog=PROG)
            start = time.monotonic()
            totals, mem, fails = soak(launch, (launch.opts.vsock_uds, uds_seq), opts)
            secs = time.monotonic() - start
            launch.poweroff()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        log.close()
    print_report(opts, totals, mem, fails, secs, skipped)
    cells = Cells()
    for k in KINDS:
        cells.add({'cell': 'soak', 'service': k}, 'conns', 'conns', totals.conns[k])
    cells.add({'cell': 'soak'}, 'guest heap growth', 'B',
              mem['guest_end']['heap'] - mem['guest_start']['heap'], 'lower')
    cells.add({'cell': 'soak'}, 'back end RssAnon growth', 'KiB',
              mem['backend_end']['anon_kib'] - mem['backend_warm']['anon_kib'], 'lower')
    publish(PROG, opts, {'cpus': totals.cpus, 'conns': totals.conns, 'sent': totals.sent,
                         'received': totals.received, 'messages': totals.messages,
                         'mismatches': totals.mismatches, 'errors': totals.errors,
                         'memory': mem, 'failures': fails, 'not_checked': skipped}, cells)
    return 1 if fails else 0
