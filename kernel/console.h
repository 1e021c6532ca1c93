/* SPDX-License-Identifier: MIT */
/* The serial console: COM1, a 16550 UART driven by polling. */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>

void console_init(void);
void console_write(const char *buf, size_t len);
/* One received byte, or -1 when none is waiting. Never blocks. */
int console_getc(void);
/* A received byte is waiting. */
bool console_rx_ready(void);

#endif
