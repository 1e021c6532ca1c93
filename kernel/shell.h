/* SPDX-License-Identifier: MIT */
/*
 * The serial shell. Subsystems add their commands with shell_register();
 * shell_init() adds CPU 0's console context, which reads input and runs
 * the commands typed. A command that waits runs the loop itself
 * (poll_wait); the console context is not run again meanwhile.
 */
#ifndef KERNEL_SHELL_H
#define KERNEL_SHELL_H

struct shell_cmd {
	const char *name;
	const char *usage; /* arguments, e.g. "KEY=VALUE" */
	const char *help; /* one line */
	/* Returns 0, or non-zero after printing an "error: ..." line. */
	int (*run)(int argc, char **argv);
};

void shell_init(void);
void shell_register(const struct shell_cmd *cmd);
/* Run one command line as if typed (used by the boot command line). */
int shell_run_line(char *line);
void shell_prompt(void);

/* Print "error: <msg>" on one line; returns -1 for `return shell_error(...)`. */
int shell_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
