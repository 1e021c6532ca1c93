// SPDX-License-Identifier: MIT
/*
 * COM1 at 0x3f8: 115200 8N1, FIFOs on, no interrupts. The poll loop asks
 * for input; output spins on the transmitter-empty bit, which under QEMU
 * is always set, so writing costs one port exit per byte.
 */
#include "kernel/console.h"
#include "kernel/io.h"

/* COM1, UART_LSR and LSR_DATA_READY: console.h (console_rx_ready is inline) */
#define UART_DATA 0
#define UART_IER 1
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_DLL 0
#define UART_DLM 1

#define LCR_8N1 0x03
#define LCR_DLAB 0x80
#define LSR_THR_EMPTY 0x20

static void uart_putc(char c)
{
	while (!(inb(COM1 + UART_LSR) & LSR_THR_EMPTY))
		cpu_relax();
	outb(COM1 + UART_DATA, (uint8_t)c);
}

void console_init(void)
{
	outb(COM1 + UART_IER, 0);
	outb(COM1 + UART_LCR, LCR_DLAB);
	outb(COM1 + UART_DLL, 1); /* 115200 / 1 */
	outb(COM1 + UART_DLM, 0);
	outb(COM1 + UART_LCR, LCR_8N1);
	outb(COM1 + UART_FCR, 0x07); /* enable and clear both FIFOs */
	outb(COM1 + UART_MCR, 0x03); /* DTR, RTS */
}

/* Terminals want CR LF; newlib hands us bare LF. */
void console_write(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n')
			uart_putc('\r');
		uart_putc(buf[i]);
	}
}

int console_getc(void)
{
	if (!console_rx_ready())
		return -1;
	return inb(COM1 + UART_DATA);
}
