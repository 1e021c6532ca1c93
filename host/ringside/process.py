# SPDX-License-Identifier: MIT
"""Child processes: started in their own session, stopped by PID."""

import ctypes
import os
import shlex
import signal
import subprocess
import threading

from .errors import LaunchError, log

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
    """Every process a launch started; stop_all() ends them newest first.

    Each child gets its own session (so a terminal's signals reach only the
    launcher, which then stops the children in order) and PR_SET_PDEATHSIG,
    so even a SIGKILLed launcher leaves nothing running. Processes are
    addressed by PID only.
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

    def stop(self, proc, grace=STOP_GRACE):
        """SIGTERM, then SIGKILL after `grace` seconds; returns the status."""
        if proc.poll() is None:
            try:
                proc.terminate()
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                proc.kill()
            except ProcessLookupError:
                pass
        return proc.wait()

    def stop_all(self, grace=STOP_GRACE):
        with self._lock:
            procs, self.procs = self.procs, []
        for name, proc in reversed(procs):
            running = proc.poll() is None
            self.stop(proc, grace)
            if running and self.verbose:
                log('stopped %s (pid %d)' % (name, proc.pid))
