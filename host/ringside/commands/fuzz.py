# SPDX-License-Identifier: MIT
"""fuzz: the guest-side virtio fuzzer against one back end, with oracles.

ringside's `fuzz SEED` draws steps from a seed (vsock headers, descriptor
chains, indirect tables, ring indices, virtio-net headers and frames, the
transport) and runs them against its devices a batch at a time; after
every batch the host checks its oracles: the back end or QEMU exited, the
host kernel complained (KVM), the guest faulted, the device fell silent
or kept buffers after well-formed steps, did not serve after a reset, the
bystander connection lost a byte, the back end's memory or descriptors
grew. Guests boot one after the other; a failure is replayed on a fresh
guest and shrunk to a console line (ringside/fuzz.py, docs/fuzz.md).
The seed and a digest of every step run are printed: two runs of one
seed show the same. Failures, their reproducers and the versions are
kept under build/fuzz/campaign-BACKEND-DATE/.
"""

import argparse
import datetime
import os
import random
import sys

from .. import fuzz, fuzz_steps, measure
from ..cli import Parser, positive_int
from ..fuzz_backends import backends, custom
from ..images import REPO
from ..results import Cells, add_options, publish

NAME = 'fuzz'
SUMMARY = 'the guest-side virtio fuzzer against a back end'
GROUP = 'check'
PROG = 'ringside fuzz'


def seed_value(text):
    try:
        value = int(text, 0)
    except ValueError:
        value = 0
    if not 0 < value < 1 << 64:
        raise argparse.ArgumentTypeError('expected a number 1..2^64-1, got %r' % text)
    return value


def parse_args(argv):
    p = Parser(prog=PROG, description=__doc__.split('\n')[0],
               usage='%(prog)s --backend NAME|CMD [-t S | --steps N] [--seed S] [options]')
    p.add_argument('--backend', required=True, metavar='NAME|CMD',
                   help='%s, or a vhost-user-vsock back end command of your own '
                        '({socket} {uds} {cid}); kernel and net-vhost need KVM '
                        '(ringside nested fuzz ...)' % ', '.join(sorted(backends())))
    measure.add(p, time=600.0)
    p.add_argument('--steps', type=positive_int, metavar='N',
                   help='run this many steps instead of for a time')
    p.add_argument('--seed', type=seed_value, metavar='S',
                   help='the seed (default: a random one, printed)')
    p.add_argument('--rings', default='split,packed', metavar='LIST',
                   help='split,packed (those the back end has)')
    p.add_argument('--targets', metavar='LIST', more=True,
                   help='vsock,net,transport: what the steps drive (all the back end has)')
    p.add_argument('--kinds', metavar='LIST', more=True,
                   help='only these kinds of steps (hd,cr,...), the others skipped; a '
                        'target none of them belongs to runs all of its own')
    p.add_argument('--minimise-time', type=positive_int, default=600, metavar='S', more=True,
                   help='at most S seconds shrinking one failure (600)')
    p.add_argument('--no-minimise', action='store_true', more=True,
                   help='keep failing batches as they are (no replay)')
    p.add_argument('--replay', metavar='FILE',
                   help='run a reproducer (its console lines: a reproducer.txt) on a '
                        'fresh guest per ring instead: does it fail here too?')
    p.add_argument('-v', '--verbose', action='count', default=0,
                   help='a line per failure and replay (-vv: per batch)')
    add_options(p)
    opts = p.parse_args(argv)
    opts.argv = argv
    if opts.steps is not None and any(a in ('-t', '--time') or a.startswith('--time=')
                                      for a in argv):
        p.error('--time and --steps exclude each other')
    opts.rings = [r for r in opts.rings.split(',') if r]
    if not opts.rings or any(r not in ('split', 'packed') for r in opts.rings):
        p.error('--rings takes split,packed')
    b = opts.backend_obj = backends().get(opts.backend) or custom(opts.backend)
    if b.name != 'custom' and not any(r in b.rings for r in opts.rings):
        p.error('--backend %s has %s rings only' % (b.name, ','.join(b.rings)))
    why = b.why_not_here()
    if why:
        p.error('--backend %s: %s' % (opts.backend, why))
    opts.targets = [t for t in (opts.targets or ','.join(b.targets)).split(',') if t]
    if not opts.targets or any(t not in b.targets for t in opts.targets):
        p.error('--targets takes %s for --backend %s' % (','.join(b.targets), b.name))
    if opts.replay:
        try:
            with open(opts.replay) as f:
                opts.replay_lines = [x.strip() for x in f if x.strip()]
            fuzz.plan_of_lines(opts.replay_lines)
        except (OSError, ValueError) as e:
            p.error('--replay %s: %s' % (opts.replay, e))
    opts.kinds = [k for k in (opts.kinds or '').split(',') if k]
    known = {k for t in fuzz_steps.KINDS.values() for k in t}
    if any(k not in known for k in opts.kinds):
        p.error('--kinds takes %s' % ','.join(sorted(known)))
    if not os.path.exists(fuzz_steps.GEN):
        p.error('%s missing: run make' % os.path.relpath(fuzz_steps.GEN, REPO))
    return opts


def replay(opts):
    """--replay: the reproducer on each ring; 1 if it failed on any."""
    b = opts.backend_obj
    log_dir = os.path.join(fuzz.SAVE_DIR, 'scratch', 'logs')
    failed = False
    for ring in [r for r in opts.rings if r in b.rings]:
        f = fuzz.replay_file(b, ring, opts.replay_lines, log_dir, opts.verbose)
        failed |= f is not None
        verdict = 'fails: %s' % f if f else 'passes'
        print('%s: backend %s, %s ring: %s' % (PROG, b.name, ring, verdict), flush=True)
    return 1 if failed else 0


def main(argv):
    opts = parse_args(argv)
    if opts.replay:
        return replay(opts)
    seed = opts.seed or random.SystemRandom().randrange(1, 1 << 64)
    b = opts.backend_obj
    save_dir = None
    if not opts.no_save:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y%m%dT%H%M%SZ')
        save_dir = os.path.join(fuzz.SAVE_DIR, 'campaign-%s-%s' % (b.name, stamp))
        os.makedirs(save_dir, exist_ok=True)
    print('%s: backend %s, seed %#x, %s' % (PROG, b.name, seed, '%d steps' % opts.steps
                                            if opts.steps else '%g s' % opts.time), flush=True)
    c = fuzz.Campaign(b, seed, opts, save_dir)
    try:
        c.run()
    finally:
        c.save()
    fuzz.print_tables(c)
    s = c.summary()
    cells = Cells()
    config = {'cell': 'fuzz', 'backend': b.name, 'seed': s['seed']}
    cells.add(config, 'steps per second', 'steps/s', s['steps_per_s'], 'higher')
    cells.add(config, 'distinct failures', 'failures', s['distinct'])
    publish(PROG, opts, s, cells, accel=b.accel)
    if save_dir:
        print('%s: failures and logs in %s' % (PROG, os.path.relpath(save_dir, REPO)),
              file=sys.stderr)
    return 1 if c.found else 0
