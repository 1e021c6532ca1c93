# SPDX-License-Identifier: MIT
"""The Linux baseline guest (host/linux-guest: Debian's kernel with a
small server on ringside's ports) as every command and test boots and
asks it: its launcher arguments, defined here once, and its console's
answers (its server's own line protocol, guest-server.c).
"""

import itertools
import os
import re

from .images import LINUX_KERNEL, linux_guest

# The kernel's command line: the console on COM1, quiet, reboot on panic.
CMDLINE = 'console=ttyS0 quiet panic=-1'
# With virtio-net on vhost-user under TCG: QEMU 7.2 segfaults in
# msix_set_vector_notifiers() (from vhost_net_start()) when a guest starts
# it with MSI-X enabled; ringside polls (irq=poll) and never enables it,
# so Linux takes its virtqueue interrupts as INTx.
NO_MSI = 'pci=nomsi'


def linux_launch_args(name='linux', cmdline=''):
    """`ringside run` arguments that boot the Linux guest `name` (a key of
    images.LINUX_GUESTS) with `cmdline` added to its kernel's."""
    kernel, initrd = linux_guest(name)
    return ['--boot', 'elf', '--kernel', kernel,
            '--cmdline', ' '.join(w for w in (CMDLINE, cmdline) if w),
            '--qemu-arg=-initrd', '--qemu-arg=' + initrd]


def net_launch_args(net, accel='tcg', machine='q35'):
    """`ringside run` arguments that boot the Linux guest with virtio-net
    `net` (QEMU arguments toward a frame peer, as ringside gets them) and
    INTx for its interrupts (NO_MSI)."""
    return ['--accel', accel, '--machine', machine, *linux_launch_args('linux', NO_MSI), '--',
            *net]


def kernel_version(path=LINUX_KERNEL):
    """The version string in a bzImage's setup header (boot protocol
    field kernel_version: offset of the string, minus 0x200, at 0x20e)."""
    try:
        with open(path, 'rb') as f:
            head = f.read(0x8000)
        off = int.from_bytes(head[0x20e:0x210], 'little') + 0x200
        return head[off:head.index(b'\0', off)].decode().split()[0]
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return os.path.basename(path)


def interrupts(console, timeout=60):
    """The guest's /proc/interrupts text (its server's `interrupts`)."""
    console.send('interrupts\n')
    m = console.wait_for(r'interrupts-begin\r?\n((?:.|\n)*?)interrupts-end', timeout,
                         what='/proc/interrupts')
    return m.group(1)


def virtio_irqs(console, timeout=60):
    """Interrupts the guest counted on its virtio lines (all CPUs)."""
    total = 0
    for line in interrupts(console, timeout).splitlines():
        if 'virtio' not in line:
            continue
        for word in line.split(':', 1)[1].split():
            if not word.isdigit():
                break
            total += int(word)
    return total


RX_QUEUE_RE = re.compile(r'virtio\d+-input\.(\d+)$')


def rx_queue_irqs(text):
    """{RX queue: interrupts on all CPUs} from /proc/interrupts text
    (the virtioN-input.K lines)."""
    out = {}
    for line in text.splitlines():
        m = RX_QUEUE_RE.search(line.strip())
        if m and ':' in line:
            counts = itertools.takewhile(str.isdigit, line.split(':', 1)[1].split())
            out[int(m.group(1))] = sum(int(c) for c in counts)
    return out


def rx_irqs(console, timeout=60):
    return rx_queue_irqs(interrupts(console, timeout))


# its `queues`; a server from before that command prints its commands
QUEUES_RE = re.compile(r'queues rx (\d+) tx \d+|queues error: [^\r\n]*|commands: ')


def queue_pairs(console, timeout=60):
    """Queue pairs the guest enabled: its eth0's RX queues in sysfs; None
    from an initrd built before that command (make linux-guest) or
    without sysfs queues."""
    console.send('queues\n')
    m = console.wait_for(QUEUES_RE, timeout, what="the Linux guest's queues")
    return int(m.group(1)) if m.group(1) else None


PKTGEN = re.compile(r'pktgen-result: sent (\d+) of (\d+) in (\d+) usec (\d+) pps errors (\d+)'
                    r' size (\d+) burst (\d+)')
# its end, with each queue's "q=SENT/USEC" before it when several sent
PKTGEN_END = re.compile(r'(?:pktgen-queues:([ \d=/]*)\r?\n)?'
                        r'(pktgen(?:-result| error): [^\r\n]*)\r?\n')


class PktgenError(Exception):
    """The guest's pktgen said it failed."""


def pktgen(console, dst_ip, dst_mac, count, size, burst, timeout, queues=1):
    """Run the guest's kernel pktgen; its result as a dict (packets,
    count, seconds, mpps, errors, size, burst, cpu_mpps). With queues > 1,
    kpktgend_q on CPU q sends queue q's share: cpu_mpps is {q: Mpps} as
    each thread timed its own frames ({} with one queue)."""
    console.send('pktgen %s %s %d %d %d%s\n' % (dst_ip, dst_mac, count, size, burst,
                                                ' %d' % queues if queues > 1 else ''))
    got = console.wait_for(PKTGEN_END, timeout, what='pktgen result')
    console.wait_for(r'pktgen-done', timeout, what='pktgen-done')
    m = PKTGEN.search(got.group(2))
    if not m:
        raise PktgenError('Linux guest: %s' % got.group(2).strip())
    usec = int(m.group(3))
    return {'packets': int(m.group(1)), 'count': int(m.group(2)), 'seconds': usec / 1e6,
            'mpps': int(m.group(1)) / usec if usec else 0.0, 'errors': int(m.group(5)),
            'size': int(m.group(6)), 'burst': int(m.group(7)),
            'cpu_mpps': {int(q): int(n) / int(us) for q, n, us in
                         re.findall(r'(\d+)=(\d+)/(\d+)', got.group(1) or '') if int(us)}}
