# SPDX-License-Identifier: MIT
"""virtio-net multiqueue (virtio 1.2, 5.1.6.5.5) against dpdk-testpmd.

testpmd's net_vhost PMD serves two queue pairs (queues=2, --rxq/--txq=2)
to QEMU's virtio-net-pci (mq=on, a vector per queue); the guest boots
with net_queues=2 and asks for both pairs on the control queue.
rxonly: pktgen queues=2 sends one flow per TX queue; testpmd's per-queue
counts (xstats rx_qN_good_packets) equal what the guest sent on each.
txonly: testpmd sends on both of its TX queues; netsink's per-queue
counts equal testpmd's tx_qN_good_packets. A device without MQ, and
net_queues=1 on an MQ device, leave the guest on one pair.
"""

import os
import re
import shutil
import time

import pytest

from ringside.commands import net as bench
from ringside.commands import netrx
from ringside import guest_stats, netguest
from ringside.netguest import netsink

from conftest import ELF, REPO, require_image
from pmd_guest import pmd_guest
from ringside_qemu import Guest

pytestmark = pytest.mark.skipif(not shutil.which('dpdk-testpmd'),
                                reason='dpdk-testpmd not installed (package dpdk-dev)')

LOG_DIR = os.path.join(REPO, 'build', 'qemu-test-logs')
PAIRS_RE = r'queue pairs (\d+) in use, (\d+) set up, device max (\d+)'


def mq_guest(mode, net_queues, name):
    txonly = mode == 'txonly'
    # irq=poll: QEMU 7.2 under TCG exits when vhost-user virtio-net starts with MSI-X
    yield from pmd_guest(name, {'mode': mode, 'queues': 2, 'auto_start': not txonly,
                                'txpkts': 64 if txonly else None},
                         lambda sock: bench.guest_args(sock, packed=False, queues=2),
                         keys='net_queues=%d' % net_queues)


def pairs(g, timeout=60):
    """(in use, set up, device max) from `net`, once the device has answered."""
    deadline = time.monotonic() + timeout
    while True:
        out = g.command('net')
        m = re.search(PAIRS_RE, out)
        assert m, 'no queue pairs line in net: %s' % out
        if '(asking the device)' not in out or time.monotonic() > deadline:
            return tuple(int(x) for x in m.groups())
        time.sleep(0.5)


@pytest.fixture(scope='module')
def rxonly_guest():
    yield from mq_guest('rxonly', 2, 'mq-rxonly')


@pytest.fixture(scope='module')
def txonly_guest():
    yield from mq_guest('txonly', 2, 'mq-txonly')


@pytest.fixture(scope='module')
def macswap_guest():
    yield from mq_guest('macswap', 2, 'mq-macswap')


@pytest.fixture(scope='module')
def one_pair_guest():
    yield from mq_guest('rxonly', 1, 'mq-one-pair')


def test_two_pairs_in_use(rxonly_guest):
    assert pairs(rxonly_guest) == (2, 2, 2)
    stats = guest_stats(rxonly_guest, 60, 'net')['net']
    assert stats['queues_in_use'] == 2 and len(stats['queues']) == 2
    assert stats['mq_ack_err'] == stats['mq_ack_bad'] == stats['mq_timeout'] == 0


def test_pktgen_two_queues(rxonly_guest):
    g, n = rxonly_guest, 20000
    pairs(g)
    base, qbase = g.pmd.port_stats(), g.pmd.queue_stats()
    before = guest_stats(g, 60, 'net')['net']['queues']
    r = netguest.pktgen(g, n, 64, 256, 300, queues=2)
    assert r['packets'] == n, r
    sent = r['queues']
    assert len(sent) == 2 and sum(sent) == n and min(sent) > 0, sent
    st = g.pmd.wait_rx(n, base, timeout=120)
    assert st['rx'] == n, 'pktgen sent %d, testpmd received %d' % (n, st['rx'])
    q = g.pmd.queue_stats()
    got = [q['rx'][i] - qbase['rx'][i] for i in range(2)]
    # transmitqK reaches the back end's receive queue K-1: each flow on its own
    assert got == sent, (got, sent)
    after = guest_stats(g, 60, 'net')['net']['queues']
    assert [after[i]['tx_packets'] - before[i]['tx_packets'] for i in range(2)] == sent


def test_pktgen_queue_errors(rxonly_guest):
    out = rxonly_guest.command('pktgen dst=%s,%s queues=4' % (bench.PEER_IP, bench.PEER_MAC))
    assert 'error: pktgen: bad argument' in out
    out = rxonly_guest.command('pktgen dst=%s,%s queues=0' % (bench.PEER_IP, bench.PEER_MAC))
    assert 'error: pktgen: bad argument' in out


def test_rxonly_poweroff(rxonly_guest):
    assert rxonly_guest.poweroff() == 0


def test_txonly_per_queue(txonly_guest):
    g, want = txonly_guest, 20000
    pairs(g)
    qbase = g.pmd.queue_stats()
    g.command('netsink on')
    sent = netrx.send_at_least(g.pmd, want, 300)
    assert sent >= want, 'testpmd sent only %d frames in 300 s' % sent
    netrx.wait_counted(netrx.RingsideSink(g.console, 60), sent, 120)
    r = netsink(g.console, 'off', 60)
    q = g.pmd.queue_stats()
    per_q = [q['tx'][i] - qbase['tx'][i] for i in range(2)]
    assert sum(per_q) == sent and min(per_q) > 0, per_q
    assert r['drops_total'] == 0, r
    assert r['queues'] == per_q and r['frames'] == sent, (per_q, r)


def test_txonly_poweroff(txonly_guest):
    assert txonly_guest.poweroff() == 0


def test_echo_on_the_pair_it_came_in_on(macswap_guest):
    """pktgen queues=2 to the guest's own UDP echo port through testpmd's
    macswap: each request comes back on the receive queue of the pair it
    left on (testpmd's queue K answers on its queue K), and the echo must
    leave on that pair's transmit queue. The echo goes to port 9 + pair,
    which comes back once more and is dropped as for no port."""
    g, n = macswap_guest, 2000
    pairs(g)
    before = guest_stats(g, 60, 'net')['net']
    sent = netguest.pktgen(g, n, 64, 32, 300, dst_ip=netguest.GUEST_IP, queues=2,
                           port=7)['queues']
    # testpmd sends back what the guest's RX ring has room for: settled
    # once nothing moves between two looks a second apart
    deadline = time.monotonic() + 120
    after = guest_stats(g, 60, 'net')['net']
    while time.monotonic() < deadline:
        time.sleep(1)
        last, after = after, guest_stats(g, 60, 'net')['net']
        if after['rx_packets'] == last['rx_packets'] and after['udp_echoed'] > before['udp_echoed']:
            break
    echoed = after['udp_echoed'] - before['udp_echoed']
    rx = [after['queues'][q]['rx_packets'] - before['queues'][q]['rx_packets'] for q in range(2)]
    tx = [after['queues'][q]['tx_packets'] - before['queues'][q]['tx_packets'] for q in range(2)]
    echoes = [tx[q] - sent[q] for q in range(2)]
    assert sum(echoes) == echoed and min(echoes) > 0, (echoes, echoed, rx)
    # a pair's echoes answer requests that pair received (its rx holds them and their echoes)
    assert all(echoes[q] <= rx[q] for q in range(2)), (echoes, rx)
    assert after['udp_bad_csum'] == before['udp_bad_csum']


def test_macswap_poweroff(macswap_guest):
    assert macswap_guest.poweroff() == 0


def test_one_pair_on_mq_device(one_pair_guest):
    """net_queues=1: no MQ nor CTRL_VQ negotiated, everything on the first pair."""
    g, n = one_pair_guest, 5000
    assert pairs(g) == (1, 1, 1)
    # testpmd has no xstats while the guest leaves its second pair unused
    base = g.pmd.port_stats()
    before = guest_stats(g, 60, 'net')['net']
    r = netguest.pktgen(g, n, 64, 256, 300)
    assert r['packets'] == n and r['queues'] == [n], r
    assert g.pmd.wait_rx(n, base, timeout=120)['rx'] == n
    after = guest_stats(g, 60, 'net')['net']
    assert after['queues_in_use'] == 1 and len(after['queues']) == 1
    assert after['queues'][0]['tx_packets'] - before['queues'][0]['tx_packets'] == n
    assert after['tx_packets'] - before['tx_packets'] == n
    out = g.command('pktgen dst=%s,%s queues=2' % (bench.PEER_IP, bench.PEER_MAC))
    assert 'error: pktgen: queues=2 but 1 queue pairs are in use' in out
    assert g.poweroff() == 0


def test_no_mq_device_falls_back():
    """net_queues=2 on QEMU's own virtio-net without mq: one pair, said at boot and in net."""
    require_image(ELF)
    g = Guest('--boot', 'elf', '--machine', 'q35',
              '--cmdline', 'ip=%s gw=%s net_queues=2' % (bench.GUEST_IP, bench.PEER_IP),
              '--', '-netdev', 'user,id=n0', '-device', 'virtio-net-pci,netdev=n0',
              name='mq-no-mq-device')
    try:
        g.start()
        assert 'has no multiqueue (VIRTIO_NET_F_MQ), using 1 queue pair' in g.output
        m = re.search(PAIRS_RE, g.command('net'))
        assert m and m.groups() == ('1', '1', '1'), g.command('net')
        stats = guest_stats(g, 60, 'net')['net']
        assert stats['queues_in_use'] == 1 and len(stats['queues']) == 1
        assert g.poweroff() == 0
    finally:
        g.stop()
