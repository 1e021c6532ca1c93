/* SPDX-License-Identifier: MIT */
/* GDT, TSS, IDT, exceptions and device interrupt vectors. */
#ifndef KERNEL_CPU_H
#define KERNEL_CPU_H

#include <stdint.h>

/* Pushed by kernel/isr.S; the layout must match it. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

void cpu_init(void);

/* A free vector for a device interrupt (MSI-X), or -1. */
int irq_alloc_vector(void (*handler)(void *arg), void *arg);
void irq_free_vector(int vector); /* ignores -1 */
uint64_t irq_count(int vector);

static inline void irq_enable(void)
{
	__asm__ __volatile__("sti" ::: "memory");
}

static inline void irq_disable(void)
{
	__asm__ __volatile__("cli" ::: "memory");
}

/* CPU vendor and brand string for `info`. */
void cpu_describe(char *buf, unsigned int len);

#endif
