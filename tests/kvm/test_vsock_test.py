# SPDX-License-Identifier: MIT
"""The kernel's own vsock test suite (make vsock-test) against ringside and
the Linux guests, every case in both roles (./ringside vsock-test), on a
6.12 host: the suite is 6.12's, and a 6.1 host fails its own half of
several cases whatever the guest (docs/results/vsock-test.md).

ringside must pass every case whose half it plays and say n/a, with the
facility it lacks, for exactly the others; each Linux guest must pass
every case it passed when this was written (the 6.1 guest fails some of
its own halves: its kernel predates what they check)."""

import json
import os

import pytest

from ringside.images import linux_missing
from ringside.vsock_test import VSOCK_TEST
from ringside_qemu import run_command

# tests/qemu/test_nested.py boots this file's L1 on Debian's 6.12 (ringside nested --kernel)
L1_KERNEL = '6.12'
GUESTS = ('ringside', 'linux', 'linux-6.12')
CASES = range(26)
# ringside's halves it cannot play, per role of the guest (app/vsock_test_cases.c)
RINGSIDE_NA = {'server': {9}, 'client': {12, 13, 18, 19, 20, 24, 25}}
# what the Linux 6.1 guest's own kernel fails, and the one check its
# vsock_test skips there (docs/results/vsock-test.md)
LINUX_6_1_FAILS = {'server': {9, 15, 22}, 'client': {11, 12, 13, 16, 17, 18, 19}}
LINUX_6_1_NA = {'server': set(), 'client': {24, 25}}


@pytest.fixture(scope='module')
def cells(tmp_path_factory):
    if not os.uname().release.startswith(L1_KERNEL):
        pytest.skip('a %s host is needed (host/nested --kernel %s), this is %s'
                    % (L1_KERNEL, L1_KERNEL, os.uname().release))
    assert os.access(VSOCK_TEST, os.X_OK), '%s missing: run make vsock-test' % VSOCK_TEST
    for g in GUESTS[1:]:
        assert not linux_missing(g), linux_missing(g)
    path = str(tmp_path_factory.mktemp('vsock-test') / 'cells.json')
    out = run_command('vsock-test', '--guests', ','.join(GUESTS), '--json', path, '--no-save',
                      timeout=1500)
    assert os.path.exists(path), out.stderr[-3000:]
    with open(path) as f:
        doc = json.load(f)
    got = {(c['guest'], c['role'], c['case']): c for c in doc['result']['cells']}
    assert set(got) == {(g, r, c) for g in GUESTS for r in ('server', 'client') for c in CASES}
    for c in doc['result']['cells']:
        assert c['result'] in ('pass', 'fail', 'n/a') and isinstance(c['reason'], str), c
    got['counters'] = doc['result']['counters']['ringside']
    return got


def failures(cells, guest, role, allowed=()):
    return ['%d %s: %s' % (c, cells[(guest, role, c)]['name'], cells[(guest, role, c)]['reason'])
            for c in CASES if cells[(guest, role, c)]['result'] == 'fail' and c not in allowed]


@pytest.mark.parametrize('role', ['server', 'client'])
def test_ringside_passes_every_case_it_plays(cells, role):
    assert not failures(cells, 'ringside', role)
    na = {c for c in CASES if cells[('ringside', role, c)]['result'] == 'n/a'}
    assert na == RINGSIDE_NA[role]
    for c in na:
        assert cells[('ringside', role, c)]['reason'].startswith('ringside '), c
    assert len(CASES) - len(na) > 18


# what a correct peer never makes ringside's socket layer count: data past
# its credit, ops out of place, a wrong type, a full backlog or table, a
# handshake or a close that never finished
NEVER = ('drop_rx_over_credit', 'drop_rx_bad_op', 'drop_rx_bad_type', 'drop_backlog_full',
         'drop_request_no_socket', 'drop_rx_bad_dst_cid', 'drop_rx_bad_src_cid',
         'connect_timeouts', 'close_timeouts')


@pytest.mark.parametrize('role', ['server', 'client'])
def test_ringside_counted_nothing_wrong(cells, role):
    counted = cells['counters'][role]
    assert counted['rx_pkts'] > 0 and counted['tx_pkts'] > 0, counted
    assert {k: counted[k] for k in NEVER} == dict.fromkeys(NEVER, 0), counted


@pytest.mark.parametrize('role', ['server', 'client'])
@pytest.mark.parametrize('guest', ['linux', 'linux-6.12'])
def test_the_linux_guests_pass_what_they_passed(cells, guest, role):
    allowed = LINUX_6_1_FAILS[role] if guest == 'linux' else set()
    assert not failures(cells, guest, role, allowed)
    na = {c for c in CASES if cells[(guest, role, c)]['result'] == 'n/a'}
    assert na == (LINUX_6_1_NA[role] if guest == 'linux' else set())
