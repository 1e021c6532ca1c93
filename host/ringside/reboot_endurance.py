# SPDX-License-Identifier: MIT
"""reboot-endurance: one back end, the guest rebooted again and again.

Boots the appliance with our vhost-user back end (the launcher's --vsock;
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
as in host/soak: the first reset takes the back end through the ring
stop and re-setup paths once, which touches a few hundred KiB of memory
for good; a leak grows with every reboot after it); the back end's counters at
exit show one vhost-user session (QEMU never reconnected: the reset went
through the same session), no ring errors, every host connection closed.
Exits 1 otherwise, or if any echo came back wrong or the back end exited.
"""

import argparse
import hashlib
import os
import random
import time

import ringside as rr

from .benchlib import wait_vsock_up
from .cli import Parser, nonneg_int, positive_int, size
from .guest_stats import cpus_online
from .images import REPO
from .soak import COUNTER_RE, IO_TIMEOUT, TunedChildren, backend_of, echo_stream
from .results import add_options, publish

PROG = 'reboot-endurance'


def parse_args(argv):
    p = Parser(prog=PROG, description='Reboot the guest N times against one vhost-user '
               'back end; echo checked each boot, back end fds and memory flat.',
               epilog='Launcher options after "--" go to host/ringside-run.')
    p.add_argument('--reboots', type=positive_int, default=100, help='guest reboots (100)')
    p.add_argument('--size', type=size, default=65536,
                   help='echo bytes per boot (65536)')
    p.add_argument('--seed', type=int, default=1, help='the echo bytes (1)')
    p.add_argument('--rss-tolerance', type=nonneg_int, default=256, metavar='KIB',
                   help='back end RssAnon growth allowed over the first reboot (256 KiB)')
    p.add_argument('--boot', choices=['iso', 'elf'], default='elf')
    add_options(p)
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.reboots <= 0 or opts.size <= 0 or opts.rss_tolerance < 0:
        p.error('--reboots and --size must be positive, --rss-tolerance not negative')
    return opts


def boot_check(launch, backend, rng, size):
    """Echo on the freshly booted guest; then the back end's sample, once
    it has closed the echo connection."""
    uds = launch.opts.vsock_uds
    wait_vsock_up(uds, timeout=IO_TIMEOUT, prog=PROG)
    data = rng.randbytes(size)
    ok = echo_stream(uds, data)
    s = backend.settled([uds])
    s['cpus'] = cpus_online(launch.console, IO_TIMEOUT)
    s['echo_ok'] = ok
    s['sha256'] = hashlib.sha256(data).hexdigest()[:16]
    return s


def reboot(launch, timeout):
    """`reboot` on the console; returns once the guest is ready again."""
    launch.console.send('reboot\r')
    launch.console.wait_ready(timeout)


def exit_counters(path):
    """The back end's counters as it printed them last, at exit (SIGUSR1
    dumps before them in the same log have the same names)."""
    with open(path) as f:
        text = f.read()
    return {k: int(v) for k, v in COUNTER_RE.findall(text)}


def counter_failures(c):
    """One vhost-user session through every reboot, its rings sound, and
    every host connection closed."""
    if 'vu_connects' not in c:
        return ['no back-end counters at exit']
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


def print_report(opts, samples, fails, secs):
    first, last = samples[0], samples[-1]
    print('reboot-endurance: %d reboots in %.0f s, one back end, %d B echo per boot'
          % (len(samples) - 1, secs, opts.size))
    print('echo byte-exact on %d of %d boots'
          % (sum(s['echo_ok'] for s in samples), len(samples)))
    print('back end after boot 1 / max / after the last: VmRSS %d / %d / %d KiB, '
          'RssAnon %d / %d / %d KiB, fds %d / %d / %d, maps %d / %d / %d' % (
              first['rss_kib'], max(s['rss_kib'] for s in samples), last['rss_kib'],
              first['anon_kib'], max(s['anon_kib'] for s in samples), last['anon_kib'],
              first['fds'], max(s['fds'] for s in samples), last['fds'],
              first['maps'], max(s['maps'] for s in samples), last['maps']))
    for f in fails:
        print('FAIL: %s' % f)
    print('reboot-endurance: %s' % ('FAIL' if fails else 'ok'))


def main(argv):
    opts = parse_args(argv)
    lopts = rr.parse_args(['--vsock', '--boot', opts.boot, '--accel', 'auto']
                          + opts.launcher_args)
    if lopts.no_reboot:
        raise SystemExit('%s: --no-reboot would make the first reboot end QEMU' % PROG)
    accel = rr.choose_accel(lopts)
    if rr.vsock_kernel(lopts, accel):
        raise SystemExit('%s: needs the vhost-user back end (--vsock-transport vhost-user)'
                         % PROG)
    rng = random.Random(opts.seed)
    os.makedirs(os.path.join(REPO, 'build'), exist_ok=True)
    log_path = os.path.join(REPO, 'build', 'reboot-endurance-qemu.log')
    log = open(log_path, 'w')
    samples = []
    start = time.monotonic()
    try:
        with rr.Launch(lopts, accel, children=TunedChildren(lopts.verbose),
                       qemu_stderr=log) as launch:
            backend = backend_of(launch, log_path)
            launch.wait_ready()
            samples.append(boot_check(launch, backend, rng, opts.size))
            for i in range(opts.reboots):
                reboot(launch, lopts.timeout)
                samples.append(boot_check(launch, backend, rng, opts.size))
                if opts.reboots >= 10 and (i + 1) % (opts.reboots // 10) == 0:
                    s = samples[-1]
                    print('%d reboots: fds %d maps %d RssAnon %d KiB' % (
                        i + 1, s['fds'], s['maps'], s['anon_kib']), flush=True)
            alive = backend.alive()
            launch.poweroff()
    finally:
        log.close()
    counters = exit_counters(log_path)
    fails = failures(samples, opts.rss_tolerance, alive) + counter_failures(counters)
    print_report(opts, samples, fails, time.monotonic() - start)
    print('back end counters at exit: vu_connects %d, vu_msgs %d, conns_host %d, '
          'conns_closed %d, ring_errors %d' % tuple(counters.get(k, -1) for k in (
              'vu_connects', 'vu_msgs', 'conns_host', 'conns_closed', 'ring_errors')))
    publish(PROG, opts, {'samples': samples, 'counters': counters, 'failures': fails})
    return 1 if fails else 0
