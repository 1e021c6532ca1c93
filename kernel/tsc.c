// SPDX-License-Identifier: MIT
/*
 * TSC frequency: CPUID leaf 0x15 (crystal ratio, SDM 3B 18.7.3) or 0x16
 * (base MHz) when the CPU reports them; otherwise we count TSC ticks across
 * a PIT channel 2 one-shot, which every PC (and QEMU) has.
 */
#include <stdint.h>

#include "kernel/io.h"
#include "kernel/time.h"

#define PIT_HZ 1193182ULL
#define PIT_CH2 0x42
#define PIT_CMD 0x43
#define PIT_GATE 0x61
#define CALIBRATE_MS 50

static uint64_t hz, tsc_base;
static const char *source = "none";

static uint64_t from_cpuid(void)
{
	uint32_t r[4];

	cpuid(0, 0, r);
	if (r[0] >= 0x15) {
		uint32_t c[4];

		cpuid(0x15, 0, c);
		/* EAX denominator, EBX numerator, ECX crystal Hz (0: unknown) */
		if (c[0] && c[1] && c[2]) {
			source = "cpuid-15h";
			return (uint64_t)c[2] * c[1] / c[0];
		}
	}
	if (r[0] >= 0x16) {
		uint32_t c[4];

		cpuid(0x16, 0, c);
		if (c[0] & 0xffff) {
			source = "cpuid-16h";
			return (uint64_t)(c[0] & 0xffff) * 1000000;
		}
	}
	return 0;
}

static uint64_t from_pit(void)
{
	uint16_t count = PIT_HZ * CALIBRATE_MS / 1000;
	uint64_t t0, t1;
	uint8_t gate;

	/* gate on, speaker off; channel 2, lobyte/hibyte, mode 0 */
	gate = (inb(PIT_GATE) & ~0x02) | 0x01;
	outb(PIT_GATE, gate & ~0x01);
	outb(PIT_CMD, 0xb0);
	outb(PIT_CH2, count & 0xff);
	outb(PIT_CH2, count >> 8);
	outb(PIT_GATE, gate);
	t0 = rdtsc();
	while (!(inb(PIT_GATE) & 0x20)) /* OUT2 goes high at terminal count */
		cpu_relax();
	t1 = rdtsc();
	source = "pit";
	return (t1 - t0) * 1000 / CALIBRATE_MS;
}

void tsc_init(void)
{
	hz = from_cpuid();
	if (!hz)
		hz = from_pit();
	if (!hz) {
		hz = 1000000000ULL; /* keep time moving; `info` shows the source */
		source = "guess";
	}
	tsc_base = rdtsc();
}

uint64_t tsc_hz(void)
{
	return hz;
}

const char *tsc_source(void)
{
	return source;
}

uint64_t tsc_to_ns(uint64_t cycles)
{
	/* split to avoid overflow: fine for centuries of uptime */
	return cycles / hz * 1000000000ULL + cycles % hz * 1000000000ULL / hz;
}

uint64_t now_ns(void)
{
	return tsc_to_ns(rdtsc() - tsc_base);
}

void udelay(uint64_t us)
{
	uint64_t end = rdtsc() + hz / 1000000 * us;

	while (rdtsc() < end)
		cpu_relax();
}
