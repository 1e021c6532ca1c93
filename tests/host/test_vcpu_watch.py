# SPDX-License-Identifier: MIT
"""vcpu_watch: a vCPU that holds its host's state is recognised from the
registers QEMU shows, and a guest's own state is not."""

import argparse
import struct

from ringside import machine, vcpu_watch

# `info registers` of an L2 ringside stopped under host/nested (abridged)
LOST = """CPU#0
RAX=0000000102202000 RBX=000000000000000f RCX=0000000000000004 RDX=00000000000003f8
RSI=00000000001652db RDI=0000000000165470 RBP=0000000000165300 RSP=ff444ba8003c3c50
R8 =00000000001313ff R9 =0000000000000000 R10=00000000000003c7 R11=00000000001654a9
RIP=ffffffffc04a520c RFL=00010246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=0
GDT=     fffffe0000001000 0000007f
IDT=     fffffe0000000000 00000fff
CR0=80050033 CR2=ffffffffc04a520c CR3=00000001217ce000 CR4=00000620
"""
# the same fault while GRUB loads ringside, under 512 MiB: L1's RIP, RSP and
# CR3 with GRUB's EFER and CR4, so QEMU shows them cut to 32 bits (abridged)
LOST_IN_GRUB = """CPU#0
EAX=16137000 EBX=000061d0 ECX=00005678 EDX=00000000
ESI=00000000 EDI=000d9800 EBP=0000875d ESP=444539a0
EIP=c070320c EFL=00010246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=0
CS =0010 00000000 ffffffff 00a09b00 DPL=0 CS64 [-RA]
GDT=     00001000 0000007f
IDT=     00000000 00000fff
CR0=80050033 CR2=00000000 CR3=0208a000 CR4=00000000
EFER=0000000000000000
"""
# ringside halted in its poll loop, identity-mapped below 512 MiB
OWN = LOST.replace('RIP=ffffffffc04a520c', 'RIP=0000000000104a1c').replace(
    'CR3=00000001217ce000', 'CR3=0000000000110000')
# halted with interrupts off at GRUB's first instructions, in SeaBIOS's
# 32-bit mode (its GDT, an empty IDT): a boot under host/nested (abridged)
HALTED_IN_GRUB = """CPU#0
EAX=003cd8cd EBX=00007d00 ECX=003c92e9 EDX=00000608
ESI=39e8811b EDI=00000000 EBP=1ffdfc00 ESP=000e9314
EIP=0000800b EFL=00000006 [-----P-] CPL=0 II=0 A20=1 SMM=0 HLT=1
CS =0008 00000000 ffffffff 00c09b00 DPL=0 CS32 [-RA]
GDT=     000f6180 00000037
IDT=     000f61be 00000000
CR0=00000011 CR2=00000000 CR3=00000000 CR4=00000000
"""
CODE = (0x100000, 0x139b6e)
# GRUB loading the kernel, in 32-bit protected mode without paging
GRUB = """CPU#0
EAX=00000000 EBX=00000000 ECX=00000200 EDX=000001f0
ESI=00000000 EDI=07f1c000 EBP=00000000 ESP=0000fff0
EIP=0000d4a2 EFL=00000006 [-----P-] CPL=0 II=0 A20=1 SMM=0 HLT=0
CR0=00000011 CR2=00000000 CR3=00000000 CR4=00000000
"""


def regs_of(text, monkeypatch):
    monkeypatch.setattr(vcpu_watch, 'qmp_command', lambda path, cmd, timeout=5.0: text)
    return vcpu_watch.registers('unused')


def test_host_state_in_the_guest_is_reported(monkeypatch):
    regs = regs_of(LOST, monkeypatch)
    assert regs['CR3'] == 0x1217ce000 and regs['RIP'] == 0xffffffffc04a520c
    assert regs['RCX'] == 4 and regs['RDX'] == 0x3f8
    for ringside in (True, False):
        report = vcpu_watch.lost_state(regs, 512 << 20, ringside)
        assert report.startswith(vcpu_watch.LOST), report
        assert 'page tables (CR3 0x1217ce000) beyond its 512 MiB of RAM' in report
        assert 'RIP 0xffffffffc04a520c' in report


def test_code_beyond_ringsides_ram_is_reported(monkeypatch):
    """L1's page tables under the guest's RAM size: for ringside the code
    address gives the fault away; for a Linux guest nothing does."""
    regs = regs_of(LOST_IN_GRUB, monkeypatch)
    assert regs['RIP'] == 0xc070320c and regs['CR3'] == 0x208a000
    report = vcpu_watch.lost_state(regs, 512 << 20, ringside=True)
    assert report.startswith(vcpu_watch.LOST), report
    assert 'code (RIP 0xc070320c) beyond its 512 MiB of RAM' in report, report
    assert vcpu_watch.lost_state(regs, 512 << 20, ringside=False) is None
    upper = regs_of(LOST.replace('CR3=00000001217ce000', 'CR3=000000001a2b3000'), monkeypatch)
    assert vcpu_watch.lost_state(upper, 512 << 20, ringside=True).startswith(vcpu_watch.LOST)


def test_firmware_in_flash_is_not(monkeypatch):
    """OVMF starts in its flash below 4 GiB, beyond any small guest's RAM."""
    regs = regs_of(GRUB.replace('EIP=0000d4a2', 'EIP=fffffff0'), monkeypatch)
    assert vcpu_watch.lost_state(regs, 512 << 20, ringside=True) is None


def test_the_guests_own_state_is_not(monkeypatch):
    for text in (OWN, GRUB):
        assert vcpu_watch.lost_state(regs_of(text, monkeypatch), 512 << 20, True) is None


def test_a_stop_outside_ringsides_code_is_reported(monkeypatch):
    """With ringside's code range known, a vCPU stopped outside it stopped
    before ringside ran; one in it (ringside's own hang) is not reported."""
    regs = regs_of(HALTED_IN_GRUB, monkeypatch)
    assert vcpu_watch.lost_state(regs, 512 << 20, True) is None
    report = vcpu_watch.outside_code(regs, CODE)
    assert report.startswith(vcpu_watch.BEFORE), report
    assert "RIP 0x800b, outside ringside's code (0x100000-0x139b6e)" in report, report
    assert vcpu_watch.outside_code(regs, None) is None
    assert vcpu_watch.outside_code(regs_of(OWN, monkeypatch), CODE) is None


def test_below_us_finds_either_report():
    text = 'GuestTimeout: no ready after 120 s; %s: RIP 0x800b, outside\nTraceback'
    assert vcpu_watch.below_us(text % vcpu_watch.BEFORE) == \
        '%s: RIP 0x800b, outside' % vcpu_watch.BEFORE
    assert vcpu_watch.below_us(text % vcpu_watch.LOST).startswith(vcpu_watch.LOST)
    assert vcpu_watch.below_us("no 'ringside: ready' after 120 s (vCPU: RIP 0x104a1c)") is None


def test_code_range_is_the_executable_segments(tmp_path):
    """Two executable PT_LOAD segments around a data one, as ringside's
    linker script lays them out; a non-ELF file has none."""
    phdrs = [(1, 5, 0x100000, 0x1a1), (1, 5, 0x101000, 0x38b6e), (1, 6, 0x14d000, 0x85970),
             (4, 4, 0x145048, 0x38)]
    head = bytearray(64)
    head[:5] = b'\x7fELF\x02'
    struct.pack_into('<Q', head, 0x20, 64)
    struct.pack_into('<HH', head, 0x36, 56, len(phdrs))
    table = b''.join(struct.pack('<IIQQQQQQ', kind, flags, 0, vaddr, vaddr, memsz, memsz, 8)
                     for kind, flags, vaddr, memsz in phdrs)
    elf = tmp_path / 'k.elf'
    elf.write_bytes(bytes(head) + table)
    assert vcpu_watch.code_range(str(elf)) == CODE
    other = tmp_path / 'bzImage'
    other.write_bytes(bytes(0x202) + b'HdrS')
    assert vcpu_watch.code_range(str(other)) is None


def test_an_unrecognised_state_is_named(monkeypatch):
    """A timeout that is not the fault still carries where the vCPU was;
    in 32-bit mode EIP stands for RIP."""
    monkeypatch.setattr(vcpu_watch, 'qmp_command', lambda path, cmd, timeout=5.0: GRUB)
    assert vcpu_watch.explain('unused', 512 << 20, True) == \
        ' (vCPU: RIP 0xd4a2 CR0 0x11 CR3 0x0)'
    monkeypatch.setattr(vcpu_watch, 'qmp_command', lambda path, cmd, timeout=5.0: LOST_IN_GRUB)
    assert vcpu_watch.explain('unused', 512 << 20, True).startswith('; ' + vcpu_watch.LOST)


def test_unreadable_registers_say_so():
    assert vcpu_watch.explain('/nonexistent/qmp.sock', 512 << 20, True).startswith(
        ' (vCPU registers not readable: ')


def test_ringside_images_are_told_from_linux(tmp_path):
    """The upper-half test applies to ringside's images only: its ISO and
    ESP, and ELF kernels; a bzImage (the Linux guests) is not one."""
    elf, bzimage = tmp_path / 'ringside.elf', tmp_path / 'bzImage'
    elf.write_bytes(b'\x7fELF' + bytes(60))
    bzimage.write_bytes(bytes(0x202) + b'HdrS' + bytes(60))
    for boot, image, want in (('iso', 'unused.iso', True), ('esp', 'unused.img', True),
                              ('elf', elf, True), ('elf', bzimage, False)):
        opts = argparse.Namespace(boot=boot, image=str(image))
        assert machine.boots_ringside(opts) is want, (boot, image)
