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
timeout says so instead of blaming the guest: page tables beyond the
guest's RAM (any guest), or, for ringside, code beyond its RAM (ringside
runs identity-mapped, and the firmware and GRUB before it run in RAM too).
When the fault comes while GRUB runs, the vCPU keeps GRUB's EFER and CR4
(no long mode) and QEMU shows L1's RIP and CR3 cut to 32 bits (EIP
0xc070320c, CR3 0x208a000: under 512 MiB), so the code test is the one
that holds for every ringside boot.

A ringside boot also stops, now and then, before ringside runs: once seen
halted with interrupts off at GRUB's first instructions (EIP 0x800b) but in
SeaBIOS's 32-bit mode (its GDT, an empty IDT), a state neither of them
leaves. When the image's code is known (its ELF), a vCPU stopped outside
that code is reported as stopped before ringside ran, with its registers:
ringside's code was not running when it stopped. A state neither test
recognises is named in the timeout's message (RIP, CR0, CR3) for the
record.

The launcher adds the QMP socket when RINGSIDE_VCPU_WATCH=1 (host/nested
sets it inside L1).
"""

import json
import os
import re
import socket
import struct

ENV = 'RINGSIDE_VCPU_WATCH'
# The words each kind of report begins with: tests look for them.
LOST = 'vCPU state lost by the nested hypervisor'
BEFORE = 'vCPU stopped before ringside ran'
FLASH = (0xff000000, 1 << 32)   # the firmware's flash, where it starts
PT_LOAD, PF_X = 1, 1


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
    for name, value in re.findall(r'\b([RE][A-Z0-9]+|CR[0-4])\s*=([0-9a-f]{8,16})\b', text):
        regs.setdefault(name, int(value, 16))
    if 'RIP' not in regs and 'EIP' in regs:
        regs['RIP'] = regs['EIP']  # a vCPU in 32-bit mode: GRUB, the firmware
    return regs


def lost_state(regs, ram_bytes, ringside):
    """The report when the vCPU's page tables lie outside the guest's RAM
    (no guest's can) or, with `ringside`, it runs code outside its RAM
    (neither ringside nor GRUB nor the firmware, once out of flash, does),
    else None."""
    cr3, rip = regs.get('CR3', 0) & ~0xfff, regs.get('RIP')
    if rip is None:
        return None
    if cr3 >= ram_bytes:
        why = 'page tables (CR3 %#x) beyond its %d MiB of RAM' % (cr3, ram_bytes >> 20)
    elif ringside and rip >= ram_bytes and not FLASH[0] <= rip < FLASH[1]:
        why = 'code (RIP %#x) beyond its %d MiB of RAM, where ringside has none' % (
            rip, ram_bytes >> 20)
    else:
        return None
    return ('%s: the guest\'s vCPU runs with %s; RIP %#x, CR3 %#x (general registers '
            'still the guest\'s: RDX %#x, RCX %#x); see host/ringside/vcpu_watch.py'
            % (LOST, why, rip, cr3, regs.get('RDX', 0), regs.get('RCX', 0)))


def outside_code(regs, code):
    """With `code`, the (start, end) of ringside's code: the report when the
    vCPU stopped outside it, else None. In real mode RIP is an offset into
    CS, below 64 KiB and so below ringside's code too."""
    rip = regs.get('RIP')
    if code is None or rip is None or code[0] <= rip < code[1]:
        return None
    return ('%s: RIP %#x, outside ringside\'s code (%#x-%#x), in the firmware or GRUB '
            '(CR0 %#x, CR3 %#x); see host/ringside/vcpu_watch.py'
            % (BEFORE, rip, code[0], code[1], regs.get('CR0', 0), regs.get('CR3', 0)))


def code_range(elf_path):
    """(lowest, end) of the executable segments of a 64-bit ELF file, or
    None if it is not one."""
    with open(elf_path, 'rb') as f:
        head = f.read(64)
        if len(head) < 64 or head[:5] != b'\x7fELF\x02':
            return None
        phoff, = struct.unpack_from('<Q', head, 0x20)
        phentsize, phnum = struct.unpack_from('<HH', head, 0x36)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    spans = []
    for i in range(len(table) // phentsize if phentsize >= 56 else 0):
        kind, flags, _, vaddr, _, _, memsz = struct.unpack_from('<IIQQQQQ', table, i * phentsize)
        if kind == PT_LOAD and flags & PF_X and memsz:
            spans.append((vaddr, vaddr + memsz))
    return (min(a for a, _ in spans), max(b for _, b in spans)) if spans else None


def below_us(text):
    """The report in `text` (to its line's end) when it says something below
    the guest stopped it, lost state or stopped before ringside ran; else
    None."""
    for marker in (LOST, BEFORE):
        if marker in text:
            return text[text.index(marker):].split('\n')[0]
    return None


def explain(path, ram_bytes, ringside, code=None):
    """One line for a timeout's message: what the vCPU holds. `ringside`:
    the guest is ringside; `code`: its code's range, if known."""
    try:
        regs = registers(path)
    except (OSError, ValueError) as e:
        return ' (vCPU registers not readable: %s)' % e
    report = lost_state(regs, ram_bytes, ringside) or outside_code(regs, code)
    if report:
        return '; ' + report
    return ' (vCPU: %s)' % ' '.join('%s %#x' % (k, regs[k])
                                    for k in ('RIP', 'CR0', 'CR3') if k in regs)
