# SPDX-License-Identifier: MIT
"""virtio-net queue pairs owned by their own CPUs (net_pair_cpu) at -smp 2.

dpdk-testpmd's net_vhost PMD serves two queue pairs to QEMU's
virtio-net-pci; the guest boots with two CPUs and net_queues=2, so pair 1
belongs to CPU 1 (net_pair_cpu=spread, the default): only CPU 1's loop
polls its rings, and what it receives is handled there. testpmd's txonly
sends on both of its TX queues; each receive queue's frames are counted
exactly (netsink per queue against testpmd's per-queue counts), and the
frames each CPU's protocol layer handled (`stats json`'s cpus) equal the
frames of the pair it owns. testpmd's rxonly counts what pktgen queues=2
sends: a sender per CPU, each on the queue its CPU owns. Setting
net_pair_cpu=cpu0 at run time stops CPU 1's polling before the pairs are
freed and puts both on CPU 0.
"""

import json
import re
import shutil
import subprocess
import time

import pytest

from ringside.commands import net as bench
from ringside.commands import netrx
from ringside import guest_stats, netguest
from ringside import netns
from ringside.netguest import netsink

from conftest import ELF, require_image
from pmd_guest import pmd_guest
from ringside_qemu import Guest, run_command
from smp_checks import smp_args
from test_net_irq import irqs_per_cpu
from test_net_mq import pairs
from test_net_tap import UDP_ECHO_CLIENT

needs_testpmd = pytest.mark.skipif(not shutil.which('dpdk-testpmd'),
                                   reason='dpdk-testpmd not installed (package dpdk-dev)')
needs_netns = pytest.mark.skipif(not netns.usable(),
                                 reason='needs root, ip netns and /dev/net/tun')

FRAMES = 20000


@pytest.fixture(scope='module')
def spread_guest():
    # irq=poll: QEMU 7.2 under TCG exits when vhost-user virtio-net starts with MSI-X
    yield from pmd_guest('pair-cpu', {'mode': 'txonly', 'queues': 2, 'auto_start': False,
                                      'txpkts': 64},
                         lambda sock: bench.guest_args(sock, packed=False, queues=2),
                         keys='net_queues=2', launcher=smp_args(2))


@pytest.fixture(scope='module')
def spread_rx_guest():
    yield from pmd_guest('pair-cpu-rx', {'mode': 'rxonly', 'queues': 2},
                         lambda sock: bench.guest_args(sock, packed=False, queues=2),
                         keys='net_queues=2', launcher=smp_args(2))


def net_stats(g):
    return guest_stats(g, 60, 'net')['net']


def cpu_rx(net):
    """{cpu: frames its protocol layer handled}."""
    return {c['cpu']: c['eth_rx'] for c in net['cpus']}


def send_and_settle(g, want):
    """testpmd sends at least `want` frames on its two queues; returns
    (sent per testpmd queue, guest net stats before, after), after the
    guest's receive counts stop moving."""
    qbase = g.pmd.queue_stats()
    before = net_stats(g)
    sent = netrx.send_at_least(g.pmd, want, 300)
    assert sent >= want, 'testpmd sent only %d frames in 300 s' % sent
    q = g.pmd.queue_stats()
    per_q = [q['tx'][i] - qbase['tx'][i] for i in range(2)]
    assert sum(per_q) == sent and min(per_q) > 0, per_q
    deadline = time.monotonic() + 120
    after = net_stats(g)
    while after['rx_packets'] - before['rx_packets'] < sent and time.monotonic() < deadline:
        time.sleep(0.5)
        after = net_stats(g)
    return per_q, before, after


@needs_testpmd
def test_each_pair_on_its_cpu(spread_guest):
    g = spread_guest
    assert pairs(g) == (2, 2, 2)
    net = net_stats(g)
    assert [q['cpu'] for q in net['queues']] == [0, 1], net['queues']
    assert re.search(r'pair 1 cpu 1 rx', g.command('net')), 'no pair 1 on cpu 1 in net'


@needs_testpmd
def test_netsink_counts_each_queue_on_its_cpu(spread_guest):
    g = spread_guest
    pairs(g)
    qbase = g.pmd.queue_stats()
    g.command('netsink on')
    sent = netrx.send_at_least(g.pmd, FRAMES, 300)
    netrx.wait_counted(netrx.RingsideSink(g.console, 60), sent, 120)
    r = netsink(g.console, 'off', 60)
    q = g.pmd.queue_stats()
    per_q = [q['tx'][i] - qbase['tx'][i] for i in range(2)]
    assert r['drops_total'] == 0, r
    assert r['queues'] == per_q and r['frames'] == sent, (per_q, r)


@needs_testpmd
def test_protocols_run_on_the_owner(spread_guest):
    """Without netsink the frames go up the stack on the CPU that polled
    them: CPU c's protocol layer saw exactly the frames of pair c."""
    g = spread_guest
    per_q, before, after = send_and_settle(g, FRAMES // 4)
    rx = [after['queues'][i]['rx_packets'] - before['queues'][i]['rx_packets']
          for i in range(2)]
    assert rx == per_q, (rx, per_q)
    got = cpu_rx(after)
    base = cpu_rx(before)
    handled = [got.get(c, 0) - base.get(c, 0) for c in range(2)]
    assert handled == rx, (handled, rx, after['cpus'])
    assert after['tx_wrong_cpu'] == before['tx_wrong_cpu']


@needs_testpmd
def test_cpu0_at_run_time(spread_guest):
    """net_pair_cpu=cpu0: the device is probed again (CPU 1 stops polling
    first), both pairs are CPU 0's, and CPU 0 handles every frame."""
    g = spread_guest
    g.command('set net_pair_cpu=cpu0')
    assert pairs(g) == (2, 2, 2)
    assert [q['cpu'] for q in net_stats(g)['queues']] == [0, 0]
    per_q, before, after = send_and_settle(g, FRAMES // 4)
    rx = [after['queues'][i]['rx_packets'] - before['queues'][i]['rx_packets']
          for i in range(2)]
    assert rx == per_q, (rx, per_q)
    got, base = cpu_rx(after), cpu_rx(before)
    assert got[0] - base[0] == sum(rx), (after['cpus'], rx)
    assert got.get(1, 0) == base.get(1, 0), after['cpus']
    assert netguest.pktgen(g, 100, 64, 256, 300, queues=2)['packets'] == 100


@needs_testpmd
def test_poweroff(spread_guest):
    assert spread_guest.poweroff() == 0


@needs_testpmd
def test_pktgen_a_sender_per_cpu(spread_rx_guest):
    """pktgen queues=2: queue 0's half from CPU 0, queue 1's from CPU 1,
    each on its own flow; testpmd counts each half on its own queue."""
    g, n = spread_rx_guest, 20000
    assert pairs(g) == (2, 2, 2)
    base, qbase = g.pmd.port_stats(), g.pmd.queue_stats()
    r = netguest.pktgen(g, n, 64, 256, 300, queues=2)
    assert r['packets'] == n and r['queues'] == [n // 2, n // 2], r
    assert sorted(r['cpu_mpps']) == [0, 1] and all(v > 0 for v in r['cpu_mpps'].values()), r
    st = g.pmd.wait_rx(n, base, timeout=120)
    assert st['rx'] == n, 'pktgen sent %d, testpmd received %d' % (n, st['rx'])
    q = g.pmd.queue_stats()
    assert [q['rx'][i] - qbase['rx'][i] for i in range(2)] == r['queues']
    assert net_stats(g)['tx_wrong_cpu'] == 0


@needs_testpmd
def test_rx_guest_poweroff(spread_rx_guest):
    assert spread_rx_guest.poweroff() == 0


# ---------------------------------------------- MSI-X on a multi-queue tap

# Each flow (a source port: a client process each) stays on one pair;
# enough of them reach both.
FLOWS = 32


@pytest.fixture(scope='module')
def tap_guest():
    """Two vCPUs, two pairs on QEMU's virtio-net over a two-queue tap in a
    namespace, irq=msix: a vector per queue."""
    require_image(ELF)
    ns = netns.NetNs(queues=2)
    g = None
    try:
        g = Guest('--boot', 'elf', *smp_args(2), *netns.net_args(2), '--cmdline',
                  netns.ringside_cmdline(2) + ' irq=msix', name='pair-cpu-tap')
        g.opts.qemu = ns.qemu
        g.ns = ns
        g.start()
        yield g
    finally:
        if g:
            g.stop()
        ns.close()


def rx_vector(g, index):
    """(MSI-X vector, interrupts) of virtio-net queue `index`, from `virtio`."""
    out = g.command('virtio')
    block = re.search(r'(?ms)^\S.*?\bnet\b.*?(?=^\S|\Z)', out)
    assert block, out
    m = re.search(r'queue %d: \w+ size \d+, msix vector (\d+) \(\d+ irqs\)\s+'
                  r'added \d+ completed \d+ kicks \d+ suppressed \d+ interrupts (\d+)'
                  % index, block.group(0))
    assert m, out
    return int(m.group(1)), int(m.group(2))


@needs_netns
def test_each_rx_vector_on_its_owner(tap_guest):
    """net_irq=own: receiveq2's vector goes to CPU 1, which owns pair 1,
    and receiveq1's to CPU 0; no CPU takes the other's. UDP echoes from
    FLOWS source ports (the tap keeps each flow on one queue) reach both,
    each echo checked byte for byte by test_net_tap's client."""
    g = tap_guest
    assert pairs(g) == (2, 2, 2)
    for flow in range(FLOWS):
        r = subprocess.run(g.ns.prefix() + ['/usr/bin/python3', '-c', UDP_ECHO_CLIENT,
                                            netns.GUEST_IP, str(16 + flow)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.strip() == 'ok', r.stdout + r.stderr
    net = net_stats(g)
    rx = [q['rx_packets'] for q in net['queues']]
    assert min(rx) > 0, 'the tap put every flow on one queue: %s' % rx
    for queue, owner in ((0, 0), (2, 1)):
        # read around the queue's own count: a late frame (the host's ARP) may come between
        vector, _ = rx_vector(g, queue)
        before = irqs_per_cpu(g, vector, 2)
        _, interrupts = rx_vector(g, queue)
        after = irqs_per_cpu(g, vector, 2)
        assert 0 < before[owner] <= interrupts <= after[owner], (queue, before, interrupts)
        assert before[1 - owner] == after[1 - owner] == 0, (queue, before, after)
    handled = {c['cpu']: c['eth_rx'] for c in net['cpus']}
    assert [handled.get(c, 0) for c in range(2)] == rx, (net['cpus'], rx)


# One UDP echo per line on stdin from one source port (one flow, so one
# pair); prints "ok SECONDS" per echo, or dies on a wrong or missing one.
ECHO_PER_LINE = r'''
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('0.0.0.0', int(sys.argv[2])))
s.settimeout(60)
for line in sys.stdin:
    data = os.urandom(64)
    t0 = time.monotonic()
    s.sendto(data, (sys.argv[1], 7))
    got, peer = s.recvfrom(65536)
    if got != data or peer != (sys.argv[1], 7):
        sys.exit('echo mismatch')
    print('ok %.6f' % (time.monotonic() - t0), flush=True)
'''


class EchoFlow:
    """ECHO_PER_LINE in the namespace, from source port `port`."""

    def __init__(self, ns, port):
        self.proc = subprocess.Popen(ns.prefix() + ['/usr/bin/python3', '-c', ECHO_PER_LINE,
                                                    netns.GUEST_IP, str(port)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)

    def echo(self):
        """Seconds one echo took."""
        self.proc.stdin.write('\n')
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line.startswith('ok '), (line, self.proc.stderr.read() if not line else '')
        return float(line.split()[1])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(60)
        assert self.proc.returncode == 0, self.proc.stderr.read()


def flow_on_pair(g, pair):
    """An EchoFlow whose frames the tap hands to `pair` (probed: one echo
    each from successive source ports until one lands there)."""
    for port in range(40000, 40000 + FLOWS):
        before = [q['rx_packets'] for q in net_stats(g)['queues']]
        flow = EchoFlow(g.ns, port)
        flow.echo()
        after = [q['rx_packets'] for q in net_stats(g)['queues']]
        # `net`'s queues: an entry per pair
        if after[pair] > before[pair] and after[1 - pair] == before[1 - pair]:
            return flow
        flow.close()
    raise AssertionError('none of %d flows reached pair %d alone' % (FLOWS, pair))


@needs_netns
def test_busy_cpu1_does_not_delay_pair0_echoes(tap_guest):
    """One poll loop per CPU, on the data path: while CPU 1 spins for 4 s
    inside a request (`cpus busy 1 4000`), a UDP flow on pair 0 (CPU 0's)
    keeps being echoed, each echo well within a bound."""
    from test_poll_loop import Background

    g = tap_guest
    flow = flow_on_pair(g, 0)
    done = re.compile(r'(?m)^cpu 1 apic 1: busy (\d+) ms')
    during, worst = 0, 0.0
    try:
        start = len(g.output)
        busy = Background(g, 'cpus busy 1 4000', timeout=300)
        while busy.running:
            took = flow.echo()
            if busy.running and not done.search(g.output[start:]):
                during += 1
                worst = max(worst, took)
        out = busy.result(300)
    finally:
        flow.close()
    m = done.search(out)
    assert m and int(m.group(1)) >= 4000, out
    assert during >= 5, 'only %d echoes while CPU 1 was busy' % during
    assert worst < 2.0, 'an echo took %.2f s while CPU 1 was busy' % worst


@needs_netns
def test_tap_guest_poweroff(tap_guest):
    assert tap_guest.poweroff() == 0


@needs_testpmd
def test_bench_net_queues_per_layout():
    """ringside net --queues 2 --pair-cpu spread,cpu0: a boot per owner
    layout, each run counted whole by testpmd (net checks it), each
    CPU's Mpps where both send, none where CPU 0 sends alone; the Linux
    guest's two kpktgend threads beside them, each CPU's Mpps too."""
    count = 20000
    r = run_command('net', '--queues', '2', '--pair-cpu', 'spread,cpu0', '--rounds', '1',
                    '--count', str(count), '--rings', 'split', '--txpoll', '1', '--no-save',
                    '--json', '-', timeout=900)
    assert r.returncode == 0, (r.returncode, r.stdout[-1000:], r.stderr[-2000:])
    out = json.loads(r.stdout)['result']
    rows = {t['pair_cpu']: t for t in out['summary']}
    assert set(rows) == {'spread', 'cpu0'}, out['summary']
    for t in rows.values():
        assert t['packets'] == count and t['testpmd_rx'] == count, t
    assert sorted(rows['spread']['cpu_mpps_median']) == ['0', '1'], rows['spread']
    assert rows['cpu0']['cpu_mpps_median'] == {}, rows['cpu0']
    assert out['params']['queues'] == 2
    linux, = out['linux_summary']
    assert linux['packets'] == count and linux['testpmd_rx'] == count, linux
    assert sorted(linux['cpu_mpps_median']) == ['0', '1'], linux
    assert out['compare'][0]['ringside_txpoll1_mpps'] == rows['spread']['mpps_median']
