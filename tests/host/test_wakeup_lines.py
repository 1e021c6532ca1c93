# SPDX-License-Identifier: MIT
"""The QEMU tests fail on the idle watchdog's lines (tests/qemu/conftest.py):
its patterns must match what kernel/idle.c prints, each kind its own, or
every test would pass over a lost wake-up unseen."""

import os
import re
import sys

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, 'tests', 'qemu'))
import ringside_qemu  # noqa: E402  (after its directory is on the path)


def idle_c_lines():
    """kernel/idle.c's two watchdog lines, printed with sample values: the
    format's adjacent string literals joined, the %s and %llu filled in."""
    with open(os.path.join(REPO, 'kernel', 'idle.c')) as f:
        src = f.read()
    lines = {}
    for call in re.finditer(r'printf\(((?:\s*"(?:[^"\\]|\\.)*")+)', src):
        fmt = ''.join(re.findall(r'"((?:[^"\\]|\\.)*)"', call.group(1)))
        if not fmt.startswith('idle: watchdog:'):
            continue
        # the CPU (empty on CPU 0, 'cpu N: ' on an AP), the queue, the time
        text = fmt.replace('%s%s', 'cpu 1: virtio-vsock rxq', 1).replace('%llu', '1010', 1)
        text = text.replace('\\n', '\n')
        lines['owed' if 'owed' in fmt else 'lost'] = text
    return lines


def test_each_kind_is_recognised_as_itself():
    lines = idle_c_lines()
    assert set(lines) == {'owed', 'lost'}, lines
    assert ringside_qemu.LOST_WAKEUP.search(lines['lost'])
    assert not ringside_qemu.LOST_WAKEUP.search(lines['owed'])
    assert ringside_qemu.MISSED_NOTIFICATION.search(lines['owed'])
    assert not ringside_qemu.MISSED_NOTIFICATION.search(lines['lost'])
    assert ringside_qemu.LOST_WAKEUP.search(lines['lost']).group(1) == 'cpu 1: virtio-vsock rxq'
