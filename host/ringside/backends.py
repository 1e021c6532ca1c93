# SPDX-License-Identifier: MIT
"""Back-end processes QEMU depends on (the vhost-user-vsock back end)."""

import os
import stat

from .qemu import vsock_kernel


class HelperSpec:
    """A process QEMU depends on: start it first, wait for `socket_path`."""

    def __init__(self, name, argv, socket_path=None):
        self.name, self.argv, self.socket_path = name, argv, socket_path


def helper_specs(opts, accel):
    """Back-end processes to start before QEMU, in start order.

    New back ends (vhost-user-net peers, ...) add a spec here and their QEMU
    arguments in qemu_argv(); Children stops them after QEMU.
    """
    specs = []
    if opts.vsock and not vsock_kernel(opts, accel):
        # Keep in step with `build/host/ringside-vhost-vsock --help`.
        specs.append(HelperSpec('vhost-vsock', [
                opts.vsock_backend, '--socket', opts.vsock_socket,
                '--uds', opts.vsock_uds, '--guest-cid', str(opts.vsock_cid)]
                + ['--forward-tcp=' + f for f in opts.forward]
                + opts.vsock_arg, socket_path=opts.vsock_socket))
    return specs


def plan_paths(opts, workdir):
    """Give run-time sockets that the user did not name a home in `workdir`."""
    if opts.vsock:
        opts.vsock_socket = opts.vsock_socket or os.path.join(workdir, 'vhost-vsock.sock')
        opts.vsock_uds = opts.vsock_uds or os.path.join(workdir, 'vsock')


def remove_stale_socket(path):
    """A socket left by an earlier run would look like a fresh one."""
    try:
        if path and stat.S_ISSOCK(os.lstat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass
