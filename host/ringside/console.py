# SPDX-License-Identifier: MIT
"""The guest's serial console."""

import os
import re
import threading
import time

from .errors import GuestExited, GuestTimeout
from .images import LINUX_READY

READY = 'ringside: ready'
PROMPT = 'ringside> '


def effective_line(typed):
    """What the guest's line editor should make of `typed`."""
    line = ''
    for ch in typed:
        if ch in '\x7f\x08':
            line = line[:-1]
        elif ch == '\x15':
            line = ''
        elif ch not in '\r\n':
            line += ch
    return line


def render_line(text, start=''):
    """Render one line of terminal output the way a terminal shows it.

    Understands \\r, \\b and the ANSI sequences a line editor uses (erase in
    line, cursor left/right/column); `start` is already on the line.
    """
    cells = list(start)
    col = len(cells)
    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if ch == '\r':
            col = 0
        elif ch == '\b':
            col = max(0, col - 1)
        elif ch == '\x1b':
            m = re.match(r'\[([0-9;?]*)([@-~])', text[i:])
            if not m:
                continue
            i += m.end()
            arg = int(m.group(1)) if m.group(1).isdigit() else None
            op = m.group(2)
            if op == 'K':
                if arg in (None, 0):
                    del cells[col:]
                elif arg == 1:
                    cells[:col] = [' '] * min(col, len(cells))
                else:
                    cells = []
            elif op == 'D':
                col = max(0, col - (arg or 1))
            elif op == 'C':
                col += arg or 1
            elif op == 'G':
                col = max(0, (arg or 1) - 1)
        elif ch >= ' ' and ch != '\x7f':
            while len(cells) < col:
                cells.append(' ')
            if col < len(cells):
                cells[col] = ch
            else:
                cells.append(ch)
            col += 1
    return ''.join(cells).rstrip()


class Console:
    """The guest's serial line.

    A reader thread appends everything the guest prints to one buffer (held
    as latin-1 text, so offsets are byte offsets); wait_for() searches it
    from a cursor that moves past each match, so every byte is seen once and
    nothing that arrives early is missed. `tee` (a callable taking bytes)
    sees every chunk, `log` (a binary file) gets a copy.
    """

    def __init__(self, rfd, wfd, tee=None, log=None, holder=None):
        self._rfd, self._wfd = rfd, wfd
        self.holder = holder  # an object (socket) that owns the fds
        self.tee, self.log = tee, log
        self.text = ''
        self.pos = 0
        self.eof = False
        self._stamps = []  # (end offset, time.monotonic() of arrival)
        self._cond = threading.Condition()
        self._wlock = threading.Lock()
        # called when a wait times out: a note on the guest's state, or ''
        self.diagnose = None
        self._thread = threading.Thread(target=self._read, name='console', daemon=True)
        self._thread.start()

    def _read(self):
        while True:
            try:
                data = os.read(self._rfd, 65536)
            except OSError:
                data = b''
            now = time.monotonic()
            if data:
                for sink in (self.tee, self.log and self.log.write):
                    if sink:
                        try:
                            sink(data)
                        except (OSError, ValueError):
                            pass
                if self.log:
                    try:
                        self.log.flush()
                    except (OSError, ValueError):
                        pass
            with self._cond:
                if not data:
                    self.eof = True
                    self._cond.notify_all()
                    return
                self.text += data.decode('latin-1')
                self._stamps.append((len(self.text), now))
                self._cond.notify_all()

    def join(self, timeout):
        """Wait for the reader to see EOF (after QEMU is gone); True if it did.

        Only then may the caller close the fds: closing them under a reader
        that is about to call read() could hand it a reused fd number.
        """
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def tail(self, n=300):
        with self._cond:
            return self.text[-n:]

    def arrival_time(self, offset):
        """time.monotonic() when the byte before `offset` arrived."""
        with self._cond:
            for end, t in self._stamps:
                if end >= offset:
                    return t
        return None

    def wait_for(self, pattern, timeout, what=None):
        """Wait until `pattern` (regex) appears after the cursor; move past it.

        Raises GuestTimeout, or GuestExited if the line closed first.
        """
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                m = rx.search(self.text, self.pos)
                if m:
                    self.pos = m.end()
                    return m
                if self.eof:
                    raise GuestExited('guest console closed while waiting for %s; last output: %r'
                                      % (what or repr(rx.pattern), self.text[-200:]))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise GuestTimeout('no %s after %g s; last output: %r%s'
                                       % (what or repr(rx.pattern), timeout, self.text[-200:],
                                          self.diagnose() if self.diagnose else ''))
                self._cond.wait(left)

    def search(self, pattern, start, timeout):
        """The first match of `pattern` (compiled) at or after offset `start`,
        waiting up to `timeout` s for it to arrive; None if it did not (or
        the line closed). The cursor stays where it is."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                m = pattern.search(self.text, start)
                left = deadline - time.monotonic()
                if m or self.eof or left <= 0:
                    return m
                self._cond.wait(left)

    def wait_eof(self, timeout):
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.eof:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def send(self, data):
        if isinstance(data, str):
            data = data.encode('utf-8')
        with self._wlock:
            while data:
                try:
                    n = os.write(self._wfd, data)
                except OSError as e:
                    raise GuestExited('cannot write to the guest console: %s' % e.strerror)
                data = data[n:]

    def wait_ready(self, timeout):
        """Wait for the READY line and the first prompt after it; returns
        what the guest printed from the cursor up to READY (its boot)."""
        with self._cond:
            start = self.pos
        m = self.wait_for(re.escape(READY) + r'\r?\n', timeout, what="'%s'" % READY)
        self.wait_for(re.escape(PROMPT), timeout, what='prompt %r' % PROMPT)
        with self._cond:
            return self.text[start:m.start()]

    def wait_linux_ready(self, timeout):
        """Wait for the Linux guest's ready line (host/linux-guest)."""
        self.wait_for(re.escape(LINUX_READY) + r'\r?\n', timeout, what="'%s'" % LINUX_READY)

    def command(self, cmd, timeout):
        """Type `cmd` and Enter; return its output (without echo and prompt).

        Lines come back joined with '\\n', without trailing newline. The echo
        of the typed line is recognised by rendering it as a terminal would.
        """
        with self._cond:
            start = self.pos
        self.send(cmd + '\r')
        what = 'output of %r' % cmd
        eol = self.wait_for(r'\n', timeout, what=what)
        prompt = self.wait_for(re.escape(PROMPT), timeout, what='prompt after %r' % cmd)
        with self._cond:
            first = self.text[start:eol.start()]
            rest = self.text[eol.end():prompt.start()]
        if render_line(first, PROMPT) != (PROMPT + effective_line(cmd)).rstrip():
            rest = first + '\n' + rest  # no echo: the first line is output
        out = rest.encode('latin-1').decode('utf-8', 'replace')
        lines = [line.rstrip('\r') for line in out.split('\n')]
        while lines and lines[-1] == '':
            lines.pop()
        return '\n'.join(lines)
