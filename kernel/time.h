/* SPDX-License-Identifier: MIT */
/* Time from the TSC: calibrated once at boot, read with one instruction. */
#ifndef KERNEL_TIME_H
#define KERNEL_TIME_H

#include <stdint.h>

void tsc_init(void);
uint64_t tsc_hz(void);
const char *tsc_source(void); /* how the frequency was found */
uint64_t now_ns(void); /* since tsc_init() */
uint64_t tsc_to_ns(uint64_t cycles);
void udelay(uint64_t us);

#endif
