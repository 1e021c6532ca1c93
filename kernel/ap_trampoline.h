/* SPDX-License-Identifier: MIT */
/*
 * The application processors' start-up code (kernel/ap_trampoline.S):
 * smp.c copies it to a page below 1 MiB, fills in the data fields at
 * these offsets from the page's start, and points a start-up IPI at it.
 * Shared by the assembler and C, so both agree on the layout.
 */
#ifndef KERNEL_AP_TRAMPOLINE_H
#define KERNEL_AP_TRAMPOLINE_H

#define TR_GDT 0x200 /* null, 32-bit code 0x08, data 0x10, 64-bit code 0x18 */
#define TR_GDT_DESC 0x220 /* limit, 32-bit linear base: patched */
#define TR_FAR32 0x228 /* far pointer to the 32-bit part: offset patched */
#define TR_FAR64 0x230 /* far pointer to the 64-bit part: offset patched */
#define TR_CR3 0x238 /* the BSP's page tables, below 4 GiB */
#define TR_ENTRY 0x240 /* the kernel's C entry, called with TR_ARG */
#define TR_STACK 0x248 /* this AP's stack top, 16-byte aligned */
#define TR_ARG 0x250 /* the AP's index in smp.c's table */
#define TR_SIZE 0x258

#define TR_SEL_CODE32 0x08
#define TR_SEL_DATA 0x10
#define TR_SEL_CODE64 0x18

#ifndef __ASSEMBLER__
extern const char ap_trampoline_start[], ap_trampoline_end[];
#endif

#endif
