# SPDX-License-Identifier: MIT
"""Application processors under KVM: every vCPU online, in x2APIC mode
(KVM offers it with QEMU's default CPU model), each CPU's LAPIC reading
the id the MADT gave it. tests/qemu/test_smp.py covers TCG, where QEMU
7.2 offers no x2APIC."""

import pytest

from ringside_qemu import Guest, info_fields
from smp_checks import assert_all_online, assert_ping_counts


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


@pytest.mark.parametrize('ncpu', [2, 4])
def test_kvm_cross_cpu_ping(ncpu):
    """Under KVM (x2APIC, the BSP's PV EOI; the APs EOI by the register):
    every AP answers `cpus ping` and its counters match the pings."""
    with Guest('--boot', 'elf', '--accel', 'kvm', '--qemu-arg=-smp',
               '--qemu-arg=%d' % ncpu, name='kvm-ping-%d' % ncpu) as g:
        g.start()
        assert_all_online(g, ncpu)
        p50 = assert_ping_counts(g, ncpu, 1000)
        print('kvm -smp %d: cpus ping 1000 p50 ns %s' % (ncpu, p50))
        assert g.poweroff() == 0


def test_kvm_cpus_one():
    """cpus=1 under KVM: nothing to ping, in one error line."""
    with Guest('--boot', 'elf', '--accel', 'kvm', '--cmdline', 'cpus=1', '--qemu-arg=-smp',
               '--qemu-arg=2', name='kvm-ping-cpus1') as g:
        g.start()
        out = g.command('cpus ping')
        assert out.endswith('error: cpus ping: no application processor online, '
                            'nothing to ping'), out
