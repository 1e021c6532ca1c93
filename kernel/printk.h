/* SPDX-License-Identifier: MIT */
/*
 * Kernel messages with Linux's levels. Messages above the `loglevel`
 * config key are dropped; shell output uses plain printf.
 */
#ifndef KERNEL_PRINTK_H
#define KERNEL_PRINTK_H

enum log_level {
	LOG_EMERG,
	LOG_ALERT,
	LOG_CRIT,
	LOG_ERR,
	LOG_WARNING,
	LOG_NOTICE,
	LOG_INFO,
	LOG_DEBUG,
};

void printk(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_err(...) printk(LOG_ERR, __VA_ARGS__)
#define pr_warn(...) printk(LOG_WARNING, __VA_ARGS__)
#define pr_notice(...) printk(LOG_NOTICE, __VA_ARGS__)
#define pr_info(...) printk(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) printk(LOG_DEBUG, __VA_ARGS__)

/*
 * For paths that must not touch malloc or stdio state (exceptions): format
 * on the stack and write to the UART directly.
 */
void early_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
