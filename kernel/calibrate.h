/* SPDX-License-Identifier: MIT */
/* `calibrate N`: a fixed instruction sequence run N times, for cost counters. */
#ifndef KERNEL_CALIBRATE_H
#define KERNEL_CALIBRATE_H

void calibrate_init(void);

#endif
