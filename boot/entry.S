/* SPDX-License-Identifier: MIT */
/*
 * The 32-bit entries (multiboot2 and PVH) and the switch to long mode.
 *
 * Both loaders enter in 32-bit protected mode with paging off: multiboot2
 * with EAX = 0x36d76289 and EBX = the boot information (Multiboot2 spec 3.3),
 * PVH with EBX = struct hvm_start_info (Xen's arch-x86/hvm/start_info.h).
 * We build page tables that identity-map the first 4 GiB with 2 MiB pages
 * (RAM, the PCI hole, LAPIC and IOAPIC), enable PAE, long mode, paging and
 * SSE, and call boot_entry(magic, info) in 64-bit mode. kernel/paging.c
 * extends the map for RAM and devices above 4 GiB later.
 */
#define MB2_MAGIC		0xe85250d6
#define MB2_ARCH_I386		0
#define MB2_TAG_END		0
#define MB2_TAG_FLAGS		4
#define PVH_MAGIC_MARK		0x336ec578	/* hvm_start_info.magic */

#define CR0_PE			(1 << 0)
#define CR0_MP			(1 << 1)
#define CR0_EM			(1 << 2)
#define CR0_NE			(1 << 5)
#define CR0_WP			(1 << 16)
#define CR0_PG			(1 << 31)
#define CR4_PAE			(1 << 5)
#define CR4_OSFXSR		(1 << 9)
#define CR4_OSXMMEXCPT		(1 << 10)
#define CR4_PGE			(1 << 7)
#define MSR_EFER		0xc0000080
#define EFER_LME		(1 << 8)

#define PTE_P			(1 << 0)
#define PTE_W			(1 << 1)
#define PTE_PS			(1 << 7)

	.section .multiboot2, "a"
	.balign 8
mb2_header:
	.long MB2_MAGIC
	.long MB2_ARCH_I386
	.long mb2_header_end - mb2_header
	.long -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
	/* console flags tag: we have our own (serial) console, no EGA needed */
	.balign 8
	.short MB2_TAG_FLAGS
	.short 0
	.long 12
	.long 2
	.balign 8
	.short MB2_TAG_END
	.short 0
	.long 8
mb2_header_end:

	/* PVH: XEN_ELFNOTE_PHYS32_ENTRY (18), the 32-bit entry point. */
	.section .note.Xen, "a"
	.balign 4
	.long 4			/* name size */
	.long 4			/* desc size */
	.long 18		/* XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz "Xen"
	.long pvh_entry

	.section .boot.text, "ax"
	.code32
	.globl multiboot2_entry
multiboot2_entry:
	cli
	cld
	mov	%eax, %edi		/* magic: first argument of boot_entry */
	mov	%ebx, %esi		/* info: second argument */
	jmp	long_mode_switch

	.globl pvh_entry
pvh_entry:
	cli
	cld
	mov	$PVH_MAGIC_MARK, %edi
	mov	%ebx, %esi

long_mode_switch:
	mov	$boot_stack_top, %esp

	/* PML4[0] -> PDPT, PDPT[0..3] -> PD0..PD3, 2048 x 2 MiB pages. */
	mov	$boot_pdpt, %eax
	or	$(PTE_P | PTE_W), %eax
	mov	%eax, boot_pml4

	mov	$boot_pd, %eax
	or	$(PTE_P | PTE_W), %eax
	xor	%ecx, %ecx
1:	mov	%eax, boot_pdpt(, %ecx, 8)
	add	$4096, %eax
	inc	%ecx
	cmp	$4, %ecx
	jne	1b

	xor	%ecx, %ecx
2:	mov	%ecx, %eax
	shl	$21, %eax
	or	$(PTE_P | PTE_W | PTE_PS), %eax
	mov	%eax, boot_pd(, %ecx, 8)
	mov	%ecx, %eax
	shr	$11, %eax		/* high dword: (index * 2 MiB) >> 32 */
	mov	%eax, boot_pd + 4(, %ecx, 8)
	inc	%ecx
	cmp	$2048, %ecx
	jne	2b

	mov	%cr4, %eax
	or	$(CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
	mov	%eax, %cr4

	mov	$boot_pml4, %eax
	mov	%eax, %cr3

	mov	$MSR_EFER, %ecx
	rdmsr
	or	$EFER_LME, %eax
	wrmsr

	/* Paging on; FPU/SSE usable: MP set, EM clear, native FPU errors. */
	mov	%cr0, %eax
	and	$~CR0_EM, %eax
	or	$(CR0_PE | CR0_MP | CR0_NE | CR0_WP | CR0_PG), %eax
	mov	%eax, %cr0

	lgdt	boot_gdt_desc
	ljmp	$0x08, $long_mode_entry

	.code64
long_mode_entry:
	mov	$0x10, %ax
	mov	%ax, %ds
	mov	%ax, %es
	mov	%ax, %ss
	xor	%ax, %ax
	mov	%ax, %fs
	mov	%ax, %gs
	mov	$boot_stack_top, %rsp
	xor	%ebp, %ebp		/* end of the frame-pointer chain */
	fninit
	/* zero-extend the 32-bit arguments */
	mov	%edi, %edi
	mov	%esi, %esi
	call	boot_entry
3:	hlt
	jmp	3b

/*
 * The GNU-EFI loader's entry (boot/efi_main.c): 64-bit, paging on with the
 * firmware's identity map, after ExitBootServices, with RDI = a struct
 * boot_info the loader filled in memory below 4 GiB. The firmware's page
 * tables, GDT and stack belong to memory the kernel will reuse, so build the
 * same tables as the 32-bit path (the loader already zeroed .bss), switch to
 * them, the kernel's GDT and boot stack, then let boot_entry_efi() copy the
 * hand-off into the kernel's own boot_info.
 */
	.code64
	.globl efi_handoff_entry
efi_handoff_entry:
	cli
	cld
	mov	%rdi, %r12
	mov	$boot_stack_top, %rsp

	mov	$boot_pdpt, %eax
	or	$(PTE_P | PTE_W), %eax
	mov	%rax, boot_pml4

	mov	$boot_pd, %eax
	or	$(PTE_P | PTE_W), %eax
	xor	%ecx, %ecx
1:	mov	%rax, boot_pdpt(, %rcx, 8)
	add	$4096, %rax
	inc	%ecx
	cmp	$4, %ecx
	jne	1b

	xor	%ecx, %ecx
2:	mov	%rcx, %rax
	shl	$21, %rax
	or	$(PTE_P | PTE_W | PTE_PS), %rax
	mov	%rax, boot_pd(, %rcx, 8)
	inc	%ecx
	cmp	$2048, %ecx
	jne	2b

	/*
	 * Exactly the CR4 of the 32-bit path: PGE off also flushes global
	 * TLB entries the firmware's tables may have left behind.
	 */
	mov	$(CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
	mov	%rax, %cr4
	mov	$boot_pml4, %eax
	mov	%rax, %cr3

	mov	%cr0, %rax
	and	$~CR0_EM, %rax
	or	$(CR0_MP | CR0_NE | CR0_WP), %rax
	mov	%rax, %cr0

	lgdt	boot_gdt_desc64
	pushq	$0x08
	pushq	$3f
	lretq
3:	mov	$0x10, %ax
	mov	%ax, %ds
	mov	%ax, %es
	mov	%ax, %ss
	xor	%ax, %ax
	mov	%ax, %fs
	mov	%ax, %gs
	xor	%ebp, %ebp
	fninit
	mov	%r12, %rdi
	call	boot_entry_efi
4:	hlt
	jmp	4b

	.section .rodata
	.balign 16
	.globl boot_gdt
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff	/* 0x08: 64-bit code, DPL 0 */
	.quad 0x00cf92000000ffff	/* 0x10: data */
boot_gdt_end:
boot_gdt_desc:
	.short boot_gdt_end - boot_gdt - 1
	.long boot_gdt
	/* lgdt in 64-bit mode reads an 8-byte base */
	.balign 8
boot_gdt_desc64:
	.short boot_gdt_end - boot_gdt - 1
	.quad boot_gdt

	.section .bss
	.balign 4096
	.globl boot_pml4
boot_pml4:	.skip 4096
boot_pdpt:	.skip 4096
boot_pd:	.skip 4096 * 4
	.balign 16
	.globl boot_stack_bottom
boot_stack_bottom:
	.skip 65536
	.globl boot_stack_top
boot_stack_top:
