# SPDX-License-Identifier: MIT
"""Which vsock device a launch gets (options.resolve, qemu.vsock_kernel):
a back end asked for is the one measured, wherever the kernel's
vhost-vsock could run; asking for both is one usage line."""

import pytest

from conftest import usage_error
from ringside import options, qemu


def opts_of(*argv):
    return options.parse_args(['--boot', 'elf', '--vsock', *argv])


def kernel_on_kvm(monkeypatch, o):
    """vsock_kernel(o, 'kvm') on a host that has /dev/vhost-vsock."""
    real = qemu.os.path.exists
    monkeypatch.setattr(qemu.os.path, 'exists',
                        lambda p: True if p == '/dev/vhost-vsock' else real(p))
    return qemu.vsock_kernel(o, 'kvm')


def test_auto_is_the_kernel_on_kvm_without_a_back_end(monkeypatch):
    o = opts_of()
    assert o.vsock_transport == 'auto'
    assert kernel_on_kvm(monkeypatch, o)
    assert not qemu.vsock_kernel(o, 'tcg')


@pytest.mark.parametrize('args', [
        ['--backend', 'my-backend --socket {socket} --uds {uds}'],
        ['--vsock-uds', '/tmp/v'],
        ['--vsock-arg=--poll'],
        ['--forward', '5201:5201'],
        ['--vsock-socket', '/tmp/s'],
])
def test_a_back_end_asked_for_is_the_one_used(monkeypatch, args):
    o = opts_of(*args)
    assert o.vsock_transport == 'vhost-user'
    assert not kernel_on_kvm(monkeypatch, o)


@pytest.mark.parametrize('args,named', [
        (['--backend', 'b {socket}'], '--backend is'),
        (['--vsock-uds', '/tmp/v', '--forward', '1:1'], '--vsock-uds, --forward are'),
])
def test_kernel_and_a_back_end_is_a_usage_error(capsys, args, named):
    err = usage_error(capsys, options.parse_args,
                      ['--boot', 'elf', '--vsock', '--vsock-transport', 'kernel', *args])
    assert err == ('ringside run: error: %s for a vhost-user back end, not '
                   '--vsock-transport kernel (see --help)\n' % named)


def test_the_default_back_end_gets_a_control_socket():
    o = opts_of()
    assert '--control' in o.backend_cmd and '{control}' in o.backend_cmd
