# SPDX-License-Identifier: MIT
"""exits --floor: the notification floor, VM exits per 64 B round trip
with each side of the ring halting or polling.

A round trip costs a guest exits for three things: its kick (the notify
write), the interrupt the device sends it, and its halt. A guest that
polls its rings without interrupts (ringside's idle=poll irq=poll)
needs neither the interrupt nor the halt; a device that polls its rings
(our back end's --poll, the kernel's vhost-net with poll-us) suppresses
the kick (VRING_USED_F_NO_NOTIFY or avail_event, 2.7.7.2), and then a
round trip needs no exit at all. Each cell boots one guest against one
device, under KVM with the guest alone on the host:

  vhost-vsock     the kernel's vhost-vsock (it never polls), AF_VSOCK
  ours            our vhost-user back end, sleeping on its eventfds
  ours --poll     our back end busy-polling its rings
  vhost-net       the kernel's vhost-net, UDP echo (port 7) from a netns
  vhost-net pN    the same, busy polling N us after each packet (poll-us)

and each guest halting (default keys) and polling: ringside with
idle=poll irq=poll; Linux with idle=poll and socket busy polling
(net.core.busy_read and busy_poll, which its UDP echo's blocking reads
use), since its virtio drivers have no mode without interrupts.
"""

import argparse
import os
import time

import ringside as rr

from . import kvm_exits, linux_guest, netns
from .benchlib import Progress, booted, run_bench, wait_vsock_cid, wait_vsock_up
from .images import is_linux
from .process import read_text
from .table import Column, Table

CID = 3
PROG = 'ringside exits'
# Linux's polling: idle=poll, and busy reads long enough to span a nested
# round trip, so a recvfrom that would sleep spins on the queue instead.
LINUX_POLL = ('idle=poll sysctl.net.core.busy_read=2000 '
              'sysctl.net.core.busy_poll=2000')
RINGSIDE_POLL = 'idle=poll irq=poll'
DEVICES = ('vhost-vsock', 'ours', 'ours --poll', 'vhost-net')


def windows(text):
    """--poll-us: busy-poll windows in microseconds, 0..100000, comma separated."""
    try:
        values = [int(w) for w in text.split(',')]
    except ValueError:
        values = [-1]
    if any(v < 0 or v > 100000 for v in values):
        raise argparse.ArgumentTypeError('expected microseconds (0..100000) like 0,2000, got %r'
                                         % text)
    return values


def device_list(opts):
    """The cells' devices, in order: vhost-net once per busy-poll window."""
    out = [d for d in DEVICES if d != 'vhost-net']
    for us in opts.poll_us:
        out.append('vhost-net' if us == 0 else 'vhost-net p%d' % us)
    return out


def poll_us_of(device):
    return int(device.rpartition(' p')[2]) if ' p' in device else 0


def guest_keys(which, polling):
    if is_linux(which):
        return LINUX_POLL if polling else ''
    return RINGSIDE_POLL if polling else ''


def launcher_args(which, device, keys):
    """`ringside run`'s arguments for one cell (the netns's QEMU is set apart)."""
    args = ['--accel', 'kvm', '--boot', 'elf']
    if device == 'vhost-vsock':
        args += ['--vsock', '--vsock-transport', 'kernel', '--vsock-cid', str(CID)]
    elif device.startswith('ours'):
        args += ['--vsock', '--vsock-transport', 'vhost-user']
        if device.endswith('--poll'):
            args.append('--vsock-arg=--poll')
    else:
        args += netns.net_args(1, poll_us_of(device))
    if is_linux(which):
        return args + linux_guest.linux_launch_args(which, keys)
    words = [keys] if keys else []
    if device.startswith('vhost-net'):
        words.insert(0, netns.ringside_cmdline(1))
    return args + (['--cmdline', ' '.join(words)] if words else [])


def one_cell(which, device, keys, opts, counter):
    """{kind: exits per round trip, 'p50 us', 'round trips'} for one boot."""
    ns = netns.NetNs() if device.startswith('vhost-net') else None
    try:
        lopts = rr.parse_args(launcher_args(which, device, keys))
        if ns:
            lopts.qemu = ns.qemu
        with booted(lopts, 'kvm', 'exit-floor', linux=is_linux(which)) as launch:
            if device == 'vhost-vsock':
                wait_vsock_cid(CID, prog=PROG)
                target, prefix = ['--cid', str(CID)], []
            elif ns:
                if is_linux(which):
                    launch.console.send('udpecho\n')
                    launch.console.wait_for(r'udpecho ready', 120)
                target, prefix = ['--udp', '%s:7' % netns.GUEST_IP], ns.prefix()
            else:
                wait_vsock_up(launch.opts.vsock_uds, prog=PROG)
                target, prefix = ['--uds', launch.opts.vsock_uds], []
            args = ['rr'] + target + ['--sessions', '1', '--size', '64',
                                      '--time', str(opts.time), '--warmup', '200']
            before = counter.snapshot()
            res = run_bench(args, opts.time * 20 + 300, PROG, prefix=prefix)
            after = counter.snapshot()
            if not is_linux(which):
                launch.poweroff()
    finally:
        if ns:
            ns.close()
    r = res['results'][0]
    cell = kvm_exits.delta(before, after, max(r['transactions'], 1))
    cell['p50 us'] = r['p50'] / 1000.0
    cell['round trips'] = r['transactions']
    return cell


FLOOR_KINDS = ('exits', 'hlt', 'notify', 'msr', 'intr', 'window', 'other', 'inj')


def print_floor(cells):
    t = Table([Column('guest', 13, left=True), Column('device', 16, left=True)]
              + [Column(k, 7, '%.3f') for k in FLOOR_KINDS]
              + [Column('p50 us', 8, '%.1f'), Column('rts', 7, '%d')],
              title='\nVM exits per 64 B round trip, each side halting or polling (KVM '
                    'tracepoints; inj: interrupts injected, not exits)')
    for (guest, device), c in cells.items():
        t.row(guest, device, *[c.get(k) for k in FLOOR_KINDS], c['p50 us'], c['round trips'])
    t.print()


def run(opts):
    """Every cell, each guest halting then polling against each device."""
    cells = {}
    todo = [(which, polling, device) for which in opts.guests
            for polling in (False, True) for device in device_list(opts)]
    if any(d.startswith('vhost-net') for _, _, d in todo):
        if not netns.usable():
            raise SystemExit('%s: error: --floor: the vhost-net cells need root, '
                             'ip netns and /dev/net/tun' % PROG)
        if not os.path.exists('/dev/vhost-net'):
            raise SystemExit('%s: error: --floor: no /dev/vhost-net (modprobe vhost_net)'
                             % PROG)
    with kvm_exits.ExitCounter() as counter:
        progress = Progress(PROG, len(todo))
        for which, polling, device in todo:
            name = '%s %s' % (which, 'poll' if polling else 'halt')
            progress.step('%s, %s' % (name, device))
            cells[(name, device)] = one_cell(which, device, guest_keys(which, polling),
                                             opts, counter)
    print('%s --floor: KVM (halt_poll_ns %s), %s; %g s of 64 B round trips a cell; '
          'ringside polling: %s; Linux polling: %s' % (
              PROG, read_text('/sys/module/kvm/parameters/halt_poll_ns') or '?',
              time.strftime('%Y-%m-%d %H:%M'),
              opts.time, RINGSIDE_POLL, LINUX_POLL))
    print_floor(cells)
    return {'%s/%s' % k: v for k, v in cells.items()}
