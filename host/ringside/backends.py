# SPDX-License-Identifier: MIT
"""Back-end processes QEMU depends on (the vhost-user-vsock back end)."""

import os
import stat

from .qemu import vsock_kernel


class HelperSpec:
    """A process QEMU depends on: start it first, then wait up to `timeout`
    seconds for it to listen on the Unix socket `socket_path`."""

    def __init__(self, name, argv, socket_path=None, timeout=10.0):
        self.name, self.argv, self.socket_path = name, argv, socket_path
        self.timeout = timeout


# What a back end's command line (--backend CMD) may name; the launcher fills
# them in: the vhost-user socket QEMU connects to, the hybrid-vsock socket
# host programs use, the guest's CID, and a control socket where a back end
# that speaks our back end's control protocol (backend_ctl.py) answers
# `counters` and `inject stop`.
PLACEHOLDERS = ('{socket}', '{uds}', '{cid}', '{control}')

# What a command may need of a back end beyond the three a vhost-user-vsock
# back end takes: its counters (through {control}), fault injection
# (--inject), busy polling (--poll), TCP forwarding (--forward-tcp) and
# SOCK_SEQPACKET host clients (--uds-seqpacket). Ours has them all.
NEEDS = {
    'counters': 'its counters (a --backend CMD that names {control})',
    'inject': 'fault injection (our back end\'s --inject)',
    'poll': 'busy polling (our back end\'s --poll)',
    'forward': 'TCP forwarding (our back end\'s --forward-tcp)',
    'seqpacket': 'SOCK_SEQPACKET host clients (our back end\'s --uds-seqpacket)',
}


def missing(opts, needs):
    """Of `needs` (names of NEEDS), those the launcher options' back end
    does not have: none for ours, {control}'s counters at most for a
    --backend of someone else's, none of them on the kernel's vhost-vsock
    (--vsock-transport kernel)."""
    if opts.vsock_transport == 'kernel':
        return [n for n in needs]
    if opts.backend is None:
        return []
    names_control = any('{control}' in w for w in opts.backend_cmd)
    return [n for n in needs if not (n == 'counters' and names_control)]


def refuse_missing(opts, needs, prog):
    """One line naming what the back end lacks, or None: what a command
    that cannot do without `needs` says before anything boots."""
    lack = missing(opts, needs)
    if not lack:
        return None
    who = ("the kernel's vhost-vsock" if opts.vsock_transport == 'kernel'
           else '--backend %r' % opts.backend)
    return '%s needs %s; %s has not (our back end, the default, has)' % (
        prog, ' and '.join(NEEDS[n] for n in lack), who)


def fill_placeholders(words, values):
    """`words` with every {name} of `values` replaced in each word; other
    braces stay as they are."""
    out = []
    for word in words:
        for name, value in values.items():
            word = word.replace('{%s}' % name, str(value))
        out.append(word)
    return out


def backend_spec(opts):
    """The vhost-user-vsock back end's HelperSpec: --backend CMD, or ours,
    its placeholders filled in (plan_paths first), our back end's own
    options (--vsock-arg, --forward) after it."""
    # keep in step with `build/host/ringside-vhost-vsock --help`
    argv = fill_placeholders(opts.backend_cmd, {
            'socket': opts.vsock_socket, 'uds': opts.vsock_uds, 'cid': opts.vsock_cid,
            'control': opts.vsock_control})
    return HelperSpec('vhost-vsock', argv + ['--forward-tcp=' + f for f in opts.forward]
                      + opts.vsock_arg, socket_path=opts.vsock_socket,
                      timeout=opts.backend_timeout)


def helper_specs(opts, accel):
    """Back-end processes to start before QEMU, in start order.

    New back ends (vhost-user-net peers, ...) add a spec here and their QEMU
    arguments in qemu_argv(); Children stops them after QEMU.
    """
    if opts.vsock and not vsock_kernel(opts, accel):
        return [backend_spec(opts)]
    return []


def plan_paths(opts, workdir):
    """Give run-time sockets that the user did not name a home in `workdir`."""
    if opts.vsock:
        opts.vsock_socket = opts.vsock_socket or os.path.join(workdir, 'vhost-vsock.sock')
        opts.vsock_uds = opts.vsock_uds or os.path.join(workdir, 'vsock')
        opts.vsock_control = os.path.join(workdir, 'control.sock')


def control_path(opts):
    """The back end's control socket, where its command names {control}."""
    if opts.vsock and any('{control}' in w for w in opts.backend_cmd or []):
        return getattr(opts, 'vsock_control', None)
    return None


def remove_stale_socket(path):
    """A socket left by an earlier run would look like a fresh one."""
    try:
        if path and stat.S_ISSOCK(os.lstat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass


def listening_unix_sockets():
    """Paths of the listening Unix sockets in this network namespace
    (/proc/net/unix: flags __SO_ACCEPTCON, state SS_UNCONNECTED)."""
    paths = set()
    with open('/proc/net/unix') as f:
        next(f)   # the header
        for line in f:
            fields = line.split(None, 7)
            if len(fields) == 8 and int(fields[3], 16) & 0x10000 and fields[5] == '01':
                paths.add(fields[7].rstrip('\n'))
    return paths


def is_listening(path):
    """True when a process listens on the Unix socket `path` (absolute; a
    back end may have bound it through symbolic links resolved). Nothing
    connects to it: a back end may take only one connection."""
    try:
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            return False
    except OSError:
        return False
    return not listening_unix_sockets().isdisjoint({path, os.path.realpath(path)})
