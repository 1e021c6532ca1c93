// SPDX-License-Identifier: MIT
/*
 * Bringing up the application processors (SDM 3A 9.4, "Multiple-
 * Processor (MP) Initialization"; AMD APM vol. 2, 16.5, start-up
 * IPIs). The BSP copies the trampoline (ap_trampoline.S) to a page below
 * 1 MiB and, for each AP, follows SDM 3A 9.4.4.1: an INIT IPI, 10 ms,
 * a start-up IPI, 200 us, a second start-up IPI (not needed when the
 * AP is online by then; a running CPU ignores one anyway). The INITs go out to
 * every AP at once, so the 10 ms are paid once; the start-up IPIs one
 * AP at a time, because the trampoline's stack and index fields are one
 * AP's at a time. The AP switches to long mode with the BSP's CR3, loads
 * its own GDT and TSS and the shared IDT, enables its LAPIC in the BSP's
 * mode (x2APIC when the BSP uses it), marks itself online and runs its
 * loop (xcpu.c): the requests the BSP sends through its ring, a halt
 * with interrupts on between them.
 *
 * An AP that is not online within AP_TIMEOUT_MS is reported, marked
 * failed and sent another INIT, which parks it in wait-for-SIPI (SDM 3A
 * 9.4): it cannot wake up late in a trampoline already filled in for
 * the next AP.
 *
 * The start-up page: the first usable page from 4 KiB up in the
 * loader's memory map (page 0 holds the real-mode IVT and BIOS data),
 * below 640 KiB. mm_init hands no memory below 1 MiB to the heap or the
 * page-table frames, so the page is ours alone; it stays reserved after
 * boot, for a later stage that starts CPUs again.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/acpi.h"
#include "kernel/ap_trampoline.h"
#include "kernel/boot_info.h"
#include "kernel/config.h"
#include "kernel/cpu.h"
#include "kernel/cpu_rules.h"
#include "kernel/io.h"
#include "kernel/lapic.h"
#include "kernel/msi.h"
#include "kernel/memmap.h"
#include "kernel/percpu.h"
#include "kernel/shell.h"
#include "kernel/smp.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"
#include "kernel/xcpu_cmd.h"

CONFIG_KEY(cfg_cpus) = {
	.name = "cpus",
	.help = "CPUs to run, the BSP included, read at boot: 0 all the MADT lists, 1 no APs",
	.type = CONFIG_UINT,
	.min = 0,
	.max = 64, /* SMP_MAX_CPUS, spelled out for host/config-doc */
	.def = 0,
};
_Static_assert(SMP_MAX_CPUS == 64, "cfg_cpus.max is SMP_MAX_CPUS");
_Static_assert(SMP_MAX_CPUS == PERCPU_MAX_CPUS, "percpu_cpus[] holds every CPU");

#define AP_STACK (32u << 10)
#define AP_TIMEOUT_MS 2000
#define INIT_DELAY_US 10000 /* SDM 3A 9.4.4.1: INIT, then 10 ms */
#define SIPI_DELAY_US 200 /* and 200 us after each start-up IPI */
#define LOW_PAGE_MIN 0x1000ULL
#define LOW_PAGE_MAX 0xa0000ULL /* the start-up vector's page, below video memory */

struct smp_cpu {
	uint32_t apic_id; /* the MADT's */
	uint32_t apic_id_read; /* what the CPU read from its own LAPIC */
	int state; /* enum smp_state; the AP sets ONLINE, atomically */
	uint64_t up_ns; /* first start-up IPI to online */
	struct cpu_tables *tables;
	void *stack;
	struct xcpu_cpu *mail; /* its rings: kernel/xcpu.c */
};

static struct smp_cpu cpus[SMP_MAX_CPUS];
static unsigned int n_cpus; /* cpus[0] is the BSP */
static unsigned int n_madt;
static unsigned int limit; /* the cpus key at boot, 0: all */
static uint8_t *page; /* the start-up page, NULL without one */

void ap_entry(uint64_t index) __attribute__((noreturn));

static int state_of(const struct smp_cpu *c)
{
	return __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
}

/* The C side of the trampoline, on the AP's own stack. */
void ap_entry(uint64_t index)
{
	struct smp_cpu *c;
	int starting = SMP_STARTING;

	if (!index || index >= n_cpus)
		halt_forever(); /* not a slot we started: never run on the BSP's */
	c = &cpus[index];
	/* first: its struct percpu (%gs), which everything below may use */
	percpu_enter(percpu_of(index));
	cpu_init_ap(c->tables);
	lapic_init_ap();
	c->apic_id_read = lapic_id();
	/* a late AP the BSP gave up on stays out (the BSP INITs it too) */
	if (!__atomic_compare_exchange_n(&c->state, &starting, SMP_ONLINE, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED))
		halt_forever();
	xcpu_ap_run(c->mail);
}

static uint64_t *tr_field(unsigned int offset)
{
	return (uint64_t *)(page + offset);
}

static void tr_patch32(unsigned int offset, uint32_t add)
{
	uint32_t v;

	memcpy(&v, page + offset, 4);
	v += add;
	memcpy(page + offset, &v, 4);
}

/* The trampoline at the start-up page, its addresses made absolute. */
static bool trampoline_install(void)
{
	uint64_t pa =
		memmap_low_page(boot_info.mmap, boot_info.mmap_count, LOW_PAGE_MIN, LOW_PAGE_MAX);
	uint64_t cr3;

	__asm__ __volatile__("mov %%cr3, %0" : "=r"(cr3));
	if (!pa || cr3 >= (1ULL << 32)) {
		printf("smp: no usable page below 640 KiB for the start-up code; APs not started\n");
		return false;
	}
	page = (uint8_t *)(uintptr_t)pa;
	memcpy(page, ap_trampoline_start, ap_trampoline_end - ap_trampoline_start);
	tr_patch32(TR_GDT_DESC + 2, (uint32_t)pa);
	tr_patch32(TR_FAR32, (uint32_t)pa);
	tr_patch32(TR_FAR64, (uint32_t)pa);
	*(uint32_t *)(page + TR_CR3) = (uint32_t)cr3;
	*tr_field(TR_ENTRY) = (uint64_t)(uintptr_t)ap_entry;
	return true;
}

static void ap_fail(struct smp_cpu *c, const char *why)
{
	__atomic_store_n(&c->state, SMP_FAILED, __ATOMIC_RELEASE);
	printf("smp: cpu %u (apic id %u) %s; going on without it\n", (unsigned int)(c - cpus),
	       c->apic_id, why);
}

static bool wait_online(const struct smp_cpu *c, uint64_t until_ns)
{
	while (now_ns() < until_ns) {
		if (state_of(c) == SMP_ONLINE)
			return true;
		cpu_relax();
	}
	return state_of(c) == SMP_ONLINE;
}

/* Start-up IPIs to one AP (its INIT was sent) and the wait for it. */
static void ap_start(struct smp_cpu *c)
{
	int starting = SMP_STARTING;
	uint64_t t0;

	c->tables = cpu_tables_new();
	c->stack = malloc(AP_STACK);
	c->mail = xcpu_cpu_new(c - cpus, c->apic_id);
	if (!c->tables || !c->stack || !c->mail) {
		free(c->tables);
		free(c->stack);
		c->tables = NULL;
		c->stack = NULL;
		ap_fail(c, "has no memory for its stack, tables and rings");
		return;
	}
	*tr_field(TR_STACK) = ((uint64_t)(uintptr_t)c->stack + AP_STACK) & ~15ULL;
	*tr_field(TR_ARG) = c - cpus;
	__atomic_store_n(&c->state, SMP_STARTING, __ATOMIC_RELEASE);
	t0 = now_ns();
	if (!lapic_send_startup(c->apic_id, (uint8_t)((uintptr_t)page >> 12))) {
		ap_fail(c, "cannot be sent a start-up IPI");
		return;
	}
	if (!wait_online(c, now_ns() + SIPI_DELAY_US * 1000ULL)) {
		lapic_send_startup(c->apic_id, (uint8_t)((uintptr_t)page >> 12));
		udelay(SIPI_DELAY_US);
	}
	if (wait_online(c, t0 + AP_TIMEOUT_MS * 1000000ULL)) {
		c->up_ns = now_ns() - t0;
		return;
	}
	/* online at the last moment: the exchange fails and it counts */
	if (!__atomic_compare_exchange_n(&c->state, &starting, SMP_FAILED, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		c->up_ns = now_ns() - t0;
		return;
	}
	lapic_send_init(c->apic_id);
	printf("smp: cpu %u (apic id %u) did not come up within %u ms; going on without it\n",
	       (unsigned int)(c - cpus), c->apic_id, AP_TIMEOUT_MS);
}

/* cpus[]: the BSP first, then the MADT's other enabled CPUs in order. */
static void cpus_from_madt(void)
{
	const struct acpi_info *a = acpi_get();
	uint32_t bsp = lapic_id();

	cpus[0].apic_id = cpus[0].apic_id_read = bsp;
	cpus[0].state = SMP_ONLINE;
	n_cpus = 1;
	for (unsigned int i = 0; i < a->n_cpu_ids && n_cpus < SMP_MAX_CPUS; i++) {
		if (a->cpu_apic_id[i] == bsp)
			continue;
		cpus[n_cpus].apic_id = a->cpu_apic_id[i];
		cpus[n_cpus].state = SMP_OFFLINE;
		n_cpus++;
	}
	/* a MADT without the BSP is wrong, but the BSP runs all the same */
	n_madt = a->n_cpus > n_cpus ? a->n_cpus : n_cpus;
	if (a->n_cpus > ACPI_MAX_CPUS)
		printf("smp: the MADT lists %u CPUs; only the first %u are known\n", a->n_cpus,
		       ACPI_MAX_CPUS);
}

static const char *state_name(int s)
{
	static const char *const names[] = { "offline", "starting", "online", "failed" };

	return (unsigned int)s < 4 ? names[s] : "?";
}

static int cmd_cpus(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "ping"))
		return cpus_ping(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "stats"))
		return cpus_stats(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "sleep"))
		return cpus_sleep(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "busy"))
		return cpus_busy(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "irq"))
		return cpus_irq(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "print"))
		return cpus_print(argc - 1, argv + 1);
	if (argc > 1)
		return shell_error(
			"cpus: unknown argument '%s' (ping [N], stats, sleep|busy CPU MS, "
			"irq V, print CPU)",
			argv[1]);
	for (unsigned int i = 0; i < n_cpus; i++) {
		const struct smp_cpu *c = &cpus[i];
		int s = state_of(c);

		printf("cpu %u apic %u %s", i, c->apic_id, state_name(s));
		if (!i)
			printf(" bsp");
		else if (s == SMP_ONLINE)
			printf(" lapic %u up %llu us", c->apic_id_read,
			       (unsigned long long)(c->up_ns / 1000));
		else if (s == SMP_OFFLINE)
			printf(" cpus=%u", limit);
		printf("\n");
	}
	return 0;
}

static const struct shell_cmd cpus_cmd = {
	.name = "cpus",
	.usage = "[ping [N] | stats | sleep CPU MS | busy CPU MS | irq V | print CPU]",
	.help = "each CPU: its APIC id (MADT), state, the id its LAPIC reads, start-up time; "
		"ping: N round trips to each AP; stats: each AP's counters, through its ring; "
		"sleep: AP CPU waits MS ms on its own timer; busy: AP CPU spins MS ms; "
		"irq: vector V's interrupts taken on each CPU; print: AP CPU tries to print, "
		"which only CPU 0 may",
	.run = cmd_cpus,
};

unsigned int smp_cpus(void)
{
	return n_cpus;
}

int smp_state(unsigned int cpu)
{
	return cpu < n_cpus ? state_of(&cpus[cpu]) : SMP_OFFLINE;
}

uint32_t smp_apic_id(unsigned int cpu)
{
	return cpu < n_cpus ? cpus[cpu].apic_id : 0;
}

const char *smp_state_name(int state)
{
	return state_name(state);
}

unsigned int smp_online(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < n_cpus; i++)
		n += state_of(&cpus[i]) == SMP_ONLINE;
	return n;
}

void smp_describe(char *buf, unsigned int len)
{
	unsigned int failed = 0, offline = 0;
	int n;

	for (unsigned int i = 0; i < n_cpus; i++) {
		failed += state_of(&cpus[i]) == SMP_FAILED;
		offline += state_of(&cpus[i]) == SMP_OFFLINE;
	}
	n = snprintf(buf, len, "%u online of %u in MADT", smp_online(), n_madt);
	if (failed && n >= 0 && (unsigned int)n < len)
		n += snprintf(buf + n, len - n, ", %u failed", failed);
	if (offline && n >= 0 && (unsigned int)n < len)
		snprintf(buf + n, len - n, ", %u offline (cpus=%u)", offline, limit);
}

/* An AP the BSP may start: within the key's count. */
static bool ap_wanted(unsigned int i)
{
	return !limit || i < limit;
}

static void start_aps(void)
{
	percpu_boot.apic_id = cpus[0].apic_id;
	cpu_rules_init();
	xcpu_init();
	if (!trampoline_install()) {
		for (unsigned int i = 1; i < n_cpus && ap_wanted(i); i++)
			cpus[i].state = SMP_FAILED;
		return;
	}
	for (unsigned int i = 1; i < n_cpus && ap_wanted(i); i++)
		if (!lapic_send_init(cpus[i].apic_id))
			ap_fail(&cpus[i], "cannot be sent an INIT IPI");
	udelay(INIT_DELAY_US);
	for (unsigned int i = 1; i < n_cpus && ap_wanted(i); i++)
		if (state_of(&cpus[i]) == SMP_OFFLINE)
			ap_start(&cpus[i]);
}

unsigned int smp_next_online(unsigned int cpu)
{
	uint64_t online = 0;

	_Static_assert(SMP_MAX_CPUS <= 64, "one bit per CPU");
	for (unsigned int i = 0; i < n_cpus; i++)
		if (state_of(&cpus[i]) == SMP_ONLINE)
			online |= 1ull << i;
	return msi_next_online(online, n_cpus, cpu);
}

void smp_init(void)
{
	char line[96];
	uint64_t us;

	shell_register(&cpus_cmd);
	limit = config_get(&cfg_cpus);
	cpus_from_madt();
	if (n_cpus == 1 || !ap_wanted(1)) {
		smp_describe(line, sizeof(line));
		printf("smp: %s\n", line);
		return;
	}
	lapic_timer_prepare(); /* the APs' idle shares its vector */
	us = now_ns();
	start_aps();
	us = (now_ns() - us) / 1000;
	smp_describe(line, sizeof(line));
	printf("smp: %s (APs started in %llu.%llu ms)\n", line, (unsigned long long)(us / 1000),
	       (unsigned long long)(us % 1000 / 100));
}
