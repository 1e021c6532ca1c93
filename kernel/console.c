// SPDX-License-Identifier: MIT
/*
 * COM1 at 0x3f8: 115200 8N1, FIFOs on. Input interrupts when the I/O APIC
 * can route ISA IRQ 4 (console_irq_init), else the poll loop looks at the
 * line status: every pass, and while idle every 100 ms (1 ms for a
 * second after a keystroke). Output spins on the transmitter-empty bit,
 * which under QEMU is almost always set, so writing costs one line status
 * read and one data write per byte.
 *
 * Every UART access is a VM exit into QEMU, so with the interrupt a
 * wake-up the UART did not cause reads nothing from it: the interrupt
 * raises the console poller, and only then does the shell read the UART
 * until the line status says it is empty.
 */
#include <stdbool.h>
#include <stdio.h>

#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/io.h"
#include "kernel/ioapic.h"
#include "kernel/poll.h"
#include "kernel/stats.h"
#include "kernel/time.h"

/* COM1, UART_LSR and LSR_DATA_READY: console.h (console_rx_ready is inline) */
#define UART_DATA 0
#define UART_IER 1
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_DLL 0
#define UART_DLM 1
#define COM1_IRQ 4

#define LCR_8N1 0x03
#define LCR_DLAB 0x80
#define LSR_THR_EMPTY 0x20
#define IER_RX_AVAILABLE 0x01
#define MCR_DTR_RTS 0x03
#define MCR_OUT2 0x08 /* gates the UART's interrupt line on a PC */

#define LOOK_IDLE_NS 100000000ULL
#define LOOK_BUSY_NS 1000000ULL
#define LOOK_BURST_NS 1000000000ULL

struct console_counters {
	uint64_t rx_interrupts;
	uint64_t rx_looks; /* shell_poll runs: interrupts or polled looks */
};

static struct console_counters cc;
volatile uint8_t console_rx_look = 1; /* polled until the interrupt is routed */
static bool rx_irq;
static uint64_t busy_until; /* polled: look every 1 ms until then */

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
	outb(COM1 + UART_FCR, 0x07); /* enable and clear both FIFOs, interrupt at 1 byte */
	outb(COM1 + UART_MCR, MCR_DTR_RTS);
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

/* Raised by the UART's interrupt (its isr.S raise entry). */
static unsigned int console_poll(unsigned int budget)
{
	console_rx_look = 1;
	return 0;
}

static const struct poller console_poller = {
	.name = "console",
	.poll = console_poll,
	.on_raise = true,
};

/*
 * With the interrupt: the look it asked for, taken (a byte arriving from
 * here on interrupts again). Polled: one line status read.
 */
bool console_rx_take(void)
{
	if (rx_irq) {
		console_rx_look = 0;
		cc.rx_looks++;
		return true;
	}
	if (busy_until && now_ns() >= busy_until) {
		busy_until = 0; /* the line is in: back to the slow look */
		poll_every(&console_poller, LOOK_IDLE_NS);
	}
	if (!console_rx_ready())
		return false;
	cc.rx_looks++;
	return true;
}

void console_input_seen(void)
{
	if (rx_irq)
		return;
	if (!busy_until)
		poll_every(&console_poller, LOOK_BUSY_NS);
	busy_until = now_ns() + LOOK_BURST_NS;
}

static void console_stats(void)
{
	printf("  rx %s: interrupts %llu looks %llu\n", rx_irq ? "interrupt (ISA IRQ 4)" : "polled",
	       (unsigned long long)cc.rx_interrupts, (unsigned long long)cc.rx_looks);
}

/*
 * The I/O APIC entry first, then the UART's "received data available"
 * enable: a byte that came before raises the line at that moment, an
 * edge the routed entry delivers. The first pass looks anyway.
 */
void console_irq_init(void)
{
	int vector;

	stats_register("console", console_stats);
	if (poll_register(&console_poller) || !poll_bit(&console_poller))
		goto polled;
	vector = irq_alloc_raise(&cc.rx_interrupts, poll_bit(&console_poller));
	if (vector < 0)
		goto polled;
	if (ioapic_route_isa(COM1_IRQ, vector)) {
		irq_free_vector(vector);
		goto polled;
	}
	rx_irq = true;
	outb(COM1 + UART_MCR, MCR_DTR_RTS | MCR_OUT2);
	outb(COM1 + UART_IER, IER_RX_AVAILABLE);
	console_rx_look = 1;
	return;
polled:
	poll_every(&console_poller, LOOK_IDLE_NS);
}

bool console_rx_interrupts(void)
{
	return rx_irq;
}
