# SPDX-License-Identifier: MIT
"""The kernel's own vsock test suite against ringside and the Linux
guests, case by case, in both roles, on the kernel's vhost-vsock: what
`ringside vsock-test` (ringside/commands/vsock_test.py) runs.

vsock_test (tools/testing/vsock/ of Debian's linux-source-6.12, `make
vsock-test`) runs on this host and plays one role while the guest plays
the other; the two step through the cases in lockstep over a TCP control
connection. A guest has no TCP to the host, so that connection goes over
a vsock port of the guest, bridged here by socat (TCP to AF_VSOCK).

Roles are the guest's: `server`, the guest accepts each case's connections
(vsock_test --mode=client here, connecting through socat to the guest's
control port); `client`, the guest connects out (vsock_test --mode=server
here, socat from the host's vsock control port to it). ringside plays its
half with its own socket layer (the `vsock-test` peer, app/vsock_test.c:
it listens for the control connection on vsock_test_port, and `vsock-test
client PORT` connects out); the Linux guests (6.1 and 6.12, `make
linux-guest linux-guest-6.12`) run vsock_test itself, its control bridged
by the guest's `vsocktest` command (host/linux-guest/vsock_test_bridge.c).

vsock_test stops at the first failure; a run that stopped is run again
from the next case (the cases done passed as --skip), so every case gets
a result of its own: pass, fail (with the failing side's own message), or
n/a (a half ringside cannot play, with the facility it lacks; or a case
--skip/--pick left out is not in the table at all). The table and the
JSON (the result's cells: one per guest, role and case, with guest,
role, case, name, result and reason) go where every command's results go.

Needs AF_VSOCK to a guest, so the kernel's vhost-vsock under KVM: a KVM
host, or `ringside nested --kernel 6.12 vsock-test` here.
"""

import os
import re
import socket
import subprocess
import sys
import threading
import time

import ringside as rr

from .benchlib import wait_vsock_cid
from .guest_stats import guest_stats
from .images import is_linux, repo_path
from .linux_guest import linux_launch_args
from .machine import Launch
from .process import Children
from .results import Cells

PROG = 'ringside vsock-test'
LOG_DIR = repo_path('build', 'vsock-test')   # per guest: its console, vsock_test's output
VSOCK_TEST = repo_path('build', 'vsock-tools', 'vsock_test')
VSOCK_TEST_VERSION = repo_path('build', 'vsock-tools', 'VERSION')
CONTROL_VPORT = 1238   # the guest's control port: ringside's vsock_test_port, the bridge's
PEER_PORT = 1240       # the cases' port (and the next): ringside's vsock_test_peer_port
ROLES = ('server', 'client')
RESULTS = ('pass', 'fail', 'n/a')
IDLE_LIMIT = 45   # s without a line from either side: stuck (timed waits in vsock_test: 10 s)
LISTEN_TIMEOUT = 60

# run_tests(): "ID - NAME..." then "ok" or "skipped"; a case that fails
# prints its error (stderr) and exits, so on a console the error follows
# the dots on the same line
CASE_RE = re.compile(r'^(\d+) - ([^\r\n]*?)\.\.\.([^\r\n]*)', re.M)
RINGSIDE_CASE_RE = re.compile(
    r'^vsock-test: case (\d+) (.*?): (ok|n/a|skipped by the peer|FAIL)(?:: ([^\r\n]*))?\r?$', re.M)
RINGSIDE_END_RE = re.compile(r'vsock-test: (done|aborted) as (server|client)')
# a side that only saw the other stop: its message is not the cause
CONTROL_GONE_RE = re.compile(r'EOF on control socket|closed the control connection|'
                             r'control connection was reset')
LINUX_END_RE = re.compile(r'vsocktest (exit (\d+)|error: [^\r\n]*)\r?\n')


class RunError(Exception):
    """A run that could not start: the guest, socat or vsock_test said why."""


def list_cases():
    """[(id, name)] as this vsock_test's --list prints them (it exits 1)."""
    out = subprocess.run([VSOCK_TEST, '--list'], capture_output=True, text=True, timeout=30)
    found = re.finditer(r'^(\d+)\t(.+)$', out.stdout, re.M)
    cases = [(int(m.group(1)), m.group(2)) for m in found]
    if not cases:
        raise SystemExit('%s: %s --list printed no cases: %s' % (PROG, VSOCK_TEST,
                                                                 (out.stderr + out.stdout)[-300:]))
    return cases


def free_tcp_port():
    """A loopback TCP port nobody holds now, for a control connection."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def last_words(text, n=3):
    """The last lines someone printed, on one line (a cell's reason)."""
    lines = [w.strip() for w in text.replace('\r', '').split('\n') if w.strip()]
    return '; '.join(lines[-n:])


class Watched:
    """A child whose output (stdout and stderr in one pipe, in the order it
    wrote them) is read as it comes, so a wait can look for a line and see
    it go quiet."""

    def __init__(self, children, name, argv):
        self.children, self.name = children, name
        self.proc = children.spawn(name, argv, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   text=True)
        self.text = ''
        self.last = time.monotonic()   # when it last printed
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in iter(self.proc.stdout.readline, ''):
            with self._cond:
                self.text += line
                self.last = time.monotonic()
                self._cond.notify_all()

    def wait_for(self, text, timeout=LISTEN_TIMEOUT):
        """Until it printed `text`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while text not in self.text:
                left = deadline - time.monotonic()
                if self.proc.poll() is not None or left <= 0:
                    raise RunError('%s %s before it said %r: %s' % (
                        self.name, 'exited' if self.proc.poll() is not None else
                        'waited %d s' % timeout, text, last_words(self.text)))
                self._cond.wait(min(left, 1.0))

    def wait_exit(self, activity):
        """Until it exits, stopped once neither it nor the other side (a
        number `activity()` that grows as the guest prints) moved for
        IDLE_LIMIT s: a case that waits forever (poll() without a timeout)."""
        seen, since = activity(), time.monotonic()
        while self.proc.poll() is None:
            time.sleep(0.5)
            now = activity()
            if now != seen:
                seen, since = now, time.monotonic()
            if time.monotonic() - max(since, self.last) > IDLE_LIMIT:
                self.children.stop(self.proc)
                self._reader.join(5)
                self.text += 'stopped: nothing from either side for %d s\n' % IDLE_LIMIT
        self._reader.join(5)


class Side:
    """What one end's vsock_test printed in one attempt (its stdout and
    stderr as they came, on a pipe or a console): the cases it finished
    (id -> 'ok' or 'skipped'), what it said about one on the way (id ->
    message, e.g. "Test skipped, SIOCOUTQ not supported."), the case it
    was in when it stopped and why."""

    def __init__(self):
        self.done, self.said, self.failed_in, self.error = {}, {}, None, ''

    @classmethod
    def from_vsock_test(cls, text):
        s = cls()
        text = text.replace('\r', '')
        for m in CASE_RE.finditer(text):
            cid, rest = int(m.group(1)), m.group(3).strip()
            after = text[m.end():].lstrip('\n').split('\n', 1)[0].strip()
            if rest in ('ok', 'skipped'):
                s.done[cid] = rest
            elif rest and after in ('ok', 'skipped'):
                s.done[cid], s.said[cid] = after, rest
            else:
                s.failed_in = cid
                s.error = last_words(text[m.start(3):]) or 'it stopped'
        return s


class Attempt:
    """One vsock_test run from its first case not yet decided, both sides
    read: which cases it decided and how. `ours` is the guest's own report
    for ringside: id -> (word, reason)."""

    def __init__(self, here, guest, ours=None, guest_name='guest'):
        self.here, self.guest, self.ours = here, guest, ours or {}
        self.guest_name = guest_name

    def decide(self, todo):
        """{id: (result, reason)} for the cases of `todo` this attempt settled."""
        out = {}
        guest_failed = self._guest_failed()
        failed = [c for c in (guest_failed, self.here.failed_in) if c is not None]
        first = min(failed) if failed else None
        for cid in todo:
            word, why = self.ours.get(cid, (None, None))
            if first is not None and cid > first:
                break   # after the first failure: never ran, or ran against a gone peer
            if cid == first:
                out[cid] = ('fail', self._why_failed(cid, guest_failed))
            elif word == 'n/a':
                out[cid] = ('n/a', why)
            elif self.untested(cid):
                out[cid] = ('n/a', self.untested(cid))
            elif self.here.done.get(cid) == 'ok':
                out[cid] = ('pass', why or '')
        return out

    def untested(self, cid):
        """vsock_test's own "Test skipped": a check its kernel could not make."""
        for who, side in (('vsock_test here', self.here), (self.guest_name, self.guest)):
            if side and 'skipped' in side.said.get(cid, ''):
                return '%s: %s' % (who, side.said[cid])
        return None

    def _why_failed(self, cid, guest_failed):
        """Each side's message, the one that saw the fault first (not the
        control connection closing under it) first."""
        says = []
        if cid == self.here.failed_in:
            says.append('vsock_test here: %s' % self.here.error)
        if cid == guest_failed:
            says.append('%s: %s' % (self.guest_name, self._guest_error(cid)))
        says.sort(key=lambda s: bool(CONTROL_GONE_RE.search(s)))
        return '; '.join(says)

    def _guest_failed(self):
        for cid, (word, _) in sorted(self.ours.items()):
            if word == 'FAIL':
                return cid
        if self.guest is not None and self.guest.failed_in is not None:
            return self.guest.failed_in
        return None

    def _guest_error(self, cid):
        word, why = self.ours.get(cid, (None, None))
        if word == 'FAIL':
            return why
        return self.guest.error


class Runner:
    """Boots one guest and runs both roles against it; cells in self.cells."""

    def __init__(self, which, opts, accel, cases):
        self.which, self.opts, self.accel = which, opts, accel
        self.names = dict(cases)
        self.selected = [c for c, _ in cases if c not in opts.skip
                         and (not opts.pick or c in opts.pick)]
        self.children = Children()
        self.cells = []
        self.counters = {}   # ringside: role -> its vsock counters' change over the role

    def boot_args(self):
        args = ['--boot', 'elf', '--vsock', '--accel', self.accel,
                '--vsock-transport', 'kernel']
        if is_linux(self.which):
            args += linux_launch_args(self.which)
        return rr.parse_args(args + self.opts.launcher_args)

    def run(self):
        lopts = self.boot_args()
        linux = is_linux(self.which)
        os.makedirs(LOG_DIR, exist_ok=True)
        self.log_path = os.path.join(LOG_DIR, self.which)
        open(self.log_path + '.vsock_test.log', 'w').close()
        with open(self.log_path + '.stderr.log', 'wb') as err, \
                open(self.log_path + '.serial.log', 'wb') as ser, \
                Launch(lopts, self.accel, qemu_stderr=err, log=ser) as launch:
            launch.wait_ready(linux=linux)
            self.launch, self.cid = launch, lopts.vsock_cid
            wait_vsock_cid(self.cid, prog=PROG)
            if not linux:
                self.check_case_table()
            try:
                for role in self.opts.roles:
                    self.run_role(role)
            finally:
                self.children.stop_all()
        return self.cells

    def check_case_table(self):
        """ringside's cases must be vsock_test's: the same ids, names, order."""
        out = self.launch.console.command('vsock-test list', 60)
        theirs = {int(m.group(1)): m.group(2) for m in
                  re.finditer(r'^(\d+)\t([^\t]+)\t', out, re.M)}
        if theirs != self.names:
            raise SystemExit('%s: ringside\'s vsock-test cases differ from %s --list: %r'
                             % (PROG, VSOCK_TEST, sorted(set(theirs.items())
                                                         ^ set(self.names.items()))))

    def run_role(self, role):
        todo = list(self.selected)
        before = self.vsock_counters()
        again = False
        while todo:
            print('%s: %s as %s, from case %d (%d to go)'
                  % (PROG, self.which, role, todo[0], len(todo)), file=sys.stderr, flush=True)
            try:
                decided = self.attempt(role, todo)
            except RunError as e:
                raise SystemExit('%s: %s as %s: %s; the guest said: %s'
                                 % (PROG, self.which, role, e,
                                    last_words(self.launch.console.tail(600))))
            if not decided and not again:
                # neither side said a word about any case: the guest went
                # away under the run (a reboot), or the bridge did; once
                print('%s: %s as %s: the run from case %d decided nothing, once more'
                      % (PROG, self.which, role, todo[0]), file=sys.stderr, flush=True)
                again = True
                continue
            if not decided:
                decided = {todo[0]: ('fail', 'two runs from this case decided nothing; the '
                                     'guest said: %s'
                                     % last_words(self.launch.console.tail(600)))}
            again = False
            for cid, (result, reason) in decided.items():
                self.cells.append({'guest': self.which, 'role': role, 'case': cid,
                                   'name': self.names[cid], 'result': result,
                                   'reason': reason})
            todo = [c for c in todo if c not in decided]
        if before is not None:
            after = self.vsock_counters()
            self.counters[role] = {k: after[k] - before[k] for k in after}

    def vsock_counters(self):
        """ringside's socket layer counters (`stats json vsock`), flat; None
        for a Linux guest."""
        if is_linux(self.which):
            return None
        v = guest_stats(self.launch.console, 60, 'vsock')['vsock']
        flat = {k: x for k, x in v.items() if not isinstance(x, dict)}
        for group in ('drop', 'credit'):
            flat.update(('%s_%s' % (group, k), x) for k, x in v.get(group, {}).items())
        return flat

    def skips(self, todo):
        return ['--skip=%d' % c for c in sorted(self.names) if c not in todo]

    def vsock_test_argv(self, mode, tcp_port, todo):
        argv = [VSOCK_TEST, '--mode=' + mode, '--control-port=%d' % tcp_port,
                '--peer-cid=%d' % self.cid, '--peer-port=%d' % PEER_PORT]
        if mode == 'client':
            argv.insert(2, '--control-host=127.0.0.1')
        return argv + self.skips(todo)

    def attempt(self, role, todo):
        console = self.launch.console
        start = len(console.text)
        tcp_port = free_tcp_port()
        # vsock_test here plays the other role
        mode = 'client' if role == 'server' else 'server'
        try:
            if role == 'server':
                # vsock_test --mode=client connects once: the bridge listens first
                self.guest_serves(todo)
                self.socat(['TCP-LISTEN:%d,bind=127.0.0.1,reuseaddr' % tcp_port,
                            'VSOCK-CONNECT:%d:%d' % (self.cid, CONTROL_VPORT)])
                here = self.vsock_test(mode, tcp_port, todo)
            else:
                here = self.vsock_test(mode, tcp_port, todo)
                here.wait_for('Control socket listening')
                self.socat(['VSOCK-LISTEN:%d,reuseaddr' % CONTROL_VPORT,
                            'TCP:127.0.0.1:%d' % tcp_port])
                self.guest_connects(todo)
            here.wait_exit(lambda: len(console.text))
            self.log('vsock_test --mode=%s, from case %d' % (mode, todo[0]), here)
            if not CASE_RE.search(here.text):
                raise RunError('vsock_test here (--mode=%s) ran no case: %s'
                               % (mode, last_words(here.text)))
            guest_text = self.wait_guest_end(start)
        finally:
            self.children.stop_all()
        return self.decide(Side.from_vsock_test(here.text), guest_text, todo)

    def vsock_test(self, mode, tcp_port, todo):
        return Watched(self.children, 'vsock_test', self.vsock_test_argv(mode, tcp_port, todo))

    def guest_serves(self, todo):
        if is_linux(self.which):
            self.launch.console.send('vsocktest server %d --peer-port=%d %s\n'
                                     % (CONTROL_VPORT, PEER_PORT, ' '.join(self.skips(todo))))
            m = self.launch.console.wait_for(r'vsocktest (listening|error: [^\r\n]*)\r?\n',
                                             LISTEN_TIMEOUT, what='the guest\'s vsocktest')
            if m.group(1) != 'listening':
                raise RunError('the guest\'s vsocktest: %s' % m.group(1))

    def guest_connects(self, todo):
        if is_linux(self.which):
            self.launch.console.send('vsocktest client %d --peer-port=%d %s\n'
                                     % (CONTROL_VPORT, PEER_PORT, ' '.join(self.skips(todo))))
        else:
            out = self.launch.console.command('vsock-test client %d' % CONTROL_VPORT, 60)
            if 'error' in out:
                raise RunError('ringside: %s' % out)

    def socat(self, addresses):
        """socat between the two, one connection; back once it listens."""
        Watched(self.children, 'socat', ['socat', '-d', '-d'] + addresses).wait_for(
                'listening on')

    def log(self, what, proc):
        """What vsock_test here printed, beside the guest's console log."""
        with open(self.log_path + '.vsock_test.log', 'a') as f:
            f.write('== %s: exit %s\n%s\n' % (what, proc.proc.returncode, proc.text))

    def wait_guest_end(self, start):
        """The guest's part of the console since `start`, once its run ended."""
        end = RINGSIDE_END_RE if not is_linux(self.which) else LINUX_END_RE
        console = self.launch.console
        console.pos = max(console.pos, start)   # not an earlier run's end line
        try:
            console.wait_for(end, IDLE_LIMIT, what='the end of the guest\'s run')
        except rr.GuestTimeout as e:
            print('%s: %s' % (PROG, e), file=sys.stderr)
        return self.launch.console.text[start:]

    def decide(self, here, guest_text, todo):
        if is_linux(self.which):
            end = LINUX_END_RE.search(guest_text)   # the bridge's last word, not vsock_test's
            guest = Side.from_vsock_test(guest_text[:end.start()] if end else guest_text)
            return Attempt(here, guest, guest_name=self.which).decide(todo)
        ours = {int(m.group(1)): (m.group(3), m.group(4))
                for m in RINGSIDE_CASE_RE.finditer(guest_text)}
        return Attempt(here, None, ours, 'ringside').decide(todo)


def print_table(cells, guests, roles, names):
    by = {(c['guest'], c['role'], c['case']): c for c in cells}
    cols = [(g, r) for g in guests for r in roles]
    width = max(len(n) for n in names.values())
    print('%-3s %-*s %s' % ('id', width, 'case', '  '.join('%-11s' % g for g in guests)))
    print('%-3s %-*s %s' % ('', width, '', '  '.join(
        ' '.join('%-5s' % r[:6] for r in roles).ljust(11) for _ in guests)))
    notes = []
    for cid in sorted(names):
        row = []
        for g, r in cols:
            c = by.get((g, r, cid))
            row.append('%-5s' % (c['result'] if c else '-'))
            if c and c['reason']:
                notes.append('%d %s %s %s: %s' % (cid, g, r, c['result'], c['reason']))
        print('%-3d %-*s %s' % (cid, width, names[cid], '  '.join(
            ' '.join(row[i:i + len(roles)]).ljust(11) for i in range(0, len(row), len(roles)))))
    print()
    for g in guests:
        for r in roles:
            got = [c for c in cells if c['guest'] == g and c['role'] == r]
            print('%s as %s: %d pass, %d fail, %d n/a of %d' % (
                g, r, *(sum(c['result'] == w for c in got) for w in RESULTS), len(got)))
    if notes:
        print('\nreasons:')
        for n in notes:
            print('  ' + n)


def why_not_here():
    if not os.path.exists('/dev/vhost-vsock'):
        return ('no /dev/vhost-vsock: vsock-test needs the kernel\'s vhost-vsock and AF_VSOCK '
                '(a KVM host, or ringside nested --kernel 6.12 vsock-test)')
    if not rr.kvm_usable():
        return 'no usable /dev/kvm'
    return None


def run(opts, accel, cases):
    """Every guest of opts.guests booted in turn, both roles of opts.roles
    run against it: (cells, {guest: {role: its socket counters' change}})
    (ringside's counters only)."""
    cells, counters = [], {}
    for w in opts.guests:
        print('%s: %s' % (PROG, w), file=sys.stderr, flush=True)
        runner = Runner(w, opts, accel, cases)
        cells += runner.run()
        if runner.counters:
            counters[w] = runner.counters
    return cells, counters


def version():
    """The linux-source package vsock_test was built from (make vsock-test)."""
    if not os.path.exists(VSOCK_TEST_VERSION):
        return 'unknown'
    with open(VSOCK_TEST_VERSION) as f:
        return f.read().strip()


def results_cells(cells):
    """The cells `ringside compare` matches: per guest, role and case,
    whether it passed (1) or failed (0); a case not applicable has none."""
    out = Cells()
    for c in cells:
        if c['result'] != 'n/a':
            out.add({'cell': 'vsock-test', 'guest': c['guest'], 'role': c['role'],
                     'case': c['case']}, 'passed', 'cases', int(c['result'] == 'pass'),
                    'higher')
    return out
