// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/acpi.h"
#include "kernel/boot_info.h"
#include "kernel/commands.h"
#include "kernel/config.h"
#include "kernel/cpu.h"
#include "kernel/hypervisor.h"
#include "kernel/lapic.h"
#include "kernel/mm.h"
#include "kernel/power.h"
#include "kernel/shell.h"
#include "kernel/shell_json.h"
#include "kernel/smp.h"
#include "kernel/time.h"

extern const uint8_t __build_id_note[], __build_id_note_end[];

/* The build id's bytes in hex into @hex (at least 41 bytes); "" if none. */
static void build_id_hex(char *hex, size_t len)
{
	const uint8_t *n = __build_id_note;
	uint32_t namesz, descsz;
	size_t at = 0;

	hex[0] = '\0';
	if (__build_id_note_end - n < 12)
		return;
	memcpy(&namesz, n, 4);
	memcpy(&descsz, n + 4, 4);
	n += 12 + ((namesz + 3) & ~3u);
	if (n + descsz > __build_id_note_end)
		descsz = 0;
	for (uint32_t i = 0; i < descsz && at + 3 <= len; i++)
		at += snprintf(hex + at, len - at, "%02x", n[i]);
}

static int too_many_args(int argc, char **argv, int max)
{
	if (argc <= max)
		return 0;
	return shell_error("%s: unexpected argument '%s'", argv[0], argv[max]);
}

static int info_json(const char *cpu, const char *hv, const char *id, const struct mm_stats *m)
{
	const struct acpi_info *a = acpi_get();
	struct json_writer *w = shell_json_begin();

	json_put_string(w, "cpu", cpu);
	json_put_u64(w, "lapic_id", lapic_id());
	json_put_u64(w, "cpus_online", smp_online());
	json_put_u64(w, "cpus_madt", a->n_cpus);
	json_put_u64(w, "memory_usable", m->ram_total);
	json_put_u64(w, "tsc_hz", tsc_hz());
	json_put_string(w, "tsc_source", tsc_source());
	json_put_string(w, "hypervisor", hv);
	json_put_string(w, "boot", boot_info.boot_path);
	json_put_string(w, "cmdline", boot_info.cmdline);
	json_put_bool(w, "acpi", a->present);
	json_put_string(w, "build_id", id);
	return shell_json_end("info");
}

static int cmd_info(int argc, char **argv)
{
	const struct acpi_info *a = acpi_get();
	bool json = shell_json_wanted(&argc, argv);
	struct mm_stats m;
	char cpu[96], hv[160], smp[96], id[80];

	if (too_many_args(argc, argv, 1))
		return -1;
	cpu_describe(cpu, sizeof(cpu));
	mm_get_stats(&m);
	hypervisor_describe(hv, sizeof(hv));
	build_id_hex(id, sizeof(id));
	if (json)
		return info_json(cpu, hv, id, &m);
	smp_describe(smp, sizeof(smp));
	printf("cpu: %s, lapic id %u\n", cpu, lapic_id());
	printf("cpus: %s\n", smp);
	printf("memory: %llu MiB usable\n", (unsigned long long)(m.ram_total >> 20));
	printf("tsc: %.3f GHz (%s)\n", tsc_hz() / 1e9, tsc_source());
	printf("hypervisor: %s\n", hv);
	printf("boot: %s\n", boot_info.boot_path);
	printf("cmdline: %s\n", boot_info.cmdline);
	printf("acpi: %s rev %u, %u tables, %u ECAM segment(s)\n", a->present ? a->oem : "none",
	       a->revision, a->n_tables, a->n_ecam);
	printf("build-id: %s\n", id[0] ? id : "none");
	return 0;
}

/* In-use chunks by exact size, for `mem chunks`: a handful of sizes recur. */
#define CENSUS_SIZES 64

struct heap_census {
	uint64_t size[CENSUS_SIZES], count[CENSUS_SIZES];
	uint64_t bytes, other, other_bytes;
	unsigned int n_sizes;
};

static void census_add(uint64_t size, void *arg)
{
	struct heap_census *c = arg;
	unsigned int i;

	c->bytes += size;
	for (i = 0; i < c->n_sizes && c->size[i] != size; i++)
		;
	if (i == c->n_sizes) {
		if (i == CENSUS_SIZES) {
			c->other++;
			c->other_bytes += size;
			return;
		}
		c->size[c->n_sizes++] = size;
	}
	c->count[i]++;
}

static void chunks_json(struct json_writer *w, const struct heap_census *c, int n)
{
	json_open(w, "chunks", '{');
	json_put_u64(w, "count", (uint64_t)n);
	json_put_u64(w, "bytes", c->bytes);
	json_open(w, "sizes", '[');
	for (unsigned int i = 0; i < c->n_sizes; i++) {
		json_open(w, NULL, '{');
		json_put_u64(w, "size", c->size[i]);
		json_put_u64(w, "count", c->count[i]);
		json_close(w, '}');
	}
	json_close(w, ']');
	json_put_u64(w, "other_count", c->other);
	json_put_u64(w, "other_bytes", c->other_bytes);
	json_close(w, '}');
}

/* Every chunk in use, counted by size: what a leak is made of. */
static int mem_chunks(bool json)
{
	static struct heap_census c;
	struct json_writer *w;
	int n;

	memset(&c, 0, sizeof(c));
	n = heap_walk(census_add, &c);
	if (n < 0)
		return shell_error("mem: the heap does not walk as newlib's malloc lays it out");
	if (json) {
		w = shell_json_begin();
		json_put_u64(w, "heap_in_use", heap_in_use());
		chunks_json(w, &c, n);
		return shell_json_end("mem");
	}
	printf("heap chunks in use: %d, %llu B\n", n, (unsigned long long)c.bytes);
	for (unsigned int i = 0; i < c.n_sizes; i++)
		printf("  %8llu B x %llu\n", (unsigned long long)c.size[i],
		       (unsigned long long)c.count[i]);
	if (c.other)
		printf("  other sizes x %llu, %llu B\n", (unsigned long long)c.other,
		       (unsigned long long)c.other_bytes);
	return 0;
}

static int mem_json(void)
{
	struct json_writer *w = shell_json_begin();
	struct mm_stats m;

	mm_get_stats(&m);
	json_put_u64(w, "heap_in_use", heap_in_use());
	json_put_u64(w, "heap_start", m.heap_start);
	json_put_u64(w, "heap_end", m.heap_end);
	json_put_u64(w, "heap_grown", m.heap_brk - m.heap_start);
	json_put_u64(w, "ram_usable", m.ram_total);
	json_put_u64(w, "frames_used", m.frames_used);
	json_put_u64(w, "frames_free", m.frames_free);
	return shell_json_end("mem");
}

static int cmd_mem(int argc, char **argv)
{
	const struct mem_region *r;
	bool json = shell_json_wanted(&argc, argv);
	uint64_t in_use = heap_in_use();
	struct mm_stats m;
	unsigned int n;

	if (argc == 2 && !strcmp(argv[1], "chunks"))
		return mem_chunks(json);
	if (argc > 1)
		return shell_error("usage: mem [chunks] [json]");
	if (json)
		return mem_json();
	printf("loader memory map (%u entries):\n", boot_info.mmap_count);
	for (unsigned int i = 0; i < boot_info.mmap_count; i++) {
		const struct boot_mem_range *e = &boot_info.mmap[i];

		printf("  %016llx-%016llx %s\n", (unsigned long long)e->base,
		       (unsigned long long)(e->base + e->len), memmap_type_name(e->type));
	}
	r = mm_regions(&n);
	printf("usable RAM:\n");
	for (unsigned int i = 0; i < n; i++)
		printf("  %016llx-%016llx %llu KiB\n", (unsigned long long)r[i].start,
		       (unsigned long long)r[i].end,
		       (unsigned long long)((r[i].end - r[i].start) >> 10));
	mm_get_stats(&m);
	printf("heap: %#llx-%#llx, %llu KiB grown, %llu KiB in use (%llu B)\n",
	       (unsigned long long)m.heap_start, (unsigned long long)m.heap_end,
	       (unsigned long long)((m.heap_brk - m.heap_start) >> 10),
	       (unsigned long long)(in_use >> 10), (unsigned long long)in_use);
	printf("page-table frames: %llu used, %llu free\n", (unsigned long long)m.frames_used,
	       (unsigned long long)m.frames_free);
	return 0;
}

static int cmd_uptime(int argc, char **argv)
{
	uint64_t ns = now_ns();

	if (too_many_args(argc, argv, 1))
		return -1;
	printf("uptime: %llu.%06llu s\n", (unsigned long long)(ns / 1000000000ULL),
	       (unsigned long long)(ns % 1000000000ULL / 1000));
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct config_key *const *)a)->name,
		      (*(struct config_key *const *)b)->name);
}

#define MAX_LISTED_KEYS 128

/*
 * Keys are declared across the subsystems, and the linker's order of them
 * depends on file and compiler; by name, the list is the same every build.
 */
static int config_json(struct config_key **keys, unsigned int n)
{
	struct json_writer *w = shell_json_begin();
	char line[128];

	for (unsigned int i = 0; i < n; i++) {
		struct config_key def = *keys[i];

		def.value_set = false;
		json_open(w, keys[i]->name, '{');
		config_format(keys[i], line, sizeof(line));
		json_put_string(w, "value", strchr(line, '=') + 1);
		config_format(&def, line, sizeof(line));
		json_put_string(w, "default", strchr(line, '=') + 1);
		json_close(w, '}');
	}
	return shell_json_end("config");
}

static int cmd_config(int argc, char **argv)
{
	struct config_key *keys[MAX_LISTED_KEYS];
	bool json = shell_json_wanted(&argc, argv);
	unsigned int n = 0;
	char line[128];

	if (too_many_args(argc, argv, 1))
		return -1;
	for (struct config_key *k = config_next(NULL); k && n < MAX_LISTED_KEYS; k = config_next(k))
		keys[n++] = k;
	qsort(keys, n, sizeof(keys[0]), by_name);
	if (json)
		return config_json(keys, n);
	for (unsigned int i = 0; i < n; i++) {
		config_format(keys[i], line, sizeof(line));
		printf("%-24s %s\n", line, keys[i]->help);
	}
	return 0;
}

static int print_key(const char *name)
{
	char line[128];
	const struct config_key *k = config_lookup(name);

	if (!k)
		return shell_error("unknown key '%s' (try 'config')", name);
	config_format(k, line, sizeof(line));
	printf("%s\n", line);
	return 0;
}

static int cmd_get(int argc, char **argv)
{
	if (argc != 2)
		return shell_error("usage: get KEY");
	return print_key(argv[1]);
}

/* set KEY=VALUE [KEY=VALUE ...]: all are checked before any is applied */
static int cmd_set(int argc, char **argv)
{
	char err[CONFIG_ERR_MAX];

	if (argc < 2)
		return shell_error("usage: set KEY=VALUE [KEY=VALUE ...]");
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq || eq == argv[i])
			return shell_error("set: expected KEY=VALUE, got '%s'", argv[i]);
		*eq = '\0';
		if (config_check(argv[i], eq + 1, NULL, err, sizeof(err)) < 0)
			return shell_error("%s", err);
	}
	for (int i = 1; i < argc; i++) {
		config_set(argv[i], argv[i] + strlen(argv[i]) + 1, err, sizeof(err));
		print_key(argv[i]);
	}
	return 0;
}

static int cmd_poweroff(int argc, char **argv)
{
	if (too_many_args(argc, argv, 1))
		return -1;
	printf("powering off\n");
	power_off();
}

static int cmd_reboot(int argc, char **argv)
{
	if (too_many_args(argc, argv, 1))
		return -1;
	printf("rebooting\n");
	reboot();
}

/*
 * Fault on purpose, to see the exception handler's report (and to test
 * it): the machine halts afterwards.
 */
#define CRASH_ADDR 0xdead0000000ULL /* canonical, never mapped */

static int cmd_crash(int argc, char **argv)
{
	if (argc != 2)
		return shell_error("usage: crash pf|ud|de");
	if (!strcmp(argv[1], "pf"))
		*(volatile uint64_t *)(uintptr_t)CRASH_ADDR = 1;
	else if (!strcmp(argv[1], "ud"))
		__asm__ __volatile__("ud2");
	else if (!strcmp(argv[1], "de"))
		__asm__ __volatile__("xor %%ecx, %%ecx; div %%ecx" ::: "eax", "ecx", "edx");
	else
		return shell_error("crash: unknown fault '%s' (pf, ud or de)", argv[1]);
	return 0;
}

static const struct shell_cmd builtin_cmds[] = {
	{ "info", "[json]", "CPU, memory, TSC, boot path, command line, build id", cmd_info },
	{ "mem", "[chunks] [json]",
	  "memory map, usable RAM, heap and page-table use; chunks: heap chunks in use by size",
	  cmd_mem },
	{ "uptime", NULL, "time since boot", cmd_uptime },
	{ "config", "[json]", "show every configuration key (json: value and default)",
	  cmd_config },
	{ "get", "KEY", "show one configuration key", cmd_get },
	{ "set", "KEY=VALUE", "change configuration keys", cmd_set },
	{ "reboot", NULL, "reset the machine", cmd_reboot },
	{ "poweroff", NULL, "ACPI power off (QEMU exits)", cmd_poweroff },
	{ "crash", "pf|ud|de", "fault on purpose: page fault, invalid opcode, divide error",
	  cmd_crash },
};

void commands_init(void)
{
	for (size_t i = 0; i < sizeof(builtin_cmds) / sizeof(builtin_cmds[0]); i++)
		shell_register(&builtin_cmds[i]);
}
