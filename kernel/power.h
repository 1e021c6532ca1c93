/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_POWER_H
#define KERNEL_POWER_H

#include <stdbool.h>

void power_off(void) __attribute__((noreturn));
void reboot(void) __attribute__((noreturn));
/*
 * QEMU's isa-debug-exit at port 0x501: QEMU exits with (status << 1) | 1.
 * Returns only when the device is absent.
 */
bool debug_exit_present(void);
void debug_exit(int status);

#endif
