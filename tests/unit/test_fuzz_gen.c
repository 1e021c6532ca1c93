// SPDX-License-Identifier: MIT
/*
 * The guest fuzzer's step sequence (drivers/virtio/fuzz_gen.c): the same
 * seed gives the same steps, step by step and in any range; each step is
 * of its target; tokens round-trip and bad ones are refused; the digest
 * tells orders apart. A pinned step and digest keep the sequence of a
 * seed from changing by accident: campaigns print seeds, and a seed must
 * mean the same steps in every build.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drivers/virtio/fuzz_gen.h"

#define N 4096

static void test_same_seed_same_steps(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < FUZZ_TARGETS; t++)
		for (uint64_t i = 0; i < N; i++) {
			struct fuzz_step a = fuzz_step_at(0x5eed, t, i);
			struct fuzz_step b = fuzz_step_at(0x5eed, t, i);

			assert_int_equal(a.kind, b.kind);
			assert_true(a.word == b.word);
		}
}

static uint64_t range_digest(uint64_t seed, enum fuzz_target t, uint64_t from, uint64_t n)
{
	uint64_t d = FUZZ_DIGEST_INIT;

	for (uint64_t i = 0; i < n; i++) {
		struct fuzz_step s = fuzz_step_at(seed, t, from + i);

		d = fuzz_digest(d, &s);
	}
	return d;
}

static void test_pinned_sequence(void **state)
{
	struct fuzz_step s = fuzz_step_at(1, FUZZ_VSOCK, 0);
	char tok[FUZZ_TOKEN_MAX];

	(void)state;
	assert_string_equal(fuzz_token(&s, tok), "rg.245a001a04ec4000");
	s = fuzz_step_at(1, FUZZ_TRANSPORT, 3);
	assert_string_equal(fuzz_token(&s, tok), "mv.88052362be32061");
	/* build/host/ringside-fuzz-gen 1 vsock 0 10 prints the same */
	assert_true(range_digest(1, FUZZ_VSOCK, 0, 10) == 0x9eeca970a00b0f61ULL);
}

static void test_seeds_and_targets_differ(void **state)
{
	(void)state;
	assert_true(range_digest(1, FUZZ_VSOCK, 0, 64) != range_digest(2, FUZZ_VSOCK, 0, 64));
	assert_true(range_digest(1, FUZZ_VSOCK, 0, 64) != range_digest(1, FUZZ_NET, 0, 64));
	assert_true(range_digest(1, FUZZ_VSOCK, 0, 64) != range_digest(1, FUZZ_VSOCK, 1, 64));
}

static void test_steps_belong_to_their_target(void **state)
{
	unsigned int seen[FUZZ_TARGETS][FK_KINDS];

	(void)state;
	memset(seen, 0, sizeof(seen));
	for (unsigned int t = 0; t < FUZZ_TARGETS; t++)
		for (uint64_t i = 0; i < N; i++) {
			struct fuzz_step s = fuzz_step_at(7, t, i);

			assert_true(s.kind < FK_KINDS);
			assert_true(fuzz_kind_in(s.kind, t));
			seen[t][s.kind]++;
		}
	/* every kind of a target is drawn, and words are sparse: most fields honest */
	for (unsigned int t = 0; t < FUZZ_TARGETS; t++)
		for (unsigned int k = 0; k < FK_KINDS; k++)
			if (fuzz_kind_in(k, t))
				assert_true(seen[t][k] > 0);
	assert_false(fuzz_kind_in(FK_HDR, FUZZ_NET));
	assert_false(fuzz_kind_in(FK_NET_HDR, FUZZ_VSOCK));
	assert_false(fuzz_kind_in(FK_STATUS, FUZZ_VSOCK));
	assert_true(fuzz_kind_in(FK_CHAIN, FUZZ_NET));
}

static void test_words_are_sparse(void **state)
{
	unsigned int bits = 0;

	(void)state;
	for (uint64_t i = 0; i < N; i++)
		bits += __builtin_popcountll(fuzz_step_at(3, FUZZ_VSOCK, i).word);
	/* a bit in four: 16 of 64 on average */
	assert_in_range(bits / N, 14, 18);
}

static void test_tokens_round_trip(void **state)
{
	char tok[FUZZ_TOKEN_MAX];
	struct fuzz_step back;

	(void)state;
	for (unsigned int t = 0; t < FUZZ_TARGETS; t++)
		for (uint64_t i = 0; i < N; i++) {
			struct fuzz_step s = fuzz_step_at(11, t, i);

			assert_int_equal(fuzz_token_parse(fuzz_token(&s, tok), &back), 0);
			assert_int_equal(back.kind, s.kind);
			assert_true(back.word == s.word);
		}
	back.kind = FK_STATUS;
	back.word = ~0ULL;
	assert_string_equal(fuzz_token(&back, tok), "st.ffffffffffffffff");
	assert_int_equal(fuzz_token_parse("hd.0", &back), 0);
	assert_int_equal(back.kind, FK_HDR);
	assert_true(back.word == 0);
	assert_int_equal(fuzz_token_parse("NH.A", &back), -1);
	assert_int_equal(fuzz_token_parse("nh.A", &back), 0);
	assert_true(back.word == 10);
}

static void test_bad_tokens_refused(void **state)
{
	static const char *const bad[] = {
		"",	 "hd",
		"hd.",	 "h.1",
		"zz.1",	 "hd:1",
		"hd.1g", "hd.-1",
		"hd. 1", "hd.11112222333344445", /* 17 hex digits: more than a word */
	};
	struct fuzz_step s;

	(void)state;
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(fuzz_token_parse(bad[i], &s), -1);
}

static void test_digest_orders_differ(void **state)
{
	struct fuzz_step a = { FK_HDR, 1 }, b = { FK_HDR, 2 };
	uint64_t ab = fuzz_digest(fuzz_digest(FUZZ_DIGEST_INIT, &a), &b);
	uint64_t ba = fuzz_digest(fuzz_digest(FUZZ_DIGEST_INIT, &b), &a);

	(void)state;
	assert_true(ab != ba);
	a.kind = FK_CHAIN;
	assert_true(fuzz_digest(FUZZ_DIGEST_INIT, &a) !=
		    fuzz_digest(FUZZ_DIGEST_INIT, &(struct fuzz_step){ FK_HDR, 1 }));
}

static void test_target_names(void **state)
{
	(void)state;
	for (unsigned int t = 0; t < FUZZ_TARGETS; t++)
		assert_int_equal(fuzz_target_parse(fuzz_target_name(t)), t);
	assert_int_equal(fuzz_target_parse("vsock2"), FUZZ_TARGETS);
	assert_int_equal(fuzz_target_parse(""), FUZZ_TARGETS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_steps),
		cmocka_unit_test(test_pinned_sequence),
		cmocka_unit_test(test_seeds_and_targets_differ),
		cmocka_unit_test(test_steps_belong_to_their_target),
		cmocka_unit_test(test_words_are_sparse),
		cmocka_unit_test(test_tokens_round_trip),
		cmocka_unit_test(test_bad_tokens_refused),
		cmocka_unit_test(test_digest_orders_differ),
		cmocka_unit_test(test_target_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
