/* SPDX-License-Identifier: MIT */
/*
 * The I/O APIC: how an ISA device's interrupt (the UART's) reaches the
 * local APIC as a vector, the way MSI-X messages do for PCI devices.
 */
#ifndef KERNEL_IOAPIC_H
#define KERNEL_IOAPIC_H

#include <stdint.h>

/*
 * Deliver ISA @irq as @vector to this CPU: the MADT's override decides
 * the GSI, and the I/O APIC serving that GSI gets one unmasked entry.
 * 0, or -1 when there is no such I/O APIC or the line is level-triggered
 * (an interrupt the device holds until it is served would come back at
 * once after each EOI: the poll loop serves it later, not in the entry).
 */
int ioapic_route_isa(uint8_t irq, int vector);

#endif
