// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>

#include "kernel/config.h"
#include "kernel/console.h"
#include "kernel/printk.h"

CONFIG_KEY(cfg_loglevel) = {
	.name = "loglevel",
	.help = "kernel messages up to this level are shown (0 emerg .. 7 debug)",
	.type = CONFIG_UINT,
	.min = 0,
	.max = 7,
	.def = 4,
};

void printk(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > (int)config_get(&cfg_loglevel))
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

void early_printf(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	console_write(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}
