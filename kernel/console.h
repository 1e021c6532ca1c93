/* SPDX-License-Identifier: MIT */
/* The serial console: COM1, a 16550 UART, input on its interrupt or polled. */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/io.h"

/* COM1, its line status register and the data-ready bit (console_rx_ready). */
#define COM1 0x3f8
#define UART_LSR 5
#define LSR_DATA_READY 0x01

void console_init(void);
void console_write(const char *buf, size_t len);
/* One received byte, or -1 when none is waiting. Never blocks. */
int console_getc(void);
/* A received byte is waiting: one port read, inline (the loop asks every pass). */
static inline bool console_rx_ready(void)
{
	return inb(COM1 + UART_LSR) & LSR_DATA_READY;
}

struct poll_ctx;

/*
 * Route the UART's receive interrupt to schedule @ctx (after lapic_init
 * and acpi_init); false when it cannot be, and input stays polled.
 */
bool console_irq_init(struct poll_ctx *ctx);
/*
 * The reader of the console looked for input (@input: and found some):
 * the time to look again, UINT64_MAX when the interrupt will say.
 */
uint64_t console_next_look(bool input);

#endif
