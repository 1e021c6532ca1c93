/* SPDX-License-Identifier: MIT */
/* The kernel's own shell commands: info, mem, uptime, config, set, get, ... */
#ifndef KERNEL_COMMANDS_H
#define KERNEL_COMMANDS_H

void commands_init(void);

#endif
