# SPDX-License-Identifier: MIT
"""The fast tier's one boot (make check): the appliance boots by PVH with
its vsock device on our back end, the echo service answers one message
byte for byte, and `poweroff` ends QEMU with status 0."""

import pytest

from conftest import ELF, require_image
from ringside_qemu import Guest
from test_vsock import ECHO, connect_when_up
from vsockhost import pattern, recv_exact

pytestmark = pytest.mark.smoke


def test_boot_and_one_echo():
    require_image(ELF)
    with Guest('--boot', 'elf', '--vsock', name='smoke') as g:
        g.start()
        data = pattern(4096)
        with connect_when_up(g.vsock_uds, ECHO) as s:
            s.sendall(data)
            assert recv_exact(s, len(data)) == data
        assert g.poweroff() == 0
