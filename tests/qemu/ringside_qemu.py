# SPDX-License-Identifier: MIT
"""Boot ringside in QEMU from tests and talk to its serial console.

The launcher (`./ringside run`) is the product; this module imports its
package host/ringside (conftest.py puts host/ on sys.path) and drives the
same code (options, QEMU command line, process handling, console), so
what the tests boot is what `ringside run` boots.

    with Guest('--boot', 'elf', '--cmdline', 'loglevel=5', name='pvh') as g:
        g.start()                       # waits for 'ringside: ready' + prompt
        out = g.command('get loglevel') # output text, no echo, no prompt
        assert g.poweroff() == 0        # QEMU's exit status

Arguments are `ringside run` options; `--accel tcg` is the default here
(override with RINGSIDE_TEST_ACCEL or an explicit --accel). Every QEMU is
killed by PID when its Guest stops, and at interpreter exit at the latest.
Serial output and QEMU's stderr of each guest are kept in
build/qemu-test-logs/NAME.{serial,stderr}.log.
"""

import atexit
import os
import re
import signal
import subprocess
import sys
import weakref

import ringside

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRONT_DOOR = os.path.join(REPO, 'ringside')
LAUNCHER = [sys.executable, FRONT_DOOR, 'run']    # the launcher as a program
LOG_DIR = os.path.join(REPO, 'build', 'qemu-test-logs')

READY_TIMEOUT = 120.0    # TCG on two busy cores; OVMF alone takes 5-10 s
COMMAND_TIMEOUT = 60.0
POWEROFF_TIMEOUT = 60.0


def run_launcher(*args, timeout=300, env=None):
    """Run `ringside run` as a program; returns CompletedProcess (text)."""
    return subprocess.run([*LAUNCHER, *args], capture_output=True,
                          text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def run_command(name, *args, timeout=600):
    """`ringside NAME ARGS` as a program, in a process group of its own:
    on the timeout the whole group is killed (so nothing it started keeps
    its pipes open), and the result says so in its stderr, status -9."""
    proc = subprocess.Popen([sys.executable, FRONT_DOOR, name, *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += '\n%s: still running after %g s, its process group killed' % (name, timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


_live = weakref.WeakSet()
# Guests stopped since the last wake-up check (wakeup_problems), whose
# console output the check has not read yet.
_stopped = []

# What the guest's idle watchdog says once a boot (kernel/idle.c) and the
# CPU rules' bug line (kernel/cpu_rules.c).
LOST_WAKEUP = re.compile(r'idle: watchdog: (.*) had work for \d+ ms that nothing scheduled')
MISSED_NOTIFICATION = re.compile(r'idle: watchdog: (.*) had work for \d+ ms its device owed')
CPU_RULE = re.compile(r'(?m)^BUG: .*$')


@atexit.register
def _stop_leftovers():
    for guest in list(_live):
        guest.stop()


class Guest:
    """One QEMU running ringside, with its serial console on pipes."""

    def __init__(self, *launcher_args, name='guest', ready_timeout=READY_TIMEOUT):
        rr = ringside
        self.rr = rr
        accel = os.environ.get('RINGSIDE_TEST_ACCEL', 'tcg')
        self.opts = rr.parse_args(['--accel', accel, *launcher_args])
        self.name = re.sub(r'[^A-Za-z0-9_.-]+', '_', name)
        self.ready_timeout = ready_timeout
        self.launch = None
        self.status = None
        self._files = []
        self._scanned = 0  # console text the wake-up check has read

    # -- life cycle

    def start(self, wait_ready=True):
        rr = self.rr
        os.makedirs(LOG_DIR, exist_ok=True)
        serial_log = open(os.path.join(LOG_DIR, self.name + '.serial.log'), 'wb')
        stderr_log = open(os.path.join(LOG_DIR, self.name + '.stderr.log'), 'wb')
        self._files = [serial_log, stderr_log]
        accel = rr.choose_accel(self.opts)
        self.launch = rr.Launch(self.opts, accel, qemu_stderr=stderr_log, log=serial_log)
        _live.add(self)
        try:
            self.launch.start()
            if wait_ready:
                self.launch.wait_ready(self.ready_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Kill QEMU (and any helper) by PID; keep the exit status."""
        if self.launch and self in _live:
            _stopped.append(self)
        if self.launch:
            self.launch.stop()
            if self.launch.qemu:
                self.status = self.launch.qemu.returncode
        for f in self._files:
            try:
                f.close()
            except OSError:
                pass
        self._files = []
        _live.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- console

    @property
    def console(self):
        return self.launch.console

    @property
    def alive(self):
        return bool(self.launch and self.launch.qemu and self.launch.qemu.poll() is None)

    def send(self, text):
        self.console.send(text)

    def wait_for(self, regex, timeout=COMMAND_TIMEOUT):
        """Wait for `regex` in output not yet consumed; returns the match."""
        return self.console.wait_for(regex, timeout)

    def command(self, cmd, timeout=COMMAND_TIMEOUT):
        """Run one shell command; its output without echo and prompt."""
        return self.console.command(cmd, timeout)

    @property
    def vsock_uds(self):
        """With --vsock: the hybrid-vsock socket host programs connect to."""
        return self.launch.opts.vsock_uds

    @property
    def output(self):
        """Everything the guest printed so far (latin-1 text)."""
        return self.console.text

    # -- the end

    def wait_exit(self, timeout=POWEROFF_TIMEOUT):
        status = self.launch.wait_exit(timeout)
        if status is not None:
            self.status = status
        return status

    def poweroff(self, timeout=POWEROFF_TIMEOUT):
        """`poweroff`; QEMU's exit status, or None if QEMU still runs."""
        status = self.launch.poweroff(timeout)
        if status is not None:
            self.status = status
        return status

    def _ours(self):
        """The vsock device and its host are ours: our back end, under TCG."""
        return (self.launch is not None and self.launch.accel == 'tcg' and self.opts.vsock
                and self.opts.vsock_transport != 'kernel' and not self.opts.backend)

    def checked_output(self):
        """What the guest printed so far was checked by the test itself:
        wakeup_problems() starts after it."""
        self._scanned = len(self.console.text)

    def wakeup_problems(self):
        """What the guest printed since the last look that is a bug: a wake-up
        it lost, a broken CPU rule, and, where the device and host are ours,
        a notification the device owed and never sent."""
        if not self.launch or not self.launch.console:
            return []
        text = self.console.text[self._scanned:]
        self._scanned += len(text)
        problems = ['%s: lost wake-up: %s' % (self.name, m.group(0))
                    for m in LOST_WAKEUP.finditer(text)]
        problems += ['%s: %s' % (self.name, m.group(0)) for m in CPU_RULE.finditer(text)]
        if self._ours():
            problems += ['%s: missed notification from our back end: %s'
                         % (self.name, m.group(0)) for m in MISSED_NOTIFICATION.finditer(text)]
        return problems


def wakeup_problems():
    """Every guest's new problems: those running and those stopped since."""
    guests = list(_live) + _stopped
    _stopped.clear()
    problems = []
    for g in guests:
        problems += g.wakeup_problems()
    return problems


def info_fields(text):
    """`info` output as {key: value} for its 'key: value' lines."""
    fields = {}
    for line in text.splitlines():
        m = re.match(r'\s*([A-Za-z][\w .-]*?)\s*:\s?(.*)$', line)
        if m:
            fields.setdefault(m.group(1).strip().lower(), m.group(2).strip())
    return fields
