// SPDX-License-Identifier: MIT
/*
 * ringside-fuzz-gen: the guest fuzzer's steps on the host, from the same
 * generator (drivers/virtio/fuzz_gen.c), for the campaign tool
 * (host/ringside/fuzz.py): the tokens of a seed's range, and the digest
 * the guest prints for them.
 *
 *   ringside-fuzz-gen SEED TARGET FROM COUNT   tokens, one a line, then "digest D"
 *   ringside-fuzz-gen --digest TOKEN...        "digest D" of the tokens given
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/fuzz_gen.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ringside-fuzz-gen SEED vsock|net|transport FROM COUNT\n"
		   "       ringside-fuzz-gen --digest TOKEN...\n"
		   "The guest fuzzer's steps (fuzz SEED ... on its console) and their digest.\n");
}

static int number(const char *s, unsigned long long *out)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return *end || errno ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long long seed, from, count;
	uint64_t digest = FUZZ_DIGEST_INIT;
	char tok[FUZZ_TOKEN_MAX];
	struct fuzz_step s;
	enum fuzz_target target;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--digest")) {
		for (int i = 2; i < argc; i++) {
			if (fuzz_token_parse(argv[i], &s)) {
				fprintf(stderr, "ringside-fuzz-gen: '%s' is not a step\n", argv[i]);
				return 2;
			}
			digest = fuzz_digest(digest, &s);
		}
		printf("digest %016llx\n", (unsigned long long)digest);
		return 0;
	}
	if (argc != 5) {
		usage(stderr);
		return 2;
	}
	target = fuzz_target_parse(argv[2]);
	if (number(argv[1], &seed) || target == FUZZ_TARGETS || number(argv[3], &from) ||
	    number(argv[4], &count)) {
		usage(stderr);
		return 2;
	}
	for (unsigned long long i = 0; i < count; i++) {
		s = fuzz_step_at(seed, target, from + i);
		digest = fuzz_digest(digest, &s);
		printf("%s\n", fuzz_token(&s, tok));
	}
	printf("digest %016llx\n", (unsigned long long)digest);
	return 0;
}
