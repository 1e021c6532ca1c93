# SPDX-License-Identifier: MIT
"""Why a guest under KVM went silent: its vCPU's registers, read through
QEMU's QMP socket when a console wait times out.

On the nested host (host/nested: KVM in an L1 that QEMU's TCG runs with
emulated SVM) an L2 guest now and then stops in the middle of console
output, ringside and Linux alike. Its vCPU then holds a state that is not
the guest's: the general registers are the guest's (in ringside's case
RDX 0x3f8 and RCX counting down a rep outsb), but RIP, RSP, CR3, the GDT
and the IDT are L1's own (its kvm_amd module, its page tables far beyond
the guest's RAM, its cpu_entry_area), and KVM re-enters it forever on a
nested page fault while delivering a #PF. The emulated SVM handed the
host's state back as the guest's at an I/O intercept; nothing the guest
does can cause or avoid it. This module recognises that state, so the
timeout says so instead of blaming the guest.

The launcher adds the QMP socket when RINGSIDE_VCPU_WATCH=1 (host/nested
sets it inside L1).
"""

import json
import os
import re
import socket

ENV = 'RINGSIDE_VCPU_WATCH'
# The words every report of it begins with: tests look for them.
LOST = 'vCPU state lost by the nested hypervisor'
CANONICAL_HIGH = 0xffff800000000000


def wanted():
    return os.environ.get(ENV) == '1'


def qmp_command(path, command, timeout=5.0):
    """One QMP command's return value, through QEMU's socket at path."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        f = s.makefile('rwb')

        def call(cmd):
            f.write(json.dumps(cmd).encode() + b'\n')
            f.flush()
            while True:
                msg = json.loads(f.readline())
                if 'return' in msg or 'error' in msg:
                    return msg

        json.loads(f.readline())  # the greeting
        call({'execute': 'qmp_capabilities'})
        msg = call(command)
        if 'error' in msg:
            raise OSError(msg['error'].get('desc', 'QMP error'))
        return msg['return']


def registers(path):
    """`info registers` of the first vCPU, as {'RIP': int, 'CR3': int, ...}."""
    text = qmp_command(path, {'execute': 'human-monitor-command',
                              'arguments': {'command-line': 'info registers'}})
    regs = {}
    for name, value in re.findall(r'\b(R[A-Z0-9]+|CR[0-4])\s*=([0-9a-f]{8,16})\b', text):
        regs.setdefault(name, int(value, 16))
    return regs


def lost_state(regs, ram_bytes):
    """The report when the vCPU's page tables lie outside the guest's RAM
    (no guest's can), else None. RIP is named for the record."""
    cr3 = regs.get('CR3', 0) & ~0xfff
    if cr3 < ram_bytes or 'RIP' not in regs:
        return None
    return ('%s: the guest\'s vCPU runs with CR3 %#x, beyond its %d MiB of RAM, at RIP %#x '
            '(general registers still the guest\'s: RDX %#x, RCX %#x); see '
            'host/ringside/vcpu_watch.py'
            % (LOST, cr3, ram_bytes >> 20, regs['RIP'], regs.get('RDX', 0), regs.get('RCX', 0)))


def explain(path, ram_bytes):
    """One line for a timeout's message: what the vCPU holds, or ''."""
    try:
        report = lost_state(registers(path), ram_bytes)
    except (OSError, ValueError) as e:
        return ' (vCPU registers not readable: %s)' % e
    return '; ' + report if report else ''
