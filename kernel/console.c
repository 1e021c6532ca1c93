// SPDX-License-Identifier: MIT
/*
 * COM1 at 0x3f8: 115200 8N1, FIFOs on. Input interrupts when the I/O APIC
 * can route ISA IRQ 4 (console_irq_init), else the poll loop looks at the
 * line status: every pass, and while idle every 100 ms (1 ms for a
 * second after a keystroke). Output goes in bursts of up to the transmit
 * FIFO's 16 bytes, each written once the line status says the FIFO is
 * empty, with one string instruction (rep outsb): one line status read a
 * burst instead of one a byte. KVM still exits once per byte written (it
 * emulates OUTS an element at a time); the status reads are what a burst
 * saves.
 *
 * Every UART access is a VM exit into QEMU, so with the interrupt a
 * wake-up the UART did not cause reads nothing from it: the interrupt
 * schedules the shell's poll context (kernel/shell.c), and only then
 * does the shell read the UART until the line status says it is empty.
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
#define LSR_THR_EMPTY 0x20 /* FIFOs on: the transmit FIFO is empty */
#define UART_TX_FIFO 16
#define IER_RX_AVAILABLE 0x01
#define MCR_DTR_RTS 0x03
#define MCR_OUT2 0x08 /* gates the UART's interrupt line on a PC */

#define LOOK_IDLE_NS 100000000ULL
#define LOOK_BUSY_NS 1000000ULL
#define LOOK_BURST_NS 1000000000ULL

/* Transmit back-off (uart_wait_thr): first pause, longest, and give-up. */
#define TX_PAUSE_FIRST_NS 1000ULL
#define TX_PAUSE_MAX_NS 100000ULL
#define TX_GIVE_UP_NS 5000000000ULL
/* Before tsc_init (boot messages) the TSC rate is unknown: assume 1 GHz. */
#define TSC_HZ_GUESS 1000000000ULL

struct console_counters {
	uint64_t rx_interrupts;
	uint64_t rx_looks; /* shell_poll runs: interrupts or polled looks */
	uint64_t tx_bursts; /* writes of up to UART_TX_FIFO bytes */
	uint64_t tx_busy_waits; /* bursts that found the transmitter busy */
	uint64_t tx_busy_reads; /* line status reads while it stayed busy */
	uint64_t tx_dropped; /* bytes given up on (the host stopped reading) */
};

static struct console_counters cc;
static bool rx_irq;
static bool tx_stuck; /* a burst was given up: drop until THR is empty again */
static uint64_t busy_until; /* polled: look every 1 ms until then */

static uint64_t ns_to_tsc(uint64_t ns)
{
	uint64_t hz = tsc_hz() ? tsc_hz() : TSC_HZ_GUESS;

	return hz / 1000000 * ns / 1000;
}

static bool thr_empty(void)
{
	return inb(COM1 + UART_LSR) & LSR_THR_EMPTY;
}

/*
 * Wait for the transmit FIFO to empty, without hammering it. Under KVM
 * each line status read is an exit into QEMU's device model, which takes
 * QEMU's big lock; when the pipe behind QEMU's chardev is full (the reader
 * is slow for a moment), QEMU keeps THRE clear until its main loop writes
 * the pipe again, and that main loop needs the same lock. So a busy
 * transmitter is asked again only after a pause spent in the guest,
 * TSC-timed (no exit), doubling from 1 us to 100 us. After 5 s the burst
 * is dropped, and so is everything after it until THRE is back (one read
 * per burst), so a host that stopped reading for good does not stop the
 * appliance; a reader that is merely slow loses nothing.
 */
static bool uart_wait_thr(void)
{
	uint64_t t0, start, pause, give_up;

	if (thr_empty()) {
		tx_stuck = false;
		return true;
	}
	if (tx_stuck)
		return false;
	cc.tx_busy_waits++;
	pause = ns_to_tsc(TX_PAUSE_FIRST_NS);
	give_up = ns_to_tsc(TX_GIVE_UP_NS);
	t0 = rdtsc();
	do {
		start = rdtsc();
		while (rdtsc() - start < pause)
			cpu_relax();
		if (pause < ns_to_tsc(TX_PAUSE_MAX_NS))
			pause *= 2;
		cc.tx_busy_reads++;
		if (thr_empty())
			return true;
	} while (rdtsc() - t0 < give_up);
	tx_stuck = true;
	return false;
}

static void uart_write_burst(const char *buf, size_t n)
{
	if (!uart_wait_thr()) {
		cc.tx_dropped += n;
		return;
	}
	cc.tx_bursts++;
	__asm__ __volatile__("rep outsb"
			     : "+S"(buf), "+c"(n)
			     : "d"((uint16_t)(COM1 + UART_DATA))
			     : "memory");
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
	char burst[UART_TX_FIFO];
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (n + 2 > sizeof(burst)) {
			uart_write_burst(burst, n);
			n = 0;
		}
		if (buf[i] == '\n')
			burst[n++] = '\r';
		burst[n++] = buf[i];
	}
	if (n)
		uart_write_burst(burst, n);
}

int console_getc(void)
{
	if (!console_rx_ready())
		return -1;
	return inb(COM1 + UART_DATA);
}

/*
 * The shell looked (@input: and read something): when to look again.
 * With the interrupt, never by time; polled, soon while a line is being
 * typed, seldom otherwise.
 */
uint64_t console_next_look(bool input)
{
	uint64_t now;

	cc.rx_looks++;
	if (rx_irq)
		return UINT64_MAX;
	now = now_ns();
	if (input)
		busy_until = now + LOOK_BURST_NS;
	return now + (now < busy_until ? LOOK_BUSY_NS : LOOK_IDLE_NS);
}

static void console_stats(void)
{
	printf("  rx %s: interrupts %llu looks %llu; tx bursts %llu busy_waits %llu "
	       "busy_reads %llu dropped %llu\n",
	       rx_irq ? "interrupt (ISA IRQ 4)" : "polled", (unsigned long long)cc.rx_interrupts,
	       (unsigned long long)cc.rx_looks, (unsigned long long)cc.tx_bursts,
	       (unsigned long long)cc.tx_busy_waits, (unsigned long long)cc.tx_busy_reads,
	       (unsigned long long)cc.tx_dropped);
}

static void console_stats_json(struct json_writer *w)
{
	json_put_string(w, "rx", rx_irq ? "interrupt" : "polled");
	json_put_u64(w, "rx_interrupts", cc.rx_interrupts);
	json_put_u64(w, "rx_looks", cc.rx_looks);
	json_put_u64(w, "tx_bursts", cc.tx_bursts);
	json_put_u64(w, "tx_busy_waits", cc.tx_busy_waits);
	json_put_u64(w, "tx_busy_reads", cc.tx_busy_reads);
	json_put_u64(w, "tx_dropped", cc.tx_dropped);
}

/*
 * The I/O APIC entry first, then the UART's "received data available"
 * enable: a byte that came before raises the line at that moment, an
 * edge the routed entry delivers. The context looks once when added.
 */
bool console_irq_init(struct poll_ctx *ctx)
{
	int vector;

	stats_register("console", console_stats, console_stats_json);
	vector = irq_alloc_raise(&cc.rx_interrupts, ctx);
	if (vector < 0)
		return false;
	if (ioapic_route_isa(COM1_IRQ, vector)) {
		irq_free_vector(vector);
		return false;
	}
	rx_irq = true;
	outb(COM1 + UART_MCR, MCR_DTR_RTS | MCR_OUT2);
	outb(COM1 + UART_IER, IER_RX_AVAILABLE);
	return true;
}
