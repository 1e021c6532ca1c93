# SPDX-License-Identifier: MIT
"""ringside vsock-test without a KVM host: how a run's output becomes
cells (which case failed, on which side, which cases are left for the
next run), the cells `compare` reads, and the command's refusals
(AF_VSOCK is never opened here)."""

import os
import subprocess
import sys

import pytest

from conftest import REPO, usage_error
from ringside import vsock_test as vt
from ringside.commands import vsock_test as command

# vsock_test --mode=client here (stdout and stderr in one pipe), the guest
# failing its half of case 9 (its control connection closes: this side
# sees EOF at the next barrier)
HERE_OUT = '''Control socket connected to 127.0.0.1:33391.
0 - SOCK_STREAM connection reset...ok
8 - SOCK_SEQPACKET timeout...skipped
9 - SOCK_SEQPACKET invalid receive buffer...ok
10 - SOCK_STREAM poll() + SO_RCVLOWAT...unexpected EOF on control socket
'''
# the Linux guest's console: vsock_test's stderr lands after the dots
LINUX_TEXT = '''vsocktest server 1238 --peer-port=1240 --skip=8\r
vsocktest listening\r
Control socket listening on 0.0.0.0:31000\r
0 - SOCK_STREAM connection reset...ok\r
8 - SOCK_SEQPACKET timeout...skipped\r
9 - SOCK_SEQPACKET invalid receive buffer...unexpected errno of 'broken_buf': Cannot \
allocate memory\r
'''
# a kernel without SIOCOUTQ for SOCK_SEQPACKET: vsock_test says so and goes on
LINUX_UNTESTED = '''24 - SOCK_STREAM ioctl(SIOCOUTQ) 0 unsent bytes...ok\r
25 - SOCK_SEQPACKET ioctl(SIOCOUTQ) 0 unsent bytes...Test skipped, SIOCOUTQ not supported.\r
ok\r
All tests have been executed. Waiting other peer...ok\r
'''
RINGSIDE_TEXT = '''vsock-test: run as client, cases on port 1240\r
vsock-test: case 0 SOCK_STREAM connection reset: ok\r
vsock-test: case 8 SOCK_SEQPACKET timeout: skipped by the peer\r
vsock-test: case 9 SOCK_SEQPACKET invalid receive buffer: ok\r
vsock-test: case 12 SOCK_STREAM test invalid buffer: n/a: ringside has one address space\r
vsock-test: case 16 SOCK_STREAM SHUT_WR: ok: no signals\r
vsock-test: case 17 SOCK_STREAM SHUT_RD: FAIL: send of 1 bytes returned 1 (bytes), expected \
EPIPE\r
vsock-test: aborted as client: 3 ok, 1 n/a, 1 skipped by the peer, 1 failed\r
'''


def test_the_guests_failure_is_its_case_and_the_rest_waits():
    here = vt.Side.from_vsock_test(HERE_OUT)
    assert here.done == {0: 'ok', 8: 'skipped', 9: 'ok'} and here.failed_in == 10
    assert here.error == 'unexpected EOF on control socket'
    guest = vt.Side.from_vsock_test(LINUX_TEXT)
    assert guest.failed_in == 9
    got = vt.Attempt(here, guest, guest_name='linux').decide([0, 9, 10, 11])
    assert got == {0: ('pass', ''),
                   9: ('fail', "linux: unexpected errno of 'broken_buf': Cannot allocate "
                               "memory")}


def test_both_sides_fail_the_cause_first():
    here = vt.Side.from_vsock_test(HERE_OUT)
    ours = {10: ('FAIL', 'expected "SRVSENT" on the control connection, got "X"')}
    got = vt.Attempt(here, None, ours, 'ringside').decide([10, 11])
    assert got == {10: ('fail', 'ringside: expected "SRVSENT" on the control connection, got '
                                '"X"; vsock_test here: unexpected EOF on control socket')}


def test_ringside_verdicts():
    out = '\n'.join('%d - case...%s' % (i, w) for i, w in
                    ((0, 'ok'), (8, 'skipped'), (9, 'ok'), (12, 'skipped'), (16, 'ok'),
                     (17, 'ok'), (18, '')))
    here = vt.Side.from_vsock_test(out)
    ours = {int(m.group(1)): (m.group(3), m.group(4))
            for m in vt.RINGSIDE_CASE_RE.finditer(RINGSIDE_TEXT)}
    got = vt.Attempt(here, None, ours, 'ringside').decide([0, 9, 12, 16, 17, 18])
    assert got == {0: ('pass', ''), 9: ('pass', ''),
                   12: ('n/a', 'ringside has one address space'),
                   16: ('pass', 'no signals'),
                   17: ('fail', 'ringside: send of 1 bytes returned 1 (bytes), expected EPIPE')}


def test_what_vsock_test_could_not_check_is_not_a_pass():
    here = vt.Side.from_vsock_test('24 - a...ok\n25 - b...ok\n')
    guest = vt.Side.from_vsock_test(LINUX_UNTESTED)
    assert guest.done == {24: 'ok', 25: 'ok'} and guest.failed_in is None
    got = vt.Attempt(here, guest, guest_name='linux').decide([24, 25])
    assert got == {24: ('pass', ''),
                   25: ('n/a', 'linux: Test skipped, SIOCOUTQ not supported.')}


def test_a_run_that_ran_nothing_decides_nothing():
    here = vt.Side.from_vsock_test('Control socket connected to 127.0.0.1:1.\n')
    assert vt.Attempt(here, None, {}, 'ringside').decide([0, 1]) == {}


class FakeConsole:
    def tail(self, n):
        return 'ringside-linux-guest: ready\r\n'


def runner(attempts):
    """A Runner for the Linux guest whose attempts decide `attempts` in turn."""
    r = vt.Runner.__new__(vt.Runner)
    r.which, r.names, r.selected, r.cells, r.counters = 'linux', {0: 'a', 1: 'b'}, [0, 1], [], {}
    r.launch = type('Launch', (), {'console': FakeConsole()})()
    seen = iter(attempts)
    r.attempt = lambda role, todo: next(seen)
    return r


def test_a_run_that_decides_nothing_runs_once_more():
    r = runner([{}, {0: ('pass', ''), 1: ('pass', '')}])
    r.run_role('server')
    assert [(c['case'], c['result']) for c in r.cells] == [(0, 'pass'), (1, 'pass')]


def test_twice_nothing_fails_the_case_and_the_rest_runs():
    r = runner([{}, {}, {1: ('pass', '')}])
    r.run_role('client')
    assert [(c['case'], c['result']) for c in r.cells] == [(0, 'fail'), (1, 'pass')]
    assert r.cells[0]['reason'] == ('two runs from this case decided nothing; the guest said: '
                                    'ringside-linux-guest: ready')


def test_table(capsys):
    rows = (('server', 0, 'a', 'pass', ''), ('client', 0, 'a', 'pass', ''),
            ('server', 9, 'b', 'n/a', 'no EFAULT'),
            ('client', 9, 'b', 'fail', 'vsock_test here: EOF'))
    cells = [{'guest': 'ringside', 'role': r, 'case': c, 'name': n, 'result': res,
              'reason': why} for r, c, n, res, why in rows]
    vt.print_table(cells, ['ringside'], ['server', 'client'], {0: 'a', 9: 'b'})
    out = capsys.readouterr().out
    assert 'ringside as server: 1 pass, 0 fail, 1 n/a of 2' in out
    assert 'ringside as client: 1 pass, 1 fail, 0 n/a of 2' in out
    assert '9 ringside client fail: vsock_test here: EOF' in out


def test_compare_cells():
    """One cell per guest, role and case that ran: 1 for a pass, 0 for a
    failure; n/a is no sample (compare has nothing to weigh)."""
    cells = [{'guest': 'ringside', 'role': 'server', 'case': c, 'name': 'x', 'result': r,
              'reason': ''} for c, r in ((0, 'pass'), (9, 'n/a'), (10, 'fail'))]
    got = {(c['config']['case'], c['metric']): c['samples'] for c in vt.results_cells(cells).list()}
    assert got == {(0, 'passed'): [1], (10, 'passed'): [0]}
    for c in vt.results_cells(cells).list():
        assert c['config'] == {'cell': 'vsock-test', 'guest': 'ringside', 'role': 'server',
                               'case': c['config']['case']}


def test_options_refused(capsys):
    for argv, words in ((['--roles', 'server,peer'], '--roles takes server, client'),
                        (['--skip', 'x'], 'expected case ids'),
                        (['--guests', 'windows'], 'expected some of')):
        err = usage_error(capsys, command.main, argv)
        assert words in err and err.count('\n') == 1, err


@pytest.mark.skipif(os.path.exists('/dev/vhost-vsock'), reason='a KVM host: it would run')
def test_refused_without_the_kernels_vhost_vsock():
    out = subprocess.run([sys.executable, os.path.join(REPO, 'ringside'), 'vsock-test',
                          '--guests', 'ringside'], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and out.stdout == '', out.stderr
    if os.access(vt.VSOCK_TEST, os.X_OK):
        assert out.stderr.startswith('ringside vsock-test: no /dev/vhost-vsock'), out.stderr
    else:
        assert 'missing: run make vsock-test' in out.stderr, out.stderr
    assert out.stderr.count('\n') == 1, out.stderr
