/* SPDX-License-Identifier: MIT */
/*
 * Interrupt and exception entry stubs. An exception's pushes a dummy error
 * code when the CPU does not, then its vector, saves the general registers
 * into a struct trap_frame (kernel/cpu.h) and calls trap_dispatch(frame).
 * A device or timer vector (32..255) only wakes the poll loop and counts,
 * so its stub saves what a C call may clobber (the System V caller-saved
 * registers and, with FXSAVE, the x87/SSE state), calls irq_dispatch
 * (vector) and returns: the callee-saved registers are kept by the C
 * code itself, and nothing reads a trap frame. Handlers run on the
 * interrupted stack (double fault: IST1); the kernel is built without a
 * red zone, so the CPU's pushes cannot overwrite live data.
 *
 * A vector that only wakes the poll loop (irq_alloc_raise: a virtqueue
 * whose work the loop does) gets a gate to isr_raise_N instead: it counts,
 * schedules the poll context its slot names and EOIs with one register and no
 * call, the flags it changes restored by iretq (SDM 3A 6.14).
 */
#include "kernel/cpu.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"

	.text

.macro ISR_NOERR vec
	.globl isr_\vec
isr_\vec:
	pushq	$0
	pushq	$\vec
	jmp	isr_common
.endm

.macro ISR_ERR vec
	.globl isr_\vec
isr_\vec:
	pushq	$\vec
	jmp	isr_common
.endm

/* Vectors 8, 10-14, 17, 21, 29, 30 push an error code (SDM 3A 6.15). */
ISR_NOERR 0
ISR_NOERR 1
ISR_NOERR 2
ISR_NOERR 3
ISR_NOERR 4
ISR_NOERR 5
ISR_NOERR 6
ISR_NOERR 7
ISR_ERR 8
ISR_NOERR 9
ISR_ERR 10
ISR_ERR 11
ISR_ERR 12
ISR_ERR 13
ISR_ERR 14
ISR_NOERR 15
ISR_NOERR 16
ISR_ERR 17
ISR_NOERR 18
ISR_NOERR 19
ISR_NOERR 20
ISR_ERR 21
ISR_NOERR 22
ISR_NOERR 23
ISR_NOERR 24
ISR_NOERR 25
ISR_NOERR 26
ISR_NOERR 27
ISR_NOERR 28
ISR_ERR 29
ISR_ERR 30
ISR_NOERR 31

/* Device interrupts (MSI-X) and the timer use vectors 32..255. */
.macro ISR_DEV vec
	.globl isr_\vec
isr_\vec:
	pushq	$\vec
	jmp	irq_common
.endm

	.altmacro
.macro ISR_IRQ vec
	ISR_DEV %vec
.endm
	.set vec, 32
	.rept 224
	ISR_IRQ %vec
	.set vec, vec + 1
	.endr

/*
 * An interrupt whose return address is the poll loop's hlt came inside
 * the interrupt shadow of its sti, which the platform let slip
 * (idle_halt.S): return past the hlt, so the loop sees what this
 * interrupt announced, and count it. @off: the return RIP's offset from
 * %rsp here. Two instructions when it did not.
 */
.macro HLT_SKIP off
	cmpq	$idle_hlt, \off(%rsp)
	jne	1f
	incq	\off(%rsp)
	incq	%gs:PERCPU_SHADOW_BREAKS
1:
.endm

/*
 * A raise vector: the taking CPU's count of it (struct percpu, which
 * IA32_GS_BASE points at), the slot's counter (the queue's interrupts
 * stat), then the slot's poll context scheduled on the taking CPU, its
 * owner (cpu.c routes raise vectors only there): the context's bit,
 * read now, ORed into the CPU's scheduled word with one locked OR, so
 * idle_wait's check with interrupts off sees it. A context taken out of
 * the loop has bit 0 and schedules nothing; a freed slot points at a
 * dummy counter and context (cpu.c). Then the EOI, one entry per way
 * lapic.c found to do it (cpu.c installs the matching table):
 * isr_raise_N writes 0 to the xAPIC register (SDM 3A 11.8.5), which
 * irq_alloc_raise made sure is mapped; isr_raise_x2_N writes the x2APIC
 * EOI MSR (SDM 3A 11.12.1.2); isr_raise_pv_N clears the CPU's own KVM
 * paravirtual EOI flag and writes the EOI only when KVM had not set it
 * (lapic.c).
 */
.macro RAISE_COUNT vec
	pushq	%rax
	HLT_SKIP 8
	incq	%gs:PERCPU_IRQS + \vec * 8
	movq	irq_slots + \vec * IRQ_SLOT_SIZE + IRQ_SLOT_COUNTER(%rip), %rax
	incq	(%rax)
	movq	irq_slots + \vec * IRQ_SLOT_SIZE + IRQ_SLOT_CTX(%rip), %rax
	movl	POLL_CTX_BIT_OFFSET(%rax), %eax
	lock orl	%eax, %gs:PERCPU_SCHEDULED
.endm

.macro ISR_RAISE vec
	.globl isr_raise_\vec
isr_raise_\vec:
	RAISE_COUNT \vec
	movq	lapic_eoi_reg(%rip), %rax
	movl	$0, (%rax)
	popq	%rax
	iretq
.endm

.macro ISR_RAISE_X2 vec
isr_raise_x2_\vec:
	RAISE_COUNT \vec
	jmp	isr_eoi_x2apic
.endm

/*
 * One instruction tests and clears the flag: KVM may change it whenever
 * this vCPU is out of the guest, never while it runs, so no lock prefix.
 */
.macro ISR_RAISE_PV vec
isr_raise_pv_\vec:
	RAISE_COUNT \vec
	btrl	$0, %gs:PERCPU_PV_EOI
	jnc	isr_eoi_write
	popq	%rax
	iretq
.endm

.macro ISR_RAISE_N vec
	ISR_RAISE %vec
	ISR_RAISE_X2 %vec
	ISR_RAISE_PV %vec
.endm
	.set vec, 32
	.rept 223
	ISR_RAISE_N %vec
	.set vec, vec + 1
	.endr

/* The tails the raise entries share; %rax is still to be restored. */
isr_eoi_write:
	cmpb	$0, lapic_x2apic(%rip)
	jne	isr_eoi_x2apic
	movq	lapic_eoi_reg(%rip), %rax
	movl	$0, (%rax)
	popq	%rax
	iretq

/* WRMSR takes the MSR in %ecx and the value in %edx:%eax (0: any other faults) */
isr_eoi_x2apic:
	pushq	%rcx
	pushq	%rdx
	movl	$0x80b, %ecx
	xorl	%eax, %eax
	xorl	%edx, %edx
	wrmsr
	popq	%rdx
	popq	%rcx
	popq	%rax
	iretq

/*
 * The wake-up IPI (poll_schedule from another CPU): the sender set the
 * context's bit before sending, so there is nothing to do but count it
 * in the taking CPU's struct percpu and EOI, the way this CPU does
 * (KVM's PV EOI flag when lapic.c registered one).
 */
	.globl	isr_wake
isr_wake:
	pushq	%rax
	HLT_SKIP 8
	incq	%gs:PERCPU_IPIS
	cmpb	$0, lapic_pv_eoi(%rip)
	je	isr_eoi_write
	btrl	$0, %gs:PERCPU_PV_EOI
	jnc	isr_eoi_write
	popq	%rax
	iretq

isr_common:
	pushq	%rax
	pushq	%rbx
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%rbp
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	mov	%rsp, %rdi
	/* 512 bytes of FXSAVE area, 16-byte aligned, below the frame */
	mov	%rsp, %rbx
	sub	$512, %rsp
	and	$~15, %rsp
	fxsave	(%rsp)
	cld
	call	trap_dispatch
	fxrstor	(%rsp)
	mov	%rbx, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rbp
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rbx
	popq	%rax
	add	$16, %rsp		/* vector and error code */
	iretq

/*
 * The vector sits above the ten saved registers. %rbp keeps the stack
 * pointer across the call (callee-saved); the FXSAVE area is 16-byte
 * aligned below it (SDM 1 10.5.1).
 */
irq_common:
	HLT_SKIP 8
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%rbp
	mov	80(%rsp), %edi
	mov	%rsp, %rbp
	sub	$512, %rsp
	and	$~15, %rsp
	fxsave	(%rsp)
	cld
	call	irq_dispatch
	fxrstor	(%rsp)
	mov	%rbp, %rsp
	popq	%rbp
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	add	$8, %rsp		/* vector */
	iretq

	.section .rodata
	.balign 8
	.globl isr_table
isr_table:
.macro ISR_ADDR vec
	.quad isr_\vec
.endm
	.set vec, 0
	.rept 256
	ISR_ADDR %vec
	.set vec, vec + 1
	.endr

/* Only vectors 32..254 have a raise entry; the others are never asked for. */
.macro RAISE_TABLE name, prefix
	.globl \name
\name:
	.fill 32, 8, 0
	.set vec, 32
	.rept 223
	RAISE_ADDR \prefix, %vec
	.set vec, vec + 1
	.endr
	.quad 0
.endm
.macro RAISE_ADDR prefix, vec
	.quad \prefix\vec
.endm
	RAISE_TABLE isr_raise_table, isr_raise_
	RAISE_TABLE isr_raise_x2_table, isr_raise_x2_
	RAISE_TABLE isr_raise_pv_table, isr_raise_pv_
