/* SPDX-License-Identifier: MIT */
/* GDT, TSS, IDT, exceptions and device interrupt vectors. */
#ifndef KERNEL_CPU_H
#define KERNEL_CPU_H

/*
 * struct irq_slot as kernel/isr.S reads it (a raise vector's counter
 * and context); cpu.c asserts the offsets.
 */
#define IRQ_SLOT_SIZE 32
#define IRQ_SLOT_COUNTER 0
#define IRQ_SLOT_CTX 8

#ifndef __ASSEMBLER__
#include <stdint.h>

/* Pushed by kernel/isr.S; the layout must match it. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

struct poll_ctx;

/*
 * What a general vector runs, published in its slot as one pointer: an
 * interrupt on another CPU reads handler and arg of the same action,
 * whatever irq_free_vector does meanwhile (the action's memory is the
 * owner's to keep until that CPU passed through its loop, xcpu_sync).
 */
struct irq_action {
	void (*handler)(void *arg);
	void *arg;
};

/* One per vector; the first two fields at the IRQ_SLOT_* offsets. */
struct irq_slot {
	uint64_t *counter; /* a raise vector's count (a queue's interrupts stat) */
	struct poll_ctx *ctx; /* a raise vector's context, scheduled where it is taken */
	uint32_t kind; /* enum irq_kind (cpu.c): free, or what its gate goes to */
	const struct irq_action *volatile action; /* general vectors */
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

/* A free vector whose interrupts run @action (its memory stays the caller's), or -1. */
int irq_alloc_vector(const struct irq_action *action);
/*
 * A free vector for an interrupt that only wakes the poll loop, or -1:
 * its entry (isr.S) counts it here and in *@counter and schedules @ctx
 * on the CPU that takes it, which must be @ctx's owner (the caller
 * routes it there), then EOIs and returns, with no C call.
 */
int irq_alloc_raise(uint64_t *counter, struct poll_ctx *ctx);
/*
 * A free vector whose gate goes to @entry, an isr.S stub that does all
 * the interrupt's work and its EOI itself (the wake-up IPI), or -1.
 */
int irq_alloc_entry(void (*entry)(void));
/*
 * The vector back to its default gate, its slot emptied (ignores -1).
 * Call it once the source is stopped; an interrupt already taken on
 * another CPU may still be in its entry until that CPU passes through
 * its loop (xcpu_sync), so what the slot pointed at lives until then.
 */
void irq_free_vector(int vector);

/* Interrupts taken on @vector by every CPU (each counts its own). */
uint64_t irq_count(int vector);

/* The unit tests run the loop's code in a process: there, no interrupts to mask. */
static inline void irq_enable(void)
{
#ifndef UNIT_TEST
	__asm__ __volatile__("sti" ::: "memory");
#endif
}

static inline void irq_disable(void)
{
#ifndef UNIT_TEST
	__asm__ __volatile__("cli" ::: "memory");
#endif
}

/* CPU vendor and brand string for `info`. */
void cpu_describe(char *buf, unsigned int len);

#endif /* __ASSEMBLER__ */
#endif
