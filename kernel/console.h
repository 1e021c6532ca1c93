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

/*
 * Route the UART's receive interrupt (after lapic_init and acpi_init);
 * without an I/O APIC entry for it, input stays polled.
 */
void console_irq_init(void);
/*
 * Nonzero when the loop should look for input this pass: set by the
 * UART's interrupt, or always when input is polled. One load per pass.
 */
extern volatile uint8_t console_rx_look;
bool console_rx_take(void);
/* Input may be waiting: the shell reads the UART until it is empty. */
static inline bool console_rx_pending(void)
{
	return console_rx_look && console_rx_take();
}
/* The shell read a character: polled input looks every 1 ms for a while. */
void console_input_seen(void);

#endif
