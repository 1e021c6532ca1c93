# SPDX-License-Identifier: MIT
"""Our back end as a program sees it: its counters through its control
socket (`--control {control}`: one request line, one line of JSON back),
and its process's descriptors and memory from /proc.

A back end of someone else's gets neither a signal nor a request from us:
a command that needs the counters asks backends.missing() first and
refuses, or leaves the checks that need them out and says which.
"""

import json
import os
import socket

from .errors import LaunchError
from .process import Children

TIMEOUT = 30.0


class ControlError(LaunchError):
    """The back end did not answer on its control socket."""


class BackendControl:
    """The control socket of a running back end."""

    def __init__(self, path):
        self.path = path

    def ask(self, request, timeout=TIMEOUT):
        """The reply to one request ('counters', 'inject stop') as a dict.
        Read to the end: the back end closes after its line, so once this
        returns the connection is gone from its descriptors too (a count
        of them right after, as the soak's, sees none of ours)."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        data = b''
        try:
            s.connect(self.path)
            s.sendall(request.encode() + b'\n')
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError as e:
            raise ControlError('the back end\'s control socket %s: %s'
                               % (self.path, e.strerror or e))
        finally:
            s.close()
        try:
            reply = json.loads(data)
        except ValueError:
            raise ControlError('the back end answered %r with %r' % (request, data[:200]))
        if 'error' in reply:
            raise ControlError('the back end refused %r: %s' % (request, reply['error']))
        return reply

    def counters(self):
        """{name: value} of every counter (host/vhost-vsock/stats.h)."""
        return self.ask('counters')['counters']

    def injected(self):
        """{mode: faults injected so far} of the enabled --inject modes."""
        return self.ask('counters')['inject']['done']

    def stop_injecting(self):
        """Stop --inject; {mode: faults injected} at that moment."""
        return self.ask('inject stop')['inject']['done']

    def live_conns(self):
        """Connections it still holds, host side closed or not (a reset one
        lives until its RST has gone to the guest, its buffer with it)."""
        c = self.counters()
        return c['conns_host'] + c['conns_guest'] - c['conns_closed']


class BackendProcess:
    """A back end's process, whoever wrote it: its memory and descriptors
    from /proc."""

    def __init__(self, proc):
        self.proc, self.pid = proc, proc.pid

    def alive(self):
        return self.proc.poll() is None

    def sample(self):
        """VmRSS and RssAnon (KiB), open fds and mappings now."""
        status = {}
        with open('/proc/%d/status' % self.pid) as f:
            for line in f:
                key, _, value = line.partition(':')
                status[key] = value.split()[0] if value.split() else ''
        with open('/proc/%d/maps' % self.pid) as f:
            maps = sum(1 for _ in f)
        return {'rss_kib': int(status['VmRSS']), 'anon_kib': int(status['RssAnon']),
                'fds': len(os.listdir('/proc/%d/fd' % self.pid)), 'maps': maps}

    def host_conns(self, paths):
        """Connected Unix sockets it holds on `paths` (its hybrid sockets):
        the host connections it has not closed yet."""
        bound = set()
        with open('/proc/net/unix') as f:
            next(f)
            for line in f:
                cols = line.split()
                # Num RefCount Protocol Flags Type St Inode [Path]; St 03: connected
                if len(cols) == 8 and cols[5] == '03' and cols[7] in paths:
                    bound.add(cols[6])
        n = 0
        fd_dir = '/proc/%d/fd' % self.pid
        for fd in os.listdir(fd_dir):
            try:
                link = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            n += link.startswith('socket:[') and link[8:-1] in bound
        return n


# Our back end's glibc malloc, told to map every block of 64 KiB or more
# (the 256 KiB connection buffers) with its own mmap and unmap it on free,
# instead of raising that threshold after the first free and caching freed
# buffers in its heap. Then RssAnon follows what the back end holds, not
# the pages its busiest moment happened to touch, and a leaked buffer shows
# as a mapping too.
BACKEND_TUNABLES = 'glibc.malloc.mmap_threshold=65536'


class TunedChildren(Children):
    """Children that start the vhost-user back end with BACKEND_TUNABLES
    (in its environment: a back end without glibc ignores it)."""

    def spawn(self, name, argv, **popen_kw):
        if name == 'vhost-vsock':
            popen_kw['env'] = dict(os.environ, GLIBC_TUNABLES=BACKEND_TUNABLES)
        return super().spawn(name, argv, **popen_kw)
