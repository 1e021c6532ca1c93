/* SPDX-License-Identifier: MIT */
/*
 * The one halt of the poll loop (idle.c), with interrupts off on entry:
 * `sti` takes effect after the next instruction, so an interrupt pending
 * since the caller's check ends the hlt instead of running before it and
 * leaving the CPU asleep with the work it announced (SDM 2B, STI).
 *
 * That interrupt shadow is the platform's to keep, and a nested
 * hypervisor can lose it: an exit taken between sti and hlt, then a VMRUN
 * that does not reload the shadow the exit saved (AMD APM vol. 2,
 * appendix B, VMCB offset 68h), opens the interrupt window on the hlt
 * itself. So every interrupt entry checks where it landed (isr.S,
 * HLT_SKIP): on idle_hlt it returns past the hlt, counts the break, and
 * the loop looks at its work again instead of sleeping through it.
 */
	.text
	.globl	idle_halt
	.globl	idle_hlt
idle_halt:
	sti
idle_hlt:
	hlt
	ret
