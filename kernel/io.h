/* SPDX-License-Identifier: MIT */
/* Port I/O, MSRs, CPUID and the TSC: the few instructions C cannot say. */
#ifndef KERNEL_IO_H
#define KERNEL_IO_H

#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ __volatile__("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ __volatile__("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ __volatile__("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	__asm__ __volatile__("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	__asm__ __volatile__("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	__asm__ __volatile__("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ __volatile__("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
	__asm__ __volatile__("cpuid"
			     : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			     : "a"(leaf), "c"(subleaf));
}

static inline void cpu_relax(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}

static inline void __attribute__((noreturn)) halt_forever(void)
{
	for (;;)
		__asm__ __volatile__("cli; hlt");
}

static inline uint32_t mmio_read32(volatile void *addr)
{
	return *(volatile uint32_t *)addr;
}

static inline void mmio_write32(volatile void *addr, uint32_t v)
{
	*(volatile uint32_t *)addr = v;
}

#endif
