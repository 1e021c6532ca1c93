# SPDX-License-Identifier: MIT
"""No lost wake-ups across CPUs: the cases the poll contract closed.

Every test here runs ringside with two or four vCPUs (MTTCG) and
virtio-net queue pairs owned by CPUs other than CPU 0, on QEMU's
virtio-net over a multi-queue tap in a namespace, and the conftest's
check after each test fails it if the guest's idle watchdog found a
wake-up the guest lost or a CPU broke a rule (an AP writing to the
console). The watchdog is off (idle_guard=0) where a lost wake-up must
show as a hang instead of as a late answer:

- a queue marked broken on CPU 1 gets its device reset by CPU 0's
  recovery context, which CPU 1 schedules with the wake-up IPI: without
  the IPI CPU 0 would sleep on, nothing else waking it;
- the pairs are torn down and set up again (a re-probe) while both
  carry traffic: each CPU takes its pair out of its loop before the
  memory goes, and the vectors are gone before that;
- `ping` gets its replies through a queue pair CPU 1 owns: CPU 1 hands
  each reply to CPU 0 as a message instead of writing into the waiting
  command's stack;
- four CPUs at once: UDP echoes on three pairs, vsock echoes and `cpus
  ping` together.
"""

import re
import subprocess
import threading
import time

import pytest

from ringside import netns

from conftest import ELF, require_image
from ringside_qemu import Guest
from smp_checks import smp_args
from test_net_pair_cpu import EchoFlow, net_stats
from test_net_tap import UDP_ECHO_CLIENT

needs_netns = pytest.mark.skipif(not netns.usable(),
                                 reason='needs root, ip netns and /dev/net/tun')

RECOVERY = re.compile(r'queue broken by the device .*: reset and re-probe #(\d+)')


def tap_guest(name, cpus, queues, keys='', vsock=False):
    """A started Guest on a `queues`-queue tap, `cpus` vCPUs, irq=msix; its
    namespace is g.ns (closed by stop_tap_guest)."""
    require_image(ELF)
    ns = netns.NetNs(queues=queues)
    g = Guest('--boot', 'elf', *smp_args(cpus), *(('--vsock',) if vsock else ()),
              *netns.net_args(queues), '--cmdline',
              netns.ringside_cmdline(queues) + ' irq=msix ' + keys, name=name)
    g.opts.qemu = ns.qemu
    g.ns = ns
    try:
        g.start()
    except BaseException:
        ns.close()
        raise
    return g


def stop_tap_guest(g):
    try:
        g.stop()
    finally:
        g.ns.close()


def udp_echo(g, *sizes):
    """The guest's UDP echo answers from the namespace, bytes compared."""
    r = subprocess.run(g.ns.prefix() + ['/usr/bin/python3', '-c', UDP_ECHO_CLIENT,
                                        netns.GUEST_IP, *(str(s) for s in sizes)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == 'ok', r.stdout + r.stderr


def cpu_rx(g):
    """{cpu: frames its protocol layer handled} (CPUs that handled none: 0)."""
    return {c['cpu']: c['eth_rx'] for c in net_stats(g)['cpus']}


def pairs_on(g, n):
    """The guest has `n` pairs in use, pair q owned by CPU q."""
    queues = net_stats(g)['queues']
    assert [q['cpu'] for q in queues] == list(range(n)), queues


def wait_pairs(g, n, timeout=60):
    """After a (re-)probe: the device acked `n` pairs and pair q is CPU q's."""
    deadline = time.monotonic() + timeout
    while True:
        net = net_stats(g)
        if net['queues_in_use'] == n and [q['cpu'] for q in net['queues']] == list(range(n)):
            return
        assert time.monotonic() < deadline, net
        time.sleep(0.2)


@needs_netns
def test_queue_broken_on_an_ap_recovers_without_a_guard():
    """CPU 1 marks its receive queue broken; CPU 0 resets and re-probes
    the device because CPU 1 scheduled CPU 0's recovery context, whose
    IPI is the only thing that can wake CPU 0 with idle_guard=0."""
    g = tap_guest('wakeups-recover', 2, 2, 'idle_guard=0')
    try:
        wait_pairs(g, 2)
        udp_echo(g, 64)
        start = len(g.output)
        # receiveq2 (pair 1, CPU 1's), half a second later: CPU 0 is asleep then
        out = g.command('virtio break 0 2 500')
        assert out == 'virtio: device 0 queue 2 marked broken on cpu 1 after 500 ms', out
        m = g.wait_for(RECOVERY, timeout=60)
        assert m.group(1) == '1', g.output[start:]
        wait_pairs(g, 2)
        udp_echo(g, 64, 1472)
        assert 'broken-queue resets: 1' in g.command('virtio')
    finally:
        stop_tap_guest(g)


@needs_netns
def test_reprobe_while_pairs_carry_traffic():
    """Ten re-probes (pairs to CPU 0 and back to their own CPUs) while a
    flow per pair keeps the tap sending: each one ends, the guest answers
    throughout, and every flow still echoes after."""
    g = tap_guest('wakeups-reprobe', 2, 2)
    stop = threading.Event()
    errors = []

    def flood(port):
        flow = EchoFlow(g.ns, port)
        try:
            while not stop.is_set():
                try:
                    flow.echo()
                except AssertionError:
                    pass   # an echo lost while its pair was being re-probed
        except Exception as e:   # the flow itself died: a failure
            errors.append(repr(e))
        finally:
            flow.proc.kill()
            flow.proc.wait(60)

    threads = [threading.Thread(target=flood, args=(41000 + i,)) for i in range(4)]
    try:
        wait_pairs(g, 2)
        for t in threads:
            t.start()
        for i in range(10):
            assert g.command('set net_pair_cpu=%s' % ('cpu0' if i % 2 == 0 else 'spread'),
                             timeout=120).endswith('net_pair_cpu=%s'
                                                   % ('cpu0' if i % 2 == 0 else 'spread'))
            assert 'cpus: 2 online' in g.command('info')
        stop.set()
        for t in threads:
            t.join(120)
            assert not t.is_alive(), 'a flow did not stop'
        assert not errors, errors
        wait_pairs(g, 2)
        udp_echo(g, 64, 1472, 1)
        assert 'exception' not in g.output, g.output[-2000:]
    finally:
        stop.set()
        stop_tap_guest(g)


@needs_netns
def test_ping_replies_through_an_aps_pair():
    """The tap hands every reply of one ICMP flow to one queue pair (its
    hash of the addresses): the guest's address is changed until the
    replies come in on pair 1, CPU 1's, and then every ping is answered."""
    g = tap_guest('wakeups-ping', 2, 2)
    try:
        wait_pairs(g, 2)
        for last in range(15, 15 + 40):
            ip = '10.0.2.%d' % last
            assert g.command('set ip=%s' % ip) == 'ip=%s' % ip
            before = cpu_rx(g)
            out = g.command('ping %s count=2' % netns.HOST_IP, timeout=60)
            if 'ping: 2 sent, 2 received' in out and cpu_rx(g).get(1, 0) > before.get(1, 0):
                break
        else:
            pytest.fail('no guest address whose ping replies the tap puts on pair 1')
        out = g.command('ping %s count=20' % netns.HOST_IP, timeout=120)
        assert 'ping: 20 sent, 20 received' in out, out
    finally:
        stop_tap_guest(g)


@needs_netns
def test_four_cpus_at_once():
    """-smp 4 under MTTCG: UDP echo flows on three pairs (CPUs 0, 1, 2),
    a vsock echo connection and `cpus ping` together, every byte
    compared; nothing waits for the watchdog (the conftest's check)."""
    from test_poll_loop import Background
    from test_vsock import ECHO, connect_when_up, echo_exchange, pattern

    g = tap_guest('wakeups-smp4', 4, 3, vsock=True)
    try:
        wait_pairs(g, 3)
        ping = Background(g, 'cpus ping 20000', timeout=900)
        flows = [EchoFlow(g.ns, 42000 + i) for i in range(6)]
        with connect_when_up(g.vsock_uds, ECHO) as s:
            n = 0
            while ping.running or n < 50:
                data = pattern(64 + n % 512, n)
                assert echo_exchange(s, data, timeout=60) == data
                for f in flows:
                    f.echo()
                n += 1
        out = ping.result(900)
        for f in flows:
            f.close()
        assert len(re.findall(r'(?m)^cpu \d apic \d+: 20000 round trips', out)) == 3, out
        rx = cpu_rx(g)
        assert sum(1 for c in (0, 1, 2) if rx.get(c, 0) > 0) >= 2, rx
    finally:
        stop_tap_guest(g)


def test_an_ap_may_not_print():
    """The console is CPU 0's: `cpus print 1` makes CPU 1 try, its write
    is dropped and counted, and CPU 0 reports it as a bug."""
    require_image(ELF)
    g = Guest('--boot', 'elf', *smp_args(2), name='wakeups-print')
    try:
        g.start()
        out = g.command('cpus print 1')
        assert 'cpu 1 apic 1: tried to print; see the bug line' in out.splitlines(), out
        # CPU 0 says the bug at its next pass, which may come while the
        # command still waits for CPU 1's answer: inside its output, or after
        bug = re.compile(r'BUG: cpu 1 wrote to the console, which is cpu 0\'s: '
                         r'(\d+) writes dropped')
        m = bug.search(out) or g.wait_for(bug, timeout=30)
        assert int(m.group(1)) >= 1
        # the conftest's check fails a test on that line: here it is the subject
        g.checked_output()
    finally:
        g.stop()
