// SPDX-License-Identifier: MIT
/*
 * Descriptor tables. Ring 0 only: a code and a data segment, a TSS whose
 * only job is IST1, a clean stack for double faults (a stack overflow
 * would otherwise triple-fault silently), and 256 interrupt gates. The
 * IDT is shared; each CPU has its own GDT and TSS, because LTR marks a
 * TSS descriptor busy and a second CPU loading it would fault (SDM 3A
 * 8.2.2; 7.2.2 in older editions).
 */
#include <stdbool.h>
#include <stddef.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "kernel/cpu.h"
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/printk.h"

#define KERNEL_CS 0x08
#define KERNEL_DS 0x10
#define TSS_SEL 0x18
#define IRQ_FIRST 32
#define IRQ_SPURIOUS 0xff

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));

struct idt_gate {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_hi;
	uint32_t reserved;
} __attribute__((packed));

struct table_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

extern const uint64_t isr_table[256];
extern const uint64_t isr_raise_table[256];
extern const uint64_t isr_raise_x2_table[256];
extern const uint64_t isr_raise_pv_table[256];

_Static_assert(sizeof(struct irq_slot) == IRQ_SLOT_SIZE, "isr.S indexes irq_slots");
_Static_assert(offsetof(struct irq_slot, counter) == IRQ_SLOT_COUNTER, "isr.S: counter");
_Static_assert(offsetof(struct irq_slot, ctx) == IRQ_SLOT_CTX, "isr.S: ctx");

#define DOUBLE_FAULT_STACK 16384

struct cpu_tables {
	uint64_t gdt[5];
	struct tss tss;
	uint8_t double_fault_stack[DOUBLE_FAULT_STACK] __attribute__((aligned(16)));
};

static struct cpu_tables bsp_tables;
static struct idt_gate idt[256];
struct irq_slot irq_slots[256];

static const char *const exception_names[32] = {
	"divide error",
	"debug",
	"NMI",
	"breakpoint",
	"overflow",
	"bound range",
	"invalid opcode",
	"device not available",
	"double fault",
	"coprocessor overrun",
	"invalid TSS",
	"segment not present",
	"stack fault",
	"general protection",
	"page fault",
	"reserved",
	"x87 FP error",
	"alignment check",
	"machine check",
	"SIMD FP error",
	"virtualization",
	"control protection",
};

static void gdt_init(struct cpu_tables *t)
{
	uint64_t base = (uint64_t)(uintptr_t)&t->tss;
	uint64_t limit = sizeof(t->tss) - 1;
	struct table_ptr ptr = { sizeof(t->gdt) - 1, (uint64_t)(uintptr_t)t->gdt };

	t->gdt[0] = 0;
	t->gdt[1] = 0x00af9a000000ffffULL; /* 64-bit code */
	t->gdt[2] = 0x00cf92000000ffffULL; /* data */
	/* 64-bit TSS descriptor: 16 bytes, type 9 (available), present */
	t->gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ULL << 40) |
		    ((limit >> 16 & 0xf) << 48) | ((base >> 24 & 0xff) << 56);
	t->gdt[4] = base >> 32;

	t->tss.ist[0] = (uint64_t)(uintptr_t)(t->double_fault_stack + DOUBLE_FAULT_STACK);
	t->tss.iomap_base = sizeof(t->tss);

	__asm__ __volatile__("lgdt %0\n\t"
			     "pushq %1\n\t"
			     "leaq 1f(%%rip), %%rax\n\t"
			     "pushq %%rax\n\t"
			     "lretq\n"
			     "1:\n\t"
			     "mov %2, %%ds\n\t"
			     "mov %2, %%es\n\t"
			     "mov %2, %%ss\n\t"
			     "ltr %w3"
			     :
			     : "m"(ptr), "i"(KERNEL_CS), "r"(KERNEL_DS), "r"(TSS_SEL)
			     : "rax", "memory");
}

static void idt_set(int vec, uint64_t handler, int ist)
{
	idt[vec].offset_lo = handler & 0xffff;
	idt[vec].selector = KERNEL_CS;
	idt[vec].ist = ist;
	idt[vec].type_attr = 0x8e; /* present, DPL 0, 64-bit interrupt gate */
	idt[vec].offset_mid = (handler >> 16) & 0xffff;
	idt[vec].offset_hi = handler >> 32;
}

static void idt_load(void)
{
	struct table_ptr ptr = { sizeof(idt) - 1, (uint64_t)(uintptr_t)idt };

	__asm__ __volatile__("lidt %0" : : "m"(ptr));
}

static void idt_init(void)
{
	for (int v = 0; v < 256; v++)
		idt_set(v, isr_table[v], v == 8 ? 1 : 0);
	idt_load();
}

void cpu_init(void)
{
	gdt_init(&bsp_tables);
	idt_init();
}

struct cpu_tables *cpu_tables_new(void)
{
	struct cpu_tables *t = memalign(16, sizeof(*t));

	if (t)
		memset(t, 0, sizeof(*t));
	return t;
}

void cpu_init_ap(struct cpu_tables *t)
{
	gdt_init(t);
	idt_load();
}

/*
 * A gate changed at run time is written with interrupts off: a vector
 * that fired halfway through the 16-byte write would jump to a torn
 * address.
 */
static void idt_switch(int vec, uint64_t handler)
{
	uint64_t flags;

	__asm__ __volatile__("pushfq; popq %0; cli" : "=r"(flags)::"memory");
	idt_set(vec, handler, 0);
	if (flags & (1u << 9)) /* IF */
		irq_enable();
}

/* What a vector's gate goes to; set and cleared by CPU 0 alone. */
enum irq_kind { IRQ_FREE, IRQ_GENERAL, IRQ_RAISE, IRQ_OWN_ENTRY };

/*
 * Where a freed raise slot points: an entry that read the slot before
 * the gate went back counts here and schedules nothing (bit 0).
 */
static uint64_t freed_counter;
static struct poll_ctx freed_ctx = { .name = "freed vector" };

static int irq_claim(enum irq_kind kind)
{
	for (int v = IRQ_FIRST; v < IRQ_SPURIOUS; v++) {
		if (irq_slots[v].kind == IRQ_FREE) {
			irq_slots[v].kind = kind;
			return v;
		}
	}
	return -1;
}

int irq_alloc_vector(const struct irq_action *action)
{
	int v = action ? irq_claim(IRQ_GENERAL) : -1;

	if (v >= 0)
		__atomic_store_n(&irq_slots[v].action, action, __ATOMIC_RELEASE);
	return v;
}

/* The raise entries that EOI the way lapic.c chose; NULL: no LAPIC. */
static const uint64_t *raise_table(void)
{
	switch (lapic_eoi_kind()) {
	case LAPIC_EOI_XAPIC:
		return isr_raise_table;
	case LAPIC_EOI_X2APIC:
		return isr_raise_x2_table;
	case LAPIC_EOI_KVM_PV:
		return isr_raise_pv_table;
	default:
		return NULL;
	}
}

/*
 * The gate is switched while nothing can send the vector yet (the caller
 * routes it afterwards) and back only after its source was reset.
 */
int irq_alloc_raise(uint64_t *counter, struct poll_ctx *ctx)
{
	const uint64_t *table = raise_table();
	int v;

	if (!counter || !ctx || !table)
		return -1; /* isr.S EOIs through the LAPIC */
	v = irq_claim(IRQ_RAISE);
	if (v < 0)
		return -1;
	irq_slots[v].counter = counter;
	irq_slots[v].ctx = ctx;
	idt_switch(v, table[v]);
	return v;
}

int irq_alloc_entry(void (*entry)(void))
{
	int v = irq_claim(IRQ_OWN_ENTRY);

	if (v >= 0)
		idt_switch(v, (uint64_t)(uintptr_t)entry);
	return v;
}

/*
 * The gate first, then the slot: an entry that already read the gate
 * reads either the old pointers (alive until the caller's xcpu_sync) or
 * the harmless ones.
 */
void irq_free_vector(int vector)
{
	struct irq_slot *s;

	if (vector < IRQ_FIRST || vector >= IRQ_SPURIOUS)
		return;
	s = &irq_slots[vector];
	if (s->kind == IRQ_RAISE || s->kind == IRQ_OWN_ENTRY)
		idt_switch(vector, isr_table[vector]);
	__atomic_store_n(&s->action, NULL, __ATOMIC_RELEASE);
	if (s->kind == IRQ_RAISE) {
		__atomic_store_n(&s->counter, &freed_counter, __ATOMIC_RELEASE);
		__atomic_store_n(&s->ctx, &freed_ctx, __ATOMIC_RELEASE);
	}
	s->kind = IRQ_FREE;
}

uint64_t irq_count(int vector)
{
	uint64_t n = 0;

	if ((unsigned int)vector >= 256)
		return 0;
	for (unsigned int i = 0; i < PERCPU_MAX_CPUS; i++)
		if (percpu_of(i))
			n += percpu_of(i)->irqs[vector];
	return n;
}

static uint64_t read_cr2(void)
{
	uint64_t v;

	__asm__ __volatile__("mov %%cr2, %0" : "=r"(v));
	return v;
}

/*
 * Walk saved frame pointers (everything is built with them). Each frame is
 * checked to lie on a plausible stack before it is followed, so a corrupt
 * chain ends the trace instead of faulting again.
 */
static void backtrace(uint64_t rbp)
{
	for (int depth = 0; depth < 16 && rbp; depth++) {
		const uint64_t *frame = (const uint64_t *)(uintptr_t)rbp;

		if ((rbp & 7) || rbp < 0x1000 || rbp >= (1ULL << 32))
			break;
		early_printf("  #%d %016llx\n", depth, (unsigned long long)frame[1]);
		if (frame[0] <= rbp)
			break;
		rbp = frame[0];
	}
}

static void __attribute__((noreturn)) die(const struct trap_frame *f)
{
	const char *name = f->vector < 32 && exception_names[f->vector] ?
				   exception_names[f->vector] :
				   "unknown";

	early_printf("\n*** exception %llu (%s) error %#llx\n", (unsigned long long)f->vector, name,
		     (unsigned long long)f->error);
	early_printf("RIP %016llx CS %llx RFLAGS %016llx RSP %016llx\n", (unsigned long long)f->rip,
		     (unsigned long long)f->cs, (unsigned long long)f->rflags,
		     (unsigned long long)f->rsp);
	early_printf("CR2 %016llx\n", (unsigned long long)read_cr2());
	early_printf("RAX %016llx RBX %016llx RCX %016llx RDX %016llx\n",
		     (unsigned long long)f->rax, (unsigned long long)f->rbx,
		     (unsigned long long)f->rcx, (unsigned long long)f->rdx);
	early_printf("RSI %016llx RDI %016llx RBP %016llx R8  %016llx\n",
		     (unsigned long long)f->rsi, (unsigned long long)f->rdi,
		     (unsigned long long)f->rbp, (unsigned long long)f->r8);
	early_printf("R9  %016llx R10 %016llx R11 %016llx R12 %016llx\n", (unsigned long long)f->r9,
		     (unsigned long long)f->r10, (unsigned long long)f->r11,
		     (unsigned long long)f->r12);
	early_printf("R13 %016llx R14 %016llx R15 %016llx\n", (unsigned long long)f->r13,
		     (unsigned long long)f->r14, (unsigned long long)f->r15);
	early_printf("backtrace:\n  #- %016llx\n", (unsigned long long)f->rip);
	backtrace(f->rbp);
	early_printf("halted.\n");
	halt_forever();
}

void trap_dispatch(struct trap_frame *f);
void irq_dispatch(unsigned int vector);

/* Exceptions (vectors 0..31): isr.S sends only those here. */
void trap_dispatch(struct trap_frame *f)
{
	die(f);
}

/* Vectors 32..255, from isr.S's short path (no trap frame). */
void irq_dispatch(unsigned int vector)
{
	const struct irq_action *a;

	if (vector == IRQ_SPURIOUS)
		return; /* no EOI for spurious interrupts (SDM 3A 11.9) */
	this_cpu()->irqs[vector & 0xff]++; /* where it was taken: `cpus irq` */
	a = __atomic_load_n(&irq_slots[vector & 0xff].action, __ATOMIC_ACQUIRE);
	if (a)
		a->handler(a->arg);
	lapic_eoi();
}

void cpu_describe(char *buf, unsigned int len)
{
	uint32_t r[4], brand[13] = { 0 };
	char vendor[13];

	cpuid(0, 0, r);
	memcpy(vendor, &r[1], 4);
	memcpy(vendor + 4, &r[3], 4);
	memcpy(vendor + 8, &r[2], 4);
	vendor[12] = '\0';
	cpuid(0x80000000, 0, r);
	if (r[0] >= 0x80000004) {
		for (unsigned int i = 0; i < 3; i++)
			cpuid(0x80000002 + i, 0, &brand[i * 4]);
	}
	char *b = (char *)brand;

	while (*b == ' ')
		b++;
	snprintf(buf, len, "%s %s", vendor, *b ? b : "(no brand string)");
}
