// SPDX-License-Identifier: MIT
/* A console command's JSON form (kernel/shell_json.h). */
#include <stdio.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/shell.h"
#include "kernel/shell_json.h"

static char json_buf[SHELL_JSON_MAX];
static struct json_writer json_w;

bool shell_json_wanted(int *argc, char **argv)
{
	if (*argc < 2 || strcmp(argv[*argc - 1], "json"))
		return false;
	argv[--*argc] = NULL;
	return true;
}

struct json_writer *shell_json_begin(void)
{
	json_writer_init(&json_w, json_buf, sizeof(json_buf));
	json_open(&json_w, NULL, '{');
	return &json_w;
}

int shell_json_end(const char *cmd)
{
	long len;

	json_close(&json_w, '}');
	len = json_end(&json_w);
	if (len < 0)
		return shell_error("%s json: the object exceeds %d bytes", cmd, SHELL_JSON_MAX);
	/* the object whole, built before a byte is printed: never a cut line */
	fflush(stdout);
	console_write(cmd, strlen(cmd));
	console_write("-json: ", 7);
	console_write(json_buf, (size_t)len);
	console_write("\n", 1);
	return 0;
}
