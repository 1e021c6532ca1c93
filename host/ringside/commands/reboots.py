# SPDX-License-Identifier: MIT
"""reboots: one back end, the guest rebooted again and again.

Boots the appliance with vsock (our back end, or yours: -- --backend CMD;
QEMU without -no-reboot, so the guest's `reboot` resets the machine and
QEMU stays). After the first boot and after each of --reboots `reboot`
commands on the console: wait for 'ringside: ready', wait until the echo
service answers through the back end (it gets the rings again after the
reset: GET_VRING_BASE, then a new SET_MEM_TABLE and rings), send --size
random bytes (from --seed) to the echo service and compare what comes
back, then sample the back end's open fds, mappings and memory.

Flat means: fds and mappings after the last boot equal those after the
first (a leaked eventfd, socket or mapping of an old memory table shows
as one more per boot), and the back end's private memory (RssAnon) is
within --rss-tolerance of its value after the first reboot (the warm-up,
as in the soak: the first reset takes the back end through the ring stop
and re-setup paths once, which touches a few hundred KiB of memory for
good; a leak grows with every reboot after it). With the back end's
counters (its control socket, {control}) also: one vhost-user session
(QEMU never reconnected: the reset went through the same session), no
ring errors, every host connection closed; a back end without them is
checked on the rest, and the run says which checks it left out.
Exits 1 otherwise, or if any echo came back wrong or the back end exited.
"""

import argparse
import hashlib
import os
import random
import time

import ringside as rr

from ..backend_ctl import TunedChildren
from ..backends import missing
from ..benchlib import echo_exchange, hybrid_connect, wait_vsock_up
from ..cli import LAUNCHER_EPILOG, Parser, nonneg_int, positive_int, size
from ..guest_stats import cpus_online
from ..images import REPO
from ..results import Cells, add_options, publish
from ..wait import poll_for

NAME = 'reboots'
SUMMARY = 'N reboots behind one back end: echo each, no leak'
GROUP = 'check'
ALIASES = ('reboot-endurance',)
PROG = 'ringside reboots'
IO_TIMEOUT = 120.0


def parse_args(argv):
    p = Parser(prog=PROG, usage='%(prog)s [options] [-- launcher options]',
               description='Reboot the guest N times against one vhost-user back end;\n'
               'echo checked each boot, back end fds and memory flat.',
               epilog=LAUNCHER_EPILOG)
    p.add_argument('--reboots', type=positive_int, default=100, metavar='N',
                   help='guest reboots (100)')
    p.add_argument('--size', type=size, default=65536, metavar='B',
                   help='echo bytes per boot (64k)')
    p.add_argument('--seed', type=int, default=1, metavar='N', help='the echo bytes (1)')
    p.add_argument('--rss-tolerance', type=nonneg_int, default=256, metavar='KIB',
                   help='back end RssAnon growth allowed over the first reboot (256 KiB)')
    p.add_argument('--boot', choices=['iso', 'elf'], default='elf', metavar='iso|elf',
                   more=True, help='the ELF (default) or the ISO')
    add_options(p)
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    return p.parse_args(argv)


class Backend:
    """The back end's process, and its counters if it has a control socket."""

    def __init__(self, launch):
        self.proc = launch.backend_process()
        self.control = launch.backend_control()

    def live_conns(self):
        return self.control.live_conns() if self.control else 0

    def settled(self, paths):
        poll_for(lambda: not self.proc.host_conns(paths) and not self.live_conns(), IO_TIMEOUT)
        s = self.proc.sample()
        s['host_conns'] = max(self.proc.host_conns(paths), self.live_conns())
        return s


def boot_check(launch, backend, rng, size):
    """Echo on the freshly booted guest; then the back end's sample, once
    it has closed the echo connection."""
    uds = launch.opts.vsock_uds
    wait_vsock_up(uds, timeout=IO_TIMEOUT, prog=PROG)
    data = rng.randbytes(size)
    with hybrid_connect(uds, 1234, IO_TIMEOUT) as sock:
        ok = not echo_exchange(sock, data, IO_TIMEOUT)
    s = backend.settled([uds])
    s['cpus'] = cpus_online(launch.console, IO_TIMEOUT)
    s['echo_ok'] = ok
    s['sha256'] = hashlib.sha256(data).hexdigest()[:16]
    return s


def reboot(launch, timeout):
    """`reboot` on the console; returns once the guest is ready again."""
    launch.console.send('reboot\r')
    launch.console.wait_ready(timeout)


def counter_failures(c):
    """One vhost-user session through every reboot, its rings sound, and
    every host connection closed."""
    fails = []
    if c['vu_connects'] != 1:
        fails.append('QEMU connected to the back end %d times' % c['vu_connects'])
    if c['ring_errors'] or c['vu_bad_msgs']:
        fails.append('back end ring_errors %d vu_bad_msgs %d'
                     % (c['ring_errors'], c['vu_bad_msgs']))
    if c['conns_host'] != c['conns_closed']:
        fails.append('back end host connections %d, closed %d'
                     % (c['conns_host'], c['conns_closed']))
    return fails


def failures(samples, tolerance, backend_alive):
    first, last = samples[0], samples[-1]
    fails = ['boot %d: echo came back wrong' % i
             for i, s in enumerate(samples) if not s['echo_ok']]
    fails += ['boot %d: the back end still held %d host connection(s)' % (i, s['host_conns'])
              for i, s in enumerate(samples) if s['host_conns']]
    for key in ('fds', 'maps'):
        if last[key] != first[key]:
            fails.append('back end %s %d after the first boot, %d after the last'
                         % (key, first[key], last[key]))
    warm = samples[1] if len(samples) > 1 else first
    if last['anon_kib'] > warm['anon_kib'] + tolerance:
        fails.append('back end RssAnon %d KiB after the first reboot, %d KiB after the last '
                     '(tolerance %d)' % (warm['anon_kib'], last['anon_kib'], tolerance))
    if not backend_alive:
        fails.append('the back end exited')
    return fails


def print_report(opts, samples, fails, secs, skipped):
    first, last = samples[0], samples[-1]
    print('%s: %d reboots in %.0f s, one back end, %d B echo per boot'
          % (PROG, len(samples) - 1, secs, opts.size))
    print('echo byte-exact on %d of %d boots'
          % (sum(s['echo_ok'] for s in samples), len(samples)))
    print('back end after boot 1 / max / after the last: VmRSS %d / %d / %d KiB, '
          'RssAnon %d / %d / %d KiB, fds %d / %d / %d, maps %d / %d / %d' % (
              first['rss_kib'], max(s['rss_kib'] for s in samples), last['rss_kib'],
              first['anon_kib'], max(s['anon_kib'] for s in samples), last['anon_kib'],
              first['fds'], max(s['fds'] for s in samples), last['fds'],
              first['maps'], max(s['maps'] for s in samples), last['maps']))
    for what in skipped:
        print('not checked: %s' % what)
    for f in fails:
        print('FAIL: %s' % f)
    print('%s: %s' % (PROG, 'FAIL' if fails else 'ok'))


def main(argv):
    opts = parse_args(argv)
    opts.argv = argv
    lopts = rr.parse_args(['--vsock', '--boot', opts.boot, '--accel', 'auto']
                          + opts.launcher_args)
    if lopts.no_reboot:
        raise SystemExit('%s: --no-reboot would make the first reboot end QEMU' % PROG)
    skipped = []
    if missing(lopts, ['counters']):
        skipped.append("one vhost-user session, no ring errors, every connection freed: the "
                       "back end's counters (no control socket: a --backend CMD without "
                       "{control})")
    accel = rr.choose_accel(lopts)
    if rr.vsock_kernel(lopts, accel):
        raise SystemExit("%s: needs a vhost-user back end (its process is checked), not the "
                         "kernel's vhost-vsock (-- --vsock-transport vhost-user)" % PROG)
    rng = random.Random(opts.seed)
    os.makedirs(os.path.join(REPO, 'build'), exist_ok=True)
    log = open(os.path.join(REPO, 'build', 'reboots-qemu.log'), 'w')
    samples, counters = [], {}
    start = time.monotonic()
    try:
        with rr.Launch(lopts, accel, children=TunedChildren(lopts.verbose),
                       qemu_stderr=log) as launch:
            backend = Backend(launch)
            launch.wait_ready()
            samples.append(boot_check(launch, backend, rng, opts.size))
            for i in range(opts.reboots):
                reboot(launch, lopts.timeout)
                samples.append(boot_check(launch, backend, rng, opts.size))
                if opts.reboots >= 10 and (i + 1) % (opts.reboots // 10) == 0:
                    s = samples[-1]
                    print('%d reboots: fds %d maps %d RssAnon %d KiB' % (
                        i + 1, s['fds'], s['maps'], s['anon_kib']), flush=True)
            alive = backend.proc.alive()
            if alive and backend.control:
                counters = backend.control.counters()
            launch.poweroff()
    finally:
        log.close()
    fails = failures(samples, opts.rss_tolerance, alive)
    if backend.control:
        fails += counter_failures(counters) if counters else ['no back-end counters']
    print_report(opts, samples, fails, time.monotonic() - start, skipped)
    if counters:
        print('back end counters: vu_connects %d, vu_msgs %d, conns_host %d, '
              'conns_closed %d, ring_errors %d' % tuple(counters.get(k, -1) for k in (
                  'vu_connects', 'vu_msgs', 'conns_host', 'conns_closed', 'ring_errors')))
    cells = Cells()
    cells.add({'cell': 'reboots'}, 'back end RssAnon growth', 'KiB',
              samples[-1]['anon_kib'] - samples[min(1, len(samples) - 1)]['anon_kib'], 'lower')
    cells.add({'cell': 'reboots'}, 'echo byte-exact', 'boots',
              sum(s['echo_ok'] for s in samples), 'higher')
    publish(PROG, opts, {'samples': samples, 'counters': counters, 'failures': fails,
                         'not_checked': skipped}, cells)
    return 1 if fails else 0
