# SPDX-License-Identifier: MIT
"""vcpu_watch: a vCPU that holds its host's state is recognised from the
registers QEMU shows, and a guest's own state is not."""

from ringside import vcpu_watch

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
# ringside halted in its poll loop, identity-mapped below 512 MiB
OWN = LOST.replace('RIP=ffffffffc04a520c', 'RIP=0000000000104a1c').replace(
    'CR3=00000001217ce000', 'CR3=0000000000110000')


def regs_of(text, monkeypatch):
    monkeypatch.setattr(vcpu_watch, 'qmp_command', lambda path, cmd, timeout=5.0: text)
    return vcpu_watch.registers('unused')


def test_host_state_in_the_guest_is_reported(monkeypatch):
    regs = regs_of(LOST, monkeypatch)
    assert regs['CR3'] == 0x1217ce000 and regs['RIP'] == 0xffffffffc04a520c
    assert regs['RCX'] == 4 and regs['RDX'] == 0x3f8
    report = vcpu_watch.lost_state(regs, 512 << 20)
    assert report.startswith(vcpu_watch.LOST), report
    assert 'CR3 0x1217ce000, beyond its 512 MiB' in report and 'RIP 0xffffffffc04a520c' in report


def test_the_guests_own_state_is_not(monkeypatch):
    assert vcpu_watch.lost_state(regs_of(OWN, monkeypatch), 512 << 20) is None


def test_unreadable_registers_say_so():
    assert vcpu_watch.explain('/nonexistent/qmp.sock', 512 << 20).startswith(
        ' (vCPU registers not readable: ')
