// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the MADT's interrupt controller structures
 * (kernel/madt.c), firmware data the kernel trusts for nothing. Every
 * list stays within its bound, the CPU ids kept are distinct and never
 * the broadcast id, and nothing is read past the table (ASan).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/acpi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct acpi_info ai;
	uint8_t *copy = malloc(size ? size : 1);

	/* an exact-size copy: a read past the table's end is an ASan report */
	memcpy(copy, data, size);
	memset(&ai, 0, sizeof(ai));
	acpi_parse_madt(&ai, copy, size);
	assert(ai.n_cpu_ids <= ACPI_MAX_CPUS && ai.n_cpu_ids <= ai.n_cpus);
	assert(ai.n_overrides <= ACPI_MAX_OVERRIDES);
	for (unsigned int i = 0; i < ai.n_cpu_ids; i++) {
		assert(ai.cpu_apic_id[i] != 0xffffffffu);
		for (unsigned int j = 0; j < i; j++)
			assert(ai.cpu_apic_id[i] != ai.cpu_apic_id[j]);
	}
	free(copy);
	return 0;
}
