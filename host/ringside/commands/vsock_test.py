# SPDX-License-Identifier: MIT
"""vsock-test: the kernel's vsock_test against the guests, both roles.

The kernel's own vsock test suite against ringside and the Linux guests,
case by case, in both roles, on the kernel's vhost-vsock. vsock_test
(tools/testing/vsock/ of Debian's linux-source-6.12, `make vsock-test`)
runs on this host and plays one role while the guest plays the other,
the two in lockstep over vsock_test's control connection, which socat
bridges to a vsock port of the guest. Roles are the guest's:
server (it accepts each case's connections), client (it connects out).
ringside plays its half with its own socket layer (app/vsock_test.c); the
Linux guests (`make linux-guest linux-guest-6.12`) run vsock_test itself.
A run that stops at a failure starts again at the next case, so each case
gets its own cell: pass, fail (with each side's message) or n/a (with the
facility ringside lacks, or what vsock_test could not check). The JSON's
result holds the cells, one per guest, role and case (guest, role, case,
name, result, reason); the status is 1 when any cell failed.

It needs AF_VSOCK to the guests, so the kernel's vhost-vsock under KVM,
and the suite is 6.12's: `ringside nested --kernel 6.12 vsock-test` here
(ringside/vsock_test.py, docs/own-stack.md).
"""

import argparse
import os

import ringside as rr

from .. import measure, vsock_test
from ..cli import LAUNCHER_EPILOG, Parser
from ..images import is_linux, linux_missing
from ..results import add_options, publish

NAME = 'vsock-test'
SUMMARY = "the kernel's vsock_test, case by case, both roles"
GROUP = 'check'
ALIASES = ('vsock-test',)
PROG = vsock_test.PROG


def id_list(text):
    """--skip/--pick: case ids, comma separated."""
    try:
        ids = [int(w) for w in text.split(',') if w.strip()]
    except ValueError:
        ids = []
    if not ids or min(ids) < 0:
        raise argparse.ArgumentTypeError('expected case ids (vsock_test --list), e.g. 3,7, '
                                         'got %r' % text)
    return ids


def build_parser():
    p = Parser(prog=PROG, description=__doc__.split('\n')[0],
               usage='%(prog)s [options] [-- launcher options]', epilog=LAUNCHER_EPILOG)
    measure.add(p, guests='ringside,linux,linux-6.12')
    p.add_argument('--roles', default='server,client', metavar='LIST',
                   help="the guest's roles: server (it accepts), client (it connects)")
    p.add_argument('--list', action='store_true', help='the cases (vsock_test --list), then exit')
    p.add_argument('--skip', type=id_list, default=[], metavar='IDS',
                   help='case ids to leave out, e.g. 8,10')
    p.add_argument('--pick', type=id_list, default=[], metavar='IDS', help='only these case ids')
    add_options(p)
    p.add_argument('launcher_args', nargs='*', help=argparse.SUPPRESS)
    return p


def main(argv):
    p = build_parser()
    opts = p.parse_args(argv)
    opts.argv = argv
    opts.roles = [r.strip() for r in opts.roles.split(',') if r.strip()]
    if not opts.roles or any(r not in vsock_test.ROLES for r in opts.roles) or \
            len(set(opts.roles)) != len(opts.roles):
        p.error('--roles takes server, client or both, got %r' % ','.join(opts.roles))
    if not os.access(vsock_test.VSOCK_TEST, os.X_OK):
        p.error('%s missing: run make vsock-test'
                % os.path.relpath(vsock_test.VSOCK_TEST, rr.REPO))
    cases = vsock_test.list_cases()
    if opts.list:
        for cid, name in cases:
            print('%d\t%s' % (cid, name))
        return 0
    bad = [c for c in opts.skip + opts.pick if c not in dict(cases)]
    if bad:
        p.error('no case %s in vsock_test --list (0..%d)' % (bad[0], len(cases) - 1))
    for w in opts.guests:
        if is_linux(w) and linux_missing(w):
            p.error(linux_missing(w))
    why = vsock_test.why_not_here()
    if why:
        raise SystemExit('%s: %s' % (PROG, why))
    base = rr.parse_args(['--vsock', '--boot', 'elf'] + opts.launcher_args)
    accel = 'kvm' if rr.probe_kvm(base) else 'tcg'
    cells, counters = vsock_test.run(opts, accel, cases)
    version = vsock_test.version()
    print('vsock_test from %s; roles are the guest\'s (server: vsock_test --mode=client here); '
          'accel %s, the kernel\'s vhost-vsock' % (version, accel))
    ran = {c['case'] for c in cells}
    vsock_test.print_table(cells, opts.guests, opts.roles, {c: n for c, n in cases if c in ran})
    for role, c in counters.get('ringside', {}).items():
        print('ringside as %s, its socket layer: %s' % (role, ', '.join(
            '%s %d' % (k, v) for k, v in sorted(c.items()) if v and not k.endswith('bytes'))))
    publish(PROG, opts, {'vsock_test': version, 'accel': accel, 'cells': cells,
                         'counters': counters}, vsock_test.results_cells(cells), accel=accel)
    return 1 if any(c['result'] == 'fail' for c in cells) else 0
