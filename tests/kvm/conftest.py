# SPDX-License-Identifier: MIT
"""The KVM suite: ringside on a KVM host with the kernel's vhost-vsock.

Runs where /dev/kvm runs guests and /dev/vhost-vsock exists: a real KVM
host, or the nested one (tests/qemu/test_nested.py runs it there through
ringside nested). Elsewhere every test is skipped, saying why; AF_VSOCK is
never opened where there is no /dev/vhost-vsock.

    /usr/bin/python3 -m pytest -v tests/kvm
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, 'qemu'))
sys.path.insert(0, os.path.join(os.path.dirname(TESTS), 'host'))


def why_not_here():
    if not os.path.exists('/dev/vhost-vsock'):
        return 'no /dev/vhost-vsock (run through ./ringside nested or on a KVM host)'
    if not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return 'no usable /dev/kvm'
    return None


def pytest_collection_modifyitems(config, items):
    why = why_not_here()
    if why:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=why))
