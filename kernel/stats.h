/* SPDX-License-Identifier: MIT */
/*
 * The `stats` command: every subsystem registers a printer for its
 * counters, so one command shows every drop, retry and error by name.
 */
#ifndef KERNEL_STATS_H
#define KERNEL_STATS_H

void stats_register(const char *name, void (*print)(void));
void stats_init(void);

#endif
