# SPDX-License-Identifier: MIT
"""Child processes: started in their own session, stopped by PID."""

import ctypes
import os
import shlex
import signal
import subprocess
import threading

from .errors import LaunchError, log
from .wait import poll_for

STOP_GRACE = 3.0         # seconds between SIGTERM and SIGKILL for a child


try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # pragma: no cover
    _prctl = None


def die_with_parent():
    """Runs in the child before exec: SIGKILL it when the thread that
    started it (always the launcher's main thread) goes away."""
    if _prctl:
        _prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def read_text(path):
    """A small file's text, stripped (/proc and /sys entries, a job's
    status); None when it cannot be read."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def vhost_workers(qemu_pid):
    """PIDs of the kernel threads vhost runs for this QEMU ([vhost-PID])."""
    name = 'vhost-%d' % qemu_pid
    return [p for p in os.listdir('/proc') if p.isdigit()
            and read_text('/proc/%s/comm' % p) == name]


class Children:
    """Every process a launch (or a command) started; stop_all() ends them
    newest first.

    Each child leads a process group of its own (a new session: a
    terminal's signals reach only us, and we stop the children in order)
    and has PR_SET_PDEATHSIG, so even a SIGKILLed parent leaves nothing
    running. stop() signals the child's group, which is the child and
    whatever it started (a wrapper's QEMU, socat's forks): processes are
    addressed by the ids we were given at spawn, never by name.
    """

    def __init__(self, verbose=0):
        self.procs = []  # (name, Popen), in start order
        self.verbose = verbose
        self._lock = threading.Lock()

    def spawn(self, name, argv, **popen_kw):
        try:
            proc = subprocess.Popen(argv, start_new_session=True,
                                    preexec_fn=die_with_parent, **popen_kw)
        except OSError as e:
            raise LaunchError('cannot start %s (%s): %s' % (name, argv[0], e.strerror))
        if self.verbose:
            log('started %s (pid %d): %s' % (name, proc.pid, shlex.join(argv)))
        with self._lock:
            self.procs.append((name, proc))
        return proc

    def find(self, name):
        """The newest child called `name`, or None."""
        with self._lock:
            return next((p for n, p in reversed(self.procs) if n == name), None)

    @staticmethod
    def _signal(proc, sig):
        try:
            os.killpg(proc.pid, sig)   # its group: it leads one (start_new_session)
        except (ProcessLookupError, PermissionError):
            pass

    @staticmethod
    def _exited(proc):
        """Whether the child has exited, left unreaped (a zombie keeps its
        id, so its group can still be signalled)."""
        try:
            return bool(os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT))
        except ChildProcessError:
            return True   # reaped meanwhile (another thread's wait)

    def stop(self, proc, grace=STOP_GRACE):
        """SIGTERM to its group, SIGKILL after `grace` seconds, and SIGKILL
        to whatever of the group outlived the child; returns the child's
        status."""
        if proc.returncode is None:
            self._signal(proc, signal.SIGTERM)
            poll_for(lambda: self._exited(proc), grace, interval=0.02)
            if proc.returncode is None:
                self._signal(proc, signal.SIGKILL)
        return proc.wait()

    def stop_all(self, grace=STOP_GRACE):
        with self._lock:
            procs, self.procs = self.procs, []
        for name, proc in reversed(procs):
            running = proc.poll() is None
            self.stop(proc, grace)
            if running and self.verbose:
                log('stopped %s (pid %d)' % (name, proc.pid))


def run_to_end(name, argv, timeout=None, **popen_kw):
    """Run `argv` to its end through a Children (its own process group,
    stopped with whatever it started if we are interrupted or `timeout`
    seconds pass); its exit status."""
    children = Children()
    try:
        proc = children.spawn(name, argv, stdin=subprocess.DEVNULL, **popen_kw)
        return proc.wait(timeout)
    finally:
        children.stop_all()
