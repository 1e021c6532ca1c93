/* SPDX-License-Identifier: MIT */
/* GDT, TSS, IDT, exceptions and device interrupt vectors. */
#ifndef KERNEL_CPU_H
#define KERNEL_CPU_H

/*
 * struct irq_slot as kernel/isr.S reads it (a raise vector's count,
 * counter and raise); cpu.c asserts the offsets.
 */
#define IRQ_SLOT_SIZE 40
#define IRQ_SLOT_COUNT 0
#define IRQ_SLOT_COUNTER 8
#define IRQ_SLOT_RAISE 16

#ifndef __ASSEMBLER__
#include <stdint.h>

/* Pushed by kernel/isr.S; the layout must match it. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

/* One per vector; the first three fields at the IRQ_SLOT_* offsets. */
struct irq_slot {
	uint64_t count; /* interrupts taken: irq_count() */
	uint64_t *counter; /* a raise vector's second count (a queue's stat) */
	uint32_t raise; /* a raise vector's poll_raise() bits */
	uint32_t own_entry; /* non-zero: the gate goes to an entry of its own */
	void (*handler)(void *arg); /* general vectors */
	void *arg;
};

extern struct irq_slot irq_slots[256];

void cpu_init(void);

/*
 * An application processor's own GDT, TSS and double-fault stack: the
 * BSP allocates them (the heap is the BSP's), the AP loads them and the
 * shared IDT with cpu_init_ap. NULL when the heap is exhausted.
 */
struct cpu_tables;
struct cpu_tables *cpu_tables_new(void);
void cpu_init_ap(struct cpu_tables *t);

/* A free vector for a device interrupt (MSI-X), or -1. */
int irq_alloc_vector(void (*handler)(void *arg), void *arg);
/*
 * A free vector for an interrupt that only wakes the poll loop, or -1:
 * its entry (isr.S) counts it here and in *@counter, ORs @raise into the
 * loop's raised bits (poll_raised), EOIs and returns, with no C call.
 */
int irq_alloc_raise(uint64_t *counter, uint32_t raise);
/*
 * A free vector whose gate goes to @entry, an isr.S stub that does all
 * the interrupt's work and its EOI itself (the mail IPI), or -1.
 */
int irq_alloc_entry(void (*entry)(void));
void irq_free_vector(int vector); /* ignores -1 */

static inline uint64_t irq_count(int vector)
{
	return (unsigned int)vector < 256 ? irq_slots[vector].count : 0;
}

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

#endif /* __ASSEMBLER__ */
#endif
