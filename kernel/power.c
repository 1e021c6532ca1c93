// SPDX-License-Identifier: MIT
/*
 * Leaving: ACPI S5 through PM1x_CNT (ACPI 6.4 4.8.3.2.1 and 16.1.7), reset
 * through the FADT reset register, the keyboard controller, or a triple
 * fault. Each step falls through to the next if the machine is still here.
 */
#include <stdio.h>

#include "kernel/acpi.h"
#include "kernel/io.h"
#include "kernel/power.h"
#include "kernel/time.h"

#define SLP_EN (1u << 13)
#define DEBUG_EXIT_PORT 0x501

/*
 * isa-debug-exit reads back as 0; an unclaimed ISA port reads as all ones.
 */
bool debug_exit_present(void)
{
	return inb(DEBUG_EXIT_PORT) == 0;
}

void debug_exit(int status)
{
	if (debug_exit_present())
		outb(DEBUG_EXIT_PORT, (uint8_t)status);
}

void power_off(void)
{
	const struct acpi_info *a = acpi_get();

	fflush(stdout);
	if (a->pm1a_cnt && a->s5_valid) {
		outw(a->pm1a_cnt, (uint16_t)(a->slp_typ_a << 10) | SLP_EN);
		if (a->pm1b_cnt)
			outw(a->pm1b_cnt, (uint16_t)(a->slp_typ_b << 10) | SLP_EN);
		udelay(100000);
	}
	printf("poweroff: ACPI S5 unavailable or failed; halting\n");
	fflush(stdout);
	halt_forever();
}

void reboot(void)
{
	const struct acpi_info *a = acpi_get();

	fflush(stdout);
	if (a->reset_valid) {
		outb(a->reset_port, a->reset_value);
		udelay(100000);
	}
	outb(0x64, 0xfe); /* 8042 pulse reset line */
	udelay(100000);

	/* an empty IDT makes the next exception a triple fault */
	static const struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) null_idt = { 0, 0 };
	__asm__ __volatile__("lidt %0; int3" : : "m"(null_idt));
	halt_forever();
}
