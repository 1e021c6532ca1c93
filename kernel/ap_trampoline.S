/* SPDX-License-Identifier: MIT */
/*
 * Where an application processor starts: a start-up IPI with vector V
 * starts it in real mode at CS = V << 8, IP = 0, i.e. at the start of
 * page V (SDM 3A 11.6.1, start-up delivery mode; AMD APM vol. 2, 16.5). smp.c copies this code
 * to such a page below 1 MiB and fills in the fields ap_trampoline.h
 * names. The AP then does what boot/entry.S does on the BSP, with the
 * BSP's page tables: protected mode, PAE, EFER.LME, paging (SDM 3A
 * 10.8.5, "Initializing IA-32e Mode"), and calls the kernel's C entry
 * on its own stack.
 *
 * Nothing here is executed in place: it is data in .rodata, and every
 * address it uses is the page's base (EBX) plus an offset, or a field
 * smp.c patched with the page's address.
 */
#include "kernel/ap_trampoline.h"

#define CR0_PE			(1 << 0)
#define CR0_MP			(1 << 1)
#define CR0_EM			(1 << 2)
#define CR0_NE			(1 << 5)
#define CR0_WP			(1 << 16)
#define CR0_PG			(1 << 31)
#define CR4_PAE			(1 << 5)
#define CR4_OSFXSR		(1 << 9)
#define CR4_OSXMMEXCPT		(1 << 10)
#define MSR_EFER		0xc0000080
#define EFER_LME		(1 << 8)

	.section .rodata.ap_trampoline, "a"
	.balign 16
	.globl ap_trampoline_start
ap_trampoline_start:
	.code16
	cli
	cld
	mov	%cs, %ax
	mov	%ax, %ds
	movzwl	%ax, %ebx
	shl	$4, %ebx		/* EBX = the page's linear address */
	lgdtl	TR_GDT_DESC
	mov	%cr0, %eax
	or	$CR0_PE, %eax
	mov	%eax, %cr0
	ljmpl	*TR_FAR32

	.code32
tr_protected:
	mov	$TR_SEL_DATA, %ax
	mov	%ax, %ds
	mov	%ax, %es
	mov	%ax, %ss
	mov	%cr4, %eax
	or	$(CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
	mov	%eax, %cr4
	mov	TR_CR3(%ebx), %eax
	mov	%eax, %cr3
	mov	$MSR_EFER, %ecx
	rdmsr
	or	$EFER_LME, %eax
	wrmsr
	/* paging on; FPU/SSE as on the BSP: MP set, EM clear, native errors */
	mov	%cr0, %eax
	and	$~CR0_EM, %eax
	or	$(CR0_PE | CR0_MP | CR0_NE | CR0_WP | CR0_PG), %eax
	mov	%eax, %cr0
	ljmpl	*TR_FAR64(%ebx)

	.code64
tr_long:
	/* a switch to 64-bit mode leaves the registers' upper halves undefined */
	mov	%ebx, %ebx
	mov	$TR_SEL_DATA, %ax
	mov	%ax, %ds
	mov	%ax, %es
	mov	%ax, %ss
	xor	%ax, %ax
	mov	%ax, %fs
	mov	%ax, %gs
	mov	TR_STACK(%rbx), %rsp
	mov	TR_ARG(%rbx), %rdi
	xor	%ebp, %ebp		/* end of the frame-pointer chain */
	fninit
	call	*TR_ENTRY(%rbx)
1:	cli
	hlt
	jmp	1b

	.org	TR_GDT
	.quad	0
	.quad	0x00cf9a000000ffff	/* 0x08: 32-bit code */
	.quad	0x00cf92000000ffff	/* 0x10: data */
	.quad	0x00af9a000000ffff	/* 0x18: 64-bit code */
	.org	TR_GDT_DESC
	.short	4 * 8 - 1
	.long	TR_GDT			/* + the page's address */
	.org	TR_FAR32
	.long	tr_protected - ap_trampoline_start	/* + the page's address */
	.short	TR_SEL_CODE32
	.org	TR_FAR64
	.long	tr_long - ap_trampoline_start		/* + the page's address */
	.short	TR_SEL_CODE64
	.org	TR_SIZE
	.globl ap_trampoline_end
ap_trampoline_end:
