// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/line_edit.h"
#include "kernel/poll.h"
#include "kernel/shell.h"

#define SHELL_MAX_CMDS 64
#define SHELL_MAX_ARGS 16
#define PROMPT "ringside> "

static const struct shell_cmd *cmds[SHELL_MAX_CMDS];
static int n_cmds;
static struct line_editor editor;

int shell_error(const char *fmt, ...)
{
	va_list ap;

	fputs("error: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return -1;
}

void shell_register(const struct shell_cmd *cmd)
{
	if (n_cmds == SHELL_MAX_CMDS) {
		printf("shell: no room for command '%s'\n", cmd->name);
		return;
	}
	cmds[n_cmds++] = cmd;
}

static const struct shell_cmd *find_cmd(const char *name)
{
	for (int i = 0; i < n_cmds; i++)
		if (!strcmp(cmds[i]->name, name))
			return cmds[i];
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	if (argc > 1) {
		const struct shell_cmd *c = find_cmd(argv[1]);

		if (!c)
			return shell_error("no command '%s'", argv[1]);
		printf("%s %s\n  %s\n", c->name, c->usage ? c->usage : "", c->help);
		return 0;
	}
	for (int i = 0; i < n_cmds; i++) {
		char name[40];

		snprintf(name, sizeof(name), "%s %s", cmds[i]->name,
			 cmds[i]->usage ? cmds[i]->usage : "");
		printf("  %-26s %s\n", name, cmds[i]->help);
	}
	return 0;
}

static const struct shell_cmd help_cmd = {
	.name = "help",
	.usage = "[COMMAND]",
	.help = "list commands, or describe one",
	.run = cmd_help,
};

int shell_run_line(char *line)
{
	char *argv[SHELL_MAX_ARGS];
	const struct shell_cmd *c;
	int argc;

	argc = line_split(line, argv, SHELL_MAX_ARGS);
	if (argc < 0)
		return shell_error("too many arguments (at most %d words)", SHELL_MAX_ARGS);
	if (argc == 0)
		return 0;
	c = find_cmd(argv[0]);
	if (!c)
		return shell_error("unknown command '%s' (try 'help')", argv[0]);
	return c->run(argc, argv);
}

void shell_prompt(void)
{
	fputs(PROMPT, stdout);
	fflush(stdout);
}

/* Everything the UART holds, fed to the line editor; whether any came. */
static bool shell_read(void)
{
	char echo[LINE_ECHO_MAX];
	size_t echo_len;
	bool input = false;
	int c;

	while ((c = console_getc()) >= 0) {
		bool done = line_edit_feed(&editor, c, echo, &echo_len);

		input = true;
		fflush(stdout);
		console_write(echo, echo_len);
		if (c == 0x15) /* Ctrl-U erased the line: redraw the prompt */
			shell_prompt();
		if (done) {
			if (editor.too_long)
				shell_error("line longer than %d characters, ignored",
					    LINE_MAX_LEN - 1);
			else
				shell_run_line(editor.buf);
			shell_prompt();
		}
	}
	return input;
}

/*
 * CPU 0's console context: scheduled by the UART's interrupt, or by time
 * when input is polled. A command runs inside it, and one that waits
 * (poll_wait) runs the loop meanwhile; this context is not run again
 * until the command returns.
 */
static unsigned int shell_ctx_poll(struct poll_ctx *ctx, unsigned int budget)
{
	bool input = shell_read();
	uint64_t next = console_next_look(input);

	if (next != UINT64_MAX)
		poll_schedule_at(ctx, next);
	return input;
}

static struct poll_ctx shell_ctx = {
	.name = "console",
	.poll = shell_ctx_poll,
};

void shell_init(void)
{
	line_edit_init(&editor);
	shell_register(&help_cmd);
	if (poll_ctx_add(&shell_ctx))
		printf("shell: no poll context slot: no console input\n");
	else
		console_irq_init(&shell_ctx); /* else polled: shell_ctx_poll asks for times */
}
