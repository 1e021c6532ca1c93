# SPDX-License-Identifier: MIT
"""PCI enumeration and the virtio-pci transport against QEMU's own device
models: virtio-rng-pci (the device fills our buffers) on both ring layouts,
q35 (ECAM) and pc (port I/O), polled and with MSI-X interrupts.
"""

import re

import pytest

from ringside_qemu import Guest


def queue_counters(virtio_out, dev='virtio-rng'):
    """The first queue's counters of the device named `dev`."""
    block = virtio_out.split(dev, 1)[1]
    m = re.search(r'queue 0: (split|packed) size (\d+), (polled|msix)[^\n]*\n\s+added (\d+) '
                  r'completed (\d+) kicks (\d+) suppressed (\d+) interrupts (\d+) bad (\d+)', block)
    assert m, virtio_out
    ring, size, mode = m.group(1), int(m.group(2)), m.group(3)
    added, completed, kicks, suppressed, irqs, bad = map(int, m.groups()[3:])
    return dict(ring=ring, size=size, mode=mode, added=added, completed=completed,
                kicks=kicks, suppressed=suppressed, interrupts=irqs, bad=bad)


@pytest.fixture(scope='module', params=[
        ('q35', 'off', 'poll'), ('q35', 'on', 'poll'), ('q35', 'on', 'msix'),
        ('pc', 'off', 'msix'), ('pc', 'on', 'poll')],
        ids=lambda p: '-'.join(p))
def rng_guest(request):
    machine, packed, irq = request.param
    g = Guest('--boot', 'elf', '--machine', machine, '--cmdline', 'irq=%s' % irq,
              '--qemu-arg=-device', '--qemu-arg=virtio-rng-pci,packed=%s' % packed,
              name='virtio-%s-%s-%s' % request.param)
    g.start()
    g.expect = dict(machine=machine, ring='packed' if packed == 'on' else 'split', irq=irq)
    yield g
    status = g.poweroff() if g.alive else g.status
    g.stop()
    assert status == 0


def test_lspci_finds_the_device(rng_guest):
    out = rng_guest.command('lspci')
    method = 'ecam' if rng_guest.expect['machine'] == 'q35' else 'port-io'
    assert 'config access %s' % method in out, out
    # the host bridge, and the rng with a 64-bit memory BAR and MSI-X
    assert re.search(r'0000:00:00\.0 8086:', out), out
    m = re.search(r'(\S+) 1af4:(1005|1044) class [^\n]*((?:\n    [^\n]*)+)', out)
    assert m, out
    assert re.search(r'bar4: mem 0x[0-9a-f]+ size 0x[0-9a-f]+ 64-bit', m.group(3)), m.group(3)
    assert re.search(r'caps:.* msix@[0-9a-f]+\(\d+\)', m.group(3)), m.group(3)


def test_negotiation_and_ring(rng_guest):
    out = rng_guest.command('virtio')
    assert 'virtio-rng (type 4' in out and 'running' in out, out
    neg = re.search(r'negotiated: ([^\n]*)', out).group(1).split()
    assert 'VERSION_1' in neg and 'EVENT_IDX' in neg, neg
    assert ('RING_PACKED' in neg) == (rng_guest.expect['ring'] == 'packed'), neg
    q = queue_counters(out)
    assert q['ring'] == rng_guest.expect['ring']
    assert q['mode'] == ('msix' if rng_guest.expect['irq'] == 'msix' else 'polled')


def test_device_fills_buffers_and_counters_agree(rng_guest):
    before = queue_counters(rng_guest.command('virtio'))
    out = rng_guest.command('rng 100000')
    m = re.search(r'rng: 100000 bytes, (\d+) one bits \(([\d.]+)%\)', out)
    assert m, out
    # random bytes: close to half the bits set (800000 bits; 5 sigma is ~0.3%)
    assert 48.0 < float(m.group(2)) < 52.0, out
    after = queue_counters(rng_guest.command('virtio'))
    requests = -(-100000 // 4096)
    assert after['added'] - before['added'] >= requests
    assert after['added'] == after['completed']
    assert after['bad'] == 0
    if rng_guest.expect['irq'] == 'poll':
        assert after['interrupts'] == 0
    else:
        # interrupts fire; the LAPIC merges one that arrives while the
        # same vector is still pending, so there can be fewer than requests
        assert 0 < after['interrupts'] - before['interrupts'] <= after['added'] - before['added']


def test_two_reads_differ(rng_guest):
    a = re.search(r'digest ([0-9a-f]+)', rng_guest.command('rng 64')).group(1)
    b = re.search(r'digest ([0-9a-f]+)', rng_guest.command('rng 64')).group(1)
    assert a != b


def test_switch_ring_and_features_at_run_time(rng_guest):
    for setting, check in (('ring=split', 'split'), ('event_idx=0', None),
                           ('indirect=0', None), ('ring=packed', rng_guest.expect['ring']),
                           ('event_idx=1', None), ('indirect=1', None)):
        assert rng_guest.command('set %s' % setting) == setting
        out = rng_guest.command('virtio')
        neg = re.search(r'negotiated: ([^\n]*)', out).group(1).split()
        if check:
            assert queue_counters(out)['ring'] == check
        if setting == 'event_idx=0':
            assert 'EVENT_IDX' not in neg
        if setting == 'indirect=0':
            assert 'INDIRECT_DESC' not in neg
        assert re.search(r'rng: 8192 bytes', rng_guest.command('rng 8192'))


def test_bad_arguments(rng_guest):
    for cmd in ('rng 0', 'rng x', 'rng 1 2', 'rng 99999999999'):
        assert rng_guest.command(cmd).startswith('error: '), cmd
    assert rng_guest.command('lspci extra').startswith('error: ')
    assert rng_guest.command('virtio extra').startswith('error: ')


def test_legacy_only_device_is_skipped(guest_factory):
    g = guest_factory('--boot', 'elf', '--machine', 'pc', '--qemu-arg=-device',
                      '--qemu-arg=virtio-rng-pci,disable-modern=on,disable-legacy=off')
    out = g.command('virtio')
    assert re.search(r'virtio-rng \(type 4, pci 1af4:1005\) driver virtio-rng: '
                     r'legacy-only: skipped', out), out
    assert g.command('rng 16') == 'error: rng: no virtio-rng device'
    assert g.poweroff() == 0


@pytest.mark.parametrize('machine,bridge', [
        ('pc', 'pci-bridge,chassis_nr=1,id=br1'),
        ('q35', 'pcie-root-port,id=br1,chassis=1')])
def test_device_behind_a_bridge(guest_factory, machine, bridge):
    """Enumeration follows bridges to their secondary bus."""
    g = guest_factory('--boot', 'elf', '--machine', machine, '--qemu-arg=-device',
                      '--qemu-arg=%s' % bridge, '--qemu-arg=-device',
                      '--qemu-arg=virtio-rng-pci,bus=br1,addr=0')
    out = g.command('lspci')
    assert re.search(r'0000:00:[0-9a-f]{2}\.0 [0-9a-f]{4}:[0-9a-f]{4} '
                     r'class 06\.04\.00 [^\n]* header 1', out), out
    m = re.search(r'0000:(0[1-9a-f]|[1-9a-f][0-9a-f]):00\.0 1af4:(1005|1044)', out)
    assert m, out
    assert re.search(r'rng: 4096 bytes', g.command('rng 4096'))
    assert g.poweroff() == 0
