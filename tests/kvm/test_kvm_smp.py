# SPDX-License-Identifier: MIT
"""Application processors under KVM: every vCPU online, in x2APIC mode
(KVM offers it with QEMU's default CPU model), each CPU's LAPIC reading
the id the MADT gave it. tests/qemu/test_smp.py covers TCG, where QEMU
7.2 offers no x2APIC."""

import pytest

from ringside_qemu import Guest, info_fields
from smp_checks import assert_all_online


@pytest.mark.parametrize('ncpu', [1, 2, 4])
def test_kvm_bring_up(ncpu):
    with Guest('--boot', 'elf', '--accel', 'kvm', '--qemu-arg=-smp',
               '--qemu-arg=%d' % ncpu, name='kvm-smp-%d' % ncpu) as g:
        g.start()
        assert g.launch.accel == 'kvm'
        hv = info_fields(g.command('info')).get('hypervisor', '')
        assert 'offered: x2apic' in hv and 'apic x2apic' in hv, hv
        assert_all_online(g, ncpu)
        assert g.poweroff() == 0
