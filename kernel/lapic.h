/* SPDX-License-Identifier: MIT */
/* The local APIC: where MSI-X messages land. */
#ifndef KERNEL_LAPIC_H
#define KERNEL_LAPIC_H

#include <stdint.h>

void lapic_init(void);
uint32_t lapic_id(void);
uint64_t lapic_base(void);
void lapic_eoi(void);

#endif
