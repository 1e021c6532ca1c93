# SPDX-License-Identifier: MIT
"""Interrupt placement of virtio-net's queue vectors (net_irq) at -smp 2.

QEMU's own virtio-net behind `-netdev dgram` with an EtherPeer (nothing
leaves this machine), irq=msix. Each queue's MSI-X message names the APIC
id of a CPU (PCI MSI address bits 19:12): net_irq=own the CPU that owns
the queue (CPU 0), net_irq=other the next online one (CPU 1), which only
schedules the owner's poll context (the bit, then the wake-up IPI).
`cpus irq V` reads each CPU's own count of vector V; the queue's
interrupts stat counts them where they are taken.
"""

import re

import pytest

from conftest import ELF, require_image
from ringside_qemu import Guest
from ringside.ether_peer import EtherPeer
from ringside.guest_stats import json_of
from smp_checks import smp_args
from test_net import ECHO_PORT, GUEST_IP, GUEST_MAC, PEER_IP, udp_echo

ECHOES = 20
ECHO_TIMEOUT = 60


def net_guest(net_irq, ncpu, *launcher):
    require_image(ELF)
    peer = EtherPeer(ip=PEER_IP)
    g = Guest('--boot', 'elf', *smp_args(ncpu), *launcher, '--cmdline',
              'ip=%s prefix=24 gw=%s udp_echo_port=%d irq=msix net_irq=%s'
              % (GUEST_IP, PEER_IP, ECHO_PORT, net_irq),
              '--', *peer.qemu_args(False, extra=',mac=' + GUEST_MAC),
              name='net-irq-%s-%d' % (net_irq, ncpu))
    g.peer = peer
    return g


def rx_queue(g):
    """(vector, interrupts) of the net device's receiveq1 (queue 0), from `virtio json`."""
    net = [d for d in json_of(g, 'virtio', 60)['devices'] if d['type'] == 'net']
    assert len(net) == 1, net
    q0 = next(q for q in net[0]['queues'] if q['index'] == 0)
    assert q0['vector'] >= 0, q0
    return q0['vector'], q0['interrupts']


def echoes(g, n, tag, sport):
    """n UDP echoes of `tag i`, each checked byte-exact."""
    for i in range(n):
        data = b'%s %d' % (tag, i)
        assert udp_echo(g, data, sport + i, ECHO_TIMEOUT) == data


def irqs_per_cpu(g, vector, ncpu):
    out = g.command('cpus irq %d' % vector)
    rows = re.findall(r'(?m)^cpu (\d+) apic \d+: vector %d irqs (\d+)\r?$' % vector, out)
    assert len(rows) == ncpu, out
    return {int(c): int(n) for c, n in rows}


@pytest.mark.parametrize('net_irq', ['own', 'other'])
def test_vector_taken_where_steered(net_irq):
    """After 20 UDP echoes (the guest halts between them, so each needs
    an RX interrupt), the RX vector was taken on the chosen CPU only, and
    its count there is the queue's interrupts stat: own: CPU 0, none on
    CPU 1; other: CPU 1, none on CPU 0, which took the wake-up IPIs CPU 1
    sent for its context instead (at least one; IPIs on a pending vector
    merge, so at most one each)."""
    g = net_guest(net_irq, 2)
    try:
        g.start()
        echoes(g, ECHOES, b'steer', 41000)
        vector, interrupts = rx_queue(g)
        n = irqs_per_cpu(g, vector, 2)
        assert interrupts >= 1, (n, interrupts)
        taker = 0 if net_irq == 'own' else 1
        assert n[taker] == interrupts and n[1 - taker] == 0, (n, interrupts)
        if net_irq == 'other':
            ipis = int(re.search(r'(?m)^cpu 0 apic \d+: bsp, .* ipis (\d+)',
                                 g.command('cpus stats')).group(1))
            assert 1 <= ipis, ipis
    finally:
        g.stop()
        g.peer.close()


def test_net_irq_set_at_run_time():
    """`set net_irq=other` on a running guest probes the device again and
    the new RX vector goes to CPU 1, which took none before; echoes keep
    coming back byte-exact across the switch."""
    g = net_guest('own', 2)
    try:
        g.start()
        echoes(g, 5, b'before', 43000)
        vector, _ = rx_queue(g)
        assert irqs_per_cpu(g, vector, 2)[1] == 0
        out = g.command('set net_irq=other')
        assert 'error' not in out, out
        assert re.search(r'\bother\b', g.command('get net_irq'))
        echoes(g, 5, b'after', 43100)
        vector, interrupts = rx_queue(g)
        n = irqs_per_cpu(g, vector, 2)
        assert interrupts >= 1 and n[1] >= 1, (n, interrupts)
    finally:
        g.stop()
        g.peer.close()


def test_other_with_one_cpu_is_the_owner():
    """cpus=1: there is no other CPU, so net_irq=other leaves the vector on
    CPU 0 (the owner), which takes every interrupt itself."""
    g = net_guest('other', 1)
    try:
        g.start()
        echoes(g, 5, b'one', 42000)
        vector, interrupts = rx_queue(g)
        assert irqs_per_cpu(g, vector, 1) == {0: interrupts}
        assert interrupts >= 1
    finally:
        g.stop()
        g.peer.close()


def test_bad_net_irq_is_one_line():
    """A bad value is refused with one line, the default kept (and the
    boot goes on only when asked to)."""
    g = net_guest('sideways', 1, '--allow-bad-cmdline')
    try:
        g.start()
        assert ("cmdline: bad value 'sideways' for net_irq: expected own|other (default kept)"
                in g.output), g.output[-2000:]
        assert re.search(r'\bown\b', g.command('get net_irq'))
        bad = g.command('cpus irq 7')
        assert bad == "error: cpus irq: V must be a vector, 32..255, not '7'", bad
    finally:
        g.stop()
        g.peer.close()
