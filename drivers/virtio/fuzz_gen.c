// SPDX-License-Identifier: MIT
/*
 * The fuzzer's step sequence (fuzz_gen.h): step i of a seed is drawn from
 * a hash of the seed, the target and i alone (SplitMix64's finaliser),
 * so a range of steps needs none of the steps before it, and a kind is
 * picked by its weight in the target's table. A word is two hashes ANDed:
 * each bit is set one time in four, so most fields of a step keep their
 * honest value and a step tells one or two lies, not all of them at once.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/fuzz_gen.h"

static const char *const kind_names[FK_KINDS] = {
	[FK_HDR] = "hd",      [FK_CREDIT] = "cr",  [FK_SEQ] = "sq",    [FK_CHAIN] = "dc",
	[FK_INDIRECT] = "it", [FK_RING] = "rg",	   [FK_EVENT] = "ev",  [FK_KICK] = "kk",
	[FK_RXBUF] = "rx",    [FK_NET_HDR] = "nh", [FK_STATUS] = "st", [FK_QUEUE] = "qs",
	[FK_VECTOR] = "mv",   [FK_NOTIFY] = "nq",  [FK_QRESET] = "qr",
};

static const char *const target_names[FUZZ_TARGETS] = {
	[FUZZ_VSOCK] = "vsock",
	[FUZZ_NET] = "net",
	[FUZZ_TRANSPORT] = "transport",
};

struct kind_weight {
	enum fuzz_kind kind;
	unsigned int weight;
};

/* What each target draws, and how often (out of the row's sum). */
static const struct kind_weight vsock_kinds[] = {
	{ FK_HDR, 30 }, { FK_CREDIT, 10 }, { FK_SEQ, 8 },  { FK_CHAIN, 16 }, { FK_INDIRECT, 10 },
	{ FK_RING, 6 }, { FK_EVENT, 6 },   { FK_KICK, 4 }, { FK_RXBUF, 6 },
};
static const struct kind_weight net_kinds[] = {
	{ FK_NET_HDR, 45 }, { FK_CHAIN, 20 }, { FK_INDIRECT, 15 },
	{ FK_RING, 8 },	    { FK_EVENT, 6 },  { FK_KICK, 6 },
};
static const struct kind_weight transport_kinds[] = {
	{ FK_STATUS, 25 }, { FK_QUEUE, 30 },  { FK_VECTOR, 20 },
	{ FK_NOTIFY, 15 }, { FK_QRESET, 10 },
};

static const struct {
	const struct kind_weight *kinds;
	unsigned int n;
} tables[FUZZ_TARGETS] = {
	[FUZZ_VSOCK] = { vsock_kinds, sizeof(vsock_kinds) / sizeof(vsock_kinds[0]) },
	[FUZZ_NET] = { net_kinds, sizeof(net_kinds) / sizeof(net_kinds[0]) },
	[FUZZ_TRANSPORT] = { transport_kinds,
			     sizeof(transport_kinds) / sizeof(transport_kinds[0]) },
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

struct fuzz_step fuzz_step_at(uint64_t seed, enum fuzz_target target, uint64_t index)
{
	uint64_t h = mix(mix(seed) ^ mix(index ^ ((uint64_t)target << 56)));
	const struct kind_weight *k = tables[target].kinds;
	unsigned int n = tables[target].n, sum = 0, pick;
	struct fuzz_step step;

	for (unsigned int i = 0; i < n; i++)
		sum += k[i].weight;
	pick = (unsigned int)((h >> 32) % sum);
	for (unsigned int i = 0; i < n; i++) {
		if (pick < k[i].weight) {
			step.kind = k[i].kind;
			break;
		}
		pick -= k[i].weight;
	}
	step.word = mix(h ^ 0x5851f42d4c957f2dULL) & mix(h ^ 0x14057b7ef767814fULL);
	return step;
}

bool fuzz_kind_in(enum fuzz_kind kind, enum fuzz_target target)
{
	if (target >= FUZZ_TARGETS)
		return false;
	for (unsigned int i = 0; i < tables[target].n; i++)
		if (tables[target].kinds[i].kind == kind)
			return true;
	return false;
}

const char *fuzz_kind_name(enum fuzz_kind kind)
{
	return kind < FK_KINDS ? kind_names[kind] : "??";
}

const char *fuzz_target_name(enum fuzz_target target)
{
	return target < FUZZ_TARGETS ? target_names[target] : "?";
}

enum fuzz_target fuzz_target_parse(const char *name)
{
	for (unsigned int t = 0; t < FUZZ_TARGETS; t++)
		if (!strcmp(name, target_names[t]))
			return (enum fuzz_target)t;
	return FUZZ_TARGETS;
}

char *fuzz_token(const struct fuzz_step *step, char *buf)
{
	snprintf(buf, FUZZ_TOKEN_MAX, "%s.%llx", fuzz_kind_name(step->kind),
		 (unsigned long long)step->word);
	return buf;
}

int fuzz_token_parse(const char *token, struct fuzz_step *step)
{
	size_t len = strlen(token);
	int k;

	/* KIND, a dot, then 1 to 16 hex digits and nothing else */
	if (len < 4 || len > 3 + 16 || token[2] != '.')
		return -1;
	for (size_t i = 3; i < len; i++)
		if (!isxdigit((unsigned char)token[i]))
			return -1;
	for (k = 0; k < FK_KINDS; k++)
		if (!strncmp(token, kind_names[k], 2))
			break;
	if (k == FK_KINDS)
		return -1;
	step->kind = (enum fuzz_kind)k;
	step->word = strtoull(token + 3, NULL, 16);
	return 0;
}

uint64_t fuzz_digest(uint64_t digest, const struct fuzz_step *step)
{
	uint8_t bytes[9];

	bytes[0] = (uint8_t)step->kind;
	for (unsigned int i = 0; i < 8; i++)
		bytes[1 + i] = (uint8_t)(step->word >> (8 * i));
	for (unsigned int i = 0; i < sizeof(bytes); i++)
		digest = (digest ^ bytes[i]) * 0x100000001b3ULL;
	return digest;
}
