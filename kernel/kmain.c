// SPDX-License-Identifier: MIT
/*
 * Bring-up in dependency order, then the one poll loop everything runs in.
 */
#include <stdio.h>

#include "kernel/acpi.h"
#include "kernel/app.h"
#include "kernel/boot_info.h"
#include "kernel/calibrate.h"
#include "kernel/commands.h"
#include "kernel/config.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/hypervisor.h"
#include "kernel/idle.h"
#include "kernel/lapic.h"
#include "kernel/mm.h"
#include "kernel/pci.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/smp.h"
#include "kernel/stats.h"
#include "kernel/time.h"

static void report_bad_config(const char *msg)
{
	printf("cmdline: %s\n", msg);
}

void kmain(struct boot_info *bi)
{
	char hv[160];

	percpu_enter(&percpu_boot); /* this_cpu() and the interrupt entries need it */
	console_init();
	cpu_init();
	mm_init(bi);
	/* unbuffered: printf output reaches the UART before we poll again */
	setvbuf(stdout, NULL, _IONBF, 0);
	tsc_init();
	acpi_init(bi);
	hypervisor_init();
	lapic_init();
	config_parse_cmdline(bi->cmdline, report_bad_config);
	shell_init();
	commands_init();
	smp_init();
	calibrate_init();
	stats_init();
	poll_show_init();
	pci_init();
	app_init();
	irq_enable();
	idle_init();

	printf("ringside: booted via %s, cmdline '%s'\n", bi->boot_path, bi->cmdline);
	hypervisor_describe(hv, sizeof(hv));
	printf("ringside: %s\n", hv);
	printf("ringside: ready\n");
	shell_prompt();
	poll_loop();
}
