// SPDX-License-Identifier: MIT
/*
 * `calibrate N` runs a loop of known length N times so that an instruction
 * counter outside the guest (the ringside-cost QEMU plugin) can be checked
 * to the instruction: the plugin's profile must show exactly
 * N * CALIBRATE_INSNS instructions in blocks starting at calibrate_body.
 *
 * The loop is written in assembly so the compiler cannot change its length.
 * calibrate_body is entered only by jumps (from calibrate_run and from its
 * own jnz), so under TCG every pass is one translated block that starts at
 * calibrate_body and ends at the jnz; the final ret has a symbol of its own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel/calibrate.h"
#include "kernel/shell.h"

/* Instructions from calibrate_body to its jnz, both included. */
#define CALIBRATE_INSNS 8
#define CALIBRATE_MAX 1000000000ull

/* rdi: passes (>= 1); returns a value that depends on every pass. */
uint64_t calibrate_run(uint64_t passes);
extern const char calibrate_body[];

asm(".pushsection .text.calibrate, \"ax\", @progbits\n"
    ".balign 64\n"
    ".globl calibrate_run\n"
    ".type calibrate_run, @function\n"
    "calibrate_run:\n"
    "	xor %eax, %eax\n"
    "	jmp calibrate_body\n"
    ".size calibrate_run, . - calibrate_run\n"
    ".balign 64\n"
    ".globl calibrate_body\n"
    ".type calibrate_body, @function\n"
    "calibrate_body:\n"
    "	add %rdi, %rax\n"
    "	xor $0x5a, %rax\n"
    "	rol $3, %rax\n"
    "	lea 1(%rax,%rdi,2), %rax\n"
    "	sub $7, %rax\n"
    "	imul $13, %rax, %rax\n"
    "	dec %rdi\n"
    "	jnz calibrate_body\n"
    ".size calibrate_body, . - calibrate_body\n"
    ".globl calibrate_done\n"
    ".type calibrate_done, @function\n"
    "calibrate_done:\n"
    "	ret\n"
    ".size calibrate_done, . - calibrate_done\n"
    ".popsection\n");

static int cmd_calibrate(int argc, char **argv)
{
	unsigned long long passes;
	uint64_t result;
	char *end;

	if (argc != 2)
		return shell_error("usage: calibrate N");
	passes = strtoull(argv[1], &end, 0);
	if (*end || argv[1][0] == '-' || passes < 1 || passes > CALIBRATE_MAX)
		return shell_error("calibrate: N must be 1..%llu", CALIBRATE_MAX);
	result = calibrate_run(passes);
	printf("calibrate: %llu passes x %u instructions at %#llx (calibrate_body), "
	       "result %#llx\n",
	       passes, CALIBRATE_INSNS, (unsigned long long)(uintptr_t)calibrate_body,
	       (unsigned long long)result);
	return 0;
}

static const struct shell_cmd calibrate_cmd = {
	.name = "calibrate",
	.usage = "N",
	.help = "run a fixed 8-instruction loop N times (checks cost counters)",
	.run = cmd_calibrate,
};

void calibrate_init(void)
{
	shell_register(&calibrate_cmd);
}
