# SPDX-License-Identifier: MIT
"""faults: which of our back end's --inject modes each guest survives.

For every inject mode (`ringside-vhost-vsock --inject list`), every guest
(ringside, and the Linux baseline guest of `make linux-guest`) and every
ring layout (the device's packed=off|on), boot the guest behind a back end
that injects only that mode, and classify what the guest made of it:

  survives  byte-exact echo on one connection while the faults hit, and on
            a new connection after the injection stopped (the back end's
            control socket: `inject stop`)
  degraded  some exchanges failed (bytes lost, connection reset or stalled)
            while the faults hit, but a new connection echoes byte-exact
            after the injection stopped
  broken    after the injection stopped no new connection echoes: the
            guest's driver gave up on its device (Linux marks a virtqueue
            broken and its vsock driver has no reset path)

Everything is decided from events and counters: the faults the back end
injected (its control socket), connection results (a CONNECT answered or
refused, bytes compared, EOF), ringside's broken-queue resets (`virtio
json`) and Linux's own kernel messages ("id N out of range", "is not a
head!", BUG/Oops lines are kept as evidence). One boot per cell: the back
end's modes are fixed for its life and QEMU 7.2 does not reconnect a
vhost-user-vsock device to a restarted back end. Fault injection is our
back end's (--inject): this command boots it, whatever else is installed.
tests/qemu/test_faults_linux.py runs the Linux column through run_cell().
"""

import os
import re
import socket
import subprocess
import sys
import time

import ringside as rr

from .. import linux_guest, measure
from ..benchlib import echo_exchange, hybrid_connect, pattern
from ..cli import Parser, positive_int
from ..guest_stats import json_of
from ..images import DEFAULT_VSOCK_BACKEND, REPO, linux_missing
from ..machine import LoggedLaunch
from ..results import Cells, add_options, publish
from ..table import Column, Table

NAME = 'faults'
SUMMARY = "our back end's faults (--inject): what guests survive"
GROUP = 'check'
ALIASES = ('fault-matrix',)
PROG = 'ringside faults'

GUESTS = ('ringside', 'linux')
RINGS = ('split', 'packed')
OUTCOMES = ('survives', 'degraded', 'broken')

ECHO_PORT = 1234

# Linux's own words when a device wrote something its ring cannot take
# (drivers/virtio/virtio_ring.c BAD_RING) or the kernel itself failed.
LINUX_MARKERS = (r'id \d+ out of range', r'id \d+ is not a head', r'Bad virtqueue',
                 r'kernel BUG', r'Oops', r'Kernel panic', r'skb_over_panic')

INJECTED_ENOUGH = 3       # faults of each mode while the echo runs
BOOT_TIMEOUT = 300        # a Linux boot under TCG on two busy cores
DURING_TIMEOUT = 240      # for the faults to be injected INJECTED_ENOUGH times
EXCHANGE_TIMEOUT = 20     # one echo while faults hit: a lost byte stalls it
CONNECT_TIMEOUT = 40      # the back end itself gives up after 10 s
AFTER_TIMEOUT = 180       # byte-exact echo of up to 1 MiB after the stop
AFTER_SIZES = (1, 4097, 65536, 1 << 20)


def inject_modes(backend=DEFAULT_VSOCK_BACKEND):
    """The back end's inject modes, from the binary itself."""
    out = subprocess.run([backend, '--inject', 'list'], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


class Cell(LoggedLaunch):
    """One guest on one ring behind our back end injecting `mode` (the back
    end's MODE[,MODE]: with several, each fault is one of them at random)."""

    def __init__(self, rr, guest, ring, mode, every, seed, log_dir, accel='tcg', label=None):
        self.guest, self.ring, self.mode = guest, ring, mode
        self.modes = mode.split(',')
        args = ['--vsock', '--accel', accel, '--boot', 'elf', '--qemu-arg=-global',
                '--qemu-arg=vhost-user-vsock-pci.packed=%s' % ('on' if ring == 'packed' else 'off'),
                '--vsock-arg=--inject=%s' % mode, '--vsock-arg=--inject-every=%d' % every,
                '--vsock-arg=--inject-seed=%d' % seed]
        if guest == 'linux':
            args += linux_guest.linux_launch_args('linux')
        super().__init__(rr.parse_args(args), accel, log_dir,
                         'faults-%s-%s-%s' % (guest, ring, label or mode))

    def start(self):
        launch = super().start()
        launch.wait_ready(BOOT_TIMEOUT, linux=self.guest == 'linux')
        self.control = launch.backend_control()
        return self

    def injected(self):
        """{mode: faults the back end injected so far}."""
        done = self.control.injected()
        return {m: done.get(m, 0) for m in self.modes}

    def markers(self):
        """The guest's own reports of a broken queue or a kernel bug:
        Linux's kernel messages, ringside's broken-queue resets."""
        if self.guest != 'linux':
            try:
                devices = json_of(self.launch.console, 'virtio', 60)['devices']
            except rr.LaunchError:
                return []
            return ['%s: %d broken-queue reset(s)' % (d['driver'], d['recoveries'])
                    for d in devices if d.get('recoveries')]
        text = self.launch.console.text if self.launch and self.launch.console else ''
        found = []
        for line in text.splitlines():
            if any(re.search(p, line) for p in LINUX_MARKERS) and line.strip() not in found:
                found.append(line.strip())
        return found

    def stop_injecting(self):
        self.control.stop_injecting()


class Result:
    def __init__(self, cell):
        self.guest, self.ring, self.mode = cell.guest, cell.ring, cell.mode
        self.ok = 0
        self.failures = []    # what went wrong while the faults hit
        self.after = ''       # what went wrong after the stop ('' = exact)
        self.injected = {}    # mode: faults injected
        self.markers = []
        self.outcome = None
        self.seconds = {}     # wall time per phase: boot, during, after

    def classify(self):
        if self.after:
            self.outcome = 'broken'
        elif self.failures:
            self.outcome = 'degraded'
        else:
            self.outcome = 'survives'
        return self.outcome

    def summary(self):
        s = '%s %s %s: %s (%d exact, %d failed while injecting %s' % (
            self.guest, self.ring, self.mode, self.outcome, self.ok, len(self.failures),
            ' '.join('%s:%d' % kv for kv in self.injected.items()))
        if self.failures:
            s += '; first: %s' % self.failures[0]
        s += ')'
        if self.after:
            s += '; after the stop: %s' % self.after
        if self.markers:
            s += '; guest said: %s' % ' | '.join(self.markers[:3])
        s += '; %s' % ' '.join('%s %.0f s' % kv for kv in self.seconds.items())
        return s


def failed(cell, res, what):
    """Note a failed exchange. One failure after a fault makes the cell
    degraded at least, whatever follows, so the phase ends there; a
    failure before any fault is no result at all."""
    res.injected = cell.injected()
    if not any(res.injected.values()):
        raise RuntimeError('%s: %s before any fault was injected' % (cell.name, what))
    res.failures.append(what)


def during(cell, res):
    """Echo while the faults hit, until the back end injected each mode
    INJECTED_ENOUGH times with every byte exact, or an exchange failed."""
    deadline = time.monotonic() + DURING_TIMEOUT
    s = None
    n = 0
    try:
        while True:
            res.injected = cell.injected()
            if min(res.injected.values()) >= INJECTED_ENOUGH or time.monotonic() > deadline:
                break
            if s is None:
                try:
                    s = hybrid_connect(cell.uds, ECHO_PORT, CONNECT_TIMEOUT)
                except (OSError, socket.timeout) as e:
                    failed(cell, res, 'connect: %s' % (e.strerror or e))
                    break
            data = pattern(1 + (n * 7919) % 70000, n)
            n += 1
            err = echo_exchange(s, data, EXCHANGE_TIMEOUT)
            if err:
                s.close()
                s = None
                failed(cell, res, err)
                break
            else:
                res.ok += 1
        res.injected = cell.injected()
        cell.stop_injecting()
        # the connection that saw the faults: still exact?
        if s is not None:
            err = echo_exchange(s, pattern(65536, 7), EXCHANGE_TIMEOUT)
            if err:
                res.failures.append('after the stop, same connection: ' + err)
    finally:
        if s is not None:
            s.close()


def after(cell, res):
    """A new connection after the stop, byte-exact up to 1 MiB."""
    try:
        s = hybrid_connect(cell.uds, ECHO_PORT, CONNECT_TIMEOUT)
    except (OSError, socket.timeout) as e:
        res.after = 'connect: %s' % (e.strerror or e)
        return
    with s:
        for size in AFTER_SIZES:
            err = echo_exchange(s, pattern(size, size), AFTER_TIMEOUT)
            if err:
                res.after = err
                return


def run_cell(rr, guest, ring, mode, every=20, seed=7, log_dir=None, accel='tcg', label=None):
    """Boot, inject, classify; the Result (its .outcome is set)."""
    log_dir = log_dir or os.path.join(REPO, 'build', 'faults')
    cell = Cell(rr, guest, ring, mode, every, seed, log_dir, accel, label)
    res = Result(cell)
    try:
        for phase, run in (('boot', cell.start), ('during', lambda: during(cell, res)),
                           ('after', lambda: after(cell, res))):
            t = time.monotonic()
            run()
            res.seconds[phase] = time.monotonic() - t
        res.markers = cell.markers()
    finally:
        t = time.monotonic()
        cell.stop()
        res.seconds['stop'] = time.monotonic() - t
    if not any(res.injected.values()):
        raise RuntimeError('%s: the back end never injected %s (see %s)'
                           % (cell.name, mode, cell.stderr_path))
    res.classify()
    return res


def print_table(results, guests, rings, modes):
    t = Table([Column('mode', 14, left=True)]
              + [Column('%s %s' % (g, r), 16, left=True) for g in guests for r in rings])
    for m in modes:
        cells = [results.get((g, r, m)) for g in guests for r in rings]
        t.row(m, *[res.outcome if res else None for res in cells])
    t.print()


def _list(text, allowed, what):
    items = [x.strip() for x in text.split(',') if x.strip()]
    bad = [x for x in items if x not in allowed]
    if bad or not items:
        raise ValueError('%s takes %s, not %r' % (what, ','.join(allowed), text))
    return items


def main(argv):
    p = Parser(prog=PROG, description=__doc__.split('\n')[0] + '\nOur back end runs every '
               'cell (fault injection is its own): no launcher options.',
               usage='%(prog)s [options]')
    measure.add(p, guests='ringside,linux')
    p.add_argument('--rings', default=','.join(RINGS), metavar='LIST',
                   help='split,packed (both)')
    p.add_argument('--modes', metavar='LIST',
                   help='inject modes (default: every mode of --inject list)')
    p.add_argument('--every', type=positive_int, default=20, metavar='N',
                   help='a fault every N packets (20)')
    p.add_argument('--seed', type=int, default=7, metavar='N', help='--inject-seed (7)')
    add_options(p)
    p.add_argument('-v', '--verbose', action='store_true', help='a line per cell as it ends')
    opts = p.parse_args(argv)
    opts.argv = argv
    if not os.path.exists(DEFAULT_VSOCK_BACKEND):
        p.error('%s missing: run make' % os.path.relpath(DEFAULT_VSOCK_BACKEND, REPO))
    all_modes = inject_modes()
    try:
        guests = _list(','.join(opts.guests), GUESTS, '--guests')
        rings = _list(opts.rings, RINGS, '--rings')
        modes = _list(opts.modes, all_modes, '--modes') if opts.modes else all_modes
    except ValueError as e:
        p.error(str(e))
    if 'linux' in guests and linux_missing('linux'):
        p.error(linux_missing('linux'))
    results = {}
    for g in guests:
        for r in rings:
            for m in modes:
                try:
                    res = run_cell(rr, g, r, m, opts.every, opts.seed)
                except (RuntimeError, rr.LaunchError) as e:
                    # no outcome for this cell (never injected, no boot): say so, go on
                    sys.stderr.write('%s: %s %s %s: %s\n' % (PROG, g, r, m, e))
                    continue
                results[(g, r, m)] = res
                if opts.verbose:
                    print(res.summary(), flush=True)
    print('%s: inject modes x guests, --inject-every %d --inject-seed %d (TCG)'
          % (PROG, opts.every, opts.seed))
    print_table(results, guests, rings, modes)
    cells = Cells()
    for (g, r, m), v in results.items():
        cells.add({'cell': 'faults', 'guest': g, 'ring': r, 'mode': m}, 'exact exchanges',
                  'exchanges', v.ok)
    publish(PROG, opts, {'cells': [{'guest': k[0], 'ring': k[1], 'mode': k[2],
                                    'outcome': v.outcome, 'exact': v.ok,
                                    'failures': v.failures, 'after': v.after,
                                    'injected': v.injected, 'guest_said': v.markers}
                                   for k, v in results.items()]}, cells)
    return 0
