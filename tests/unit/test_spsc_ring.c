// SPDX-License-Identifier: MIT
/*
 * The cross-CPU ring: its full and empty edges on one thread, then a
 * producer and a consumer thread exchanging a few million messages, each
 * one checked on arrival for its place in the order and its contents.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/spsc_ring.h"

#define MESSAGES 3000000u

static void fill(struct spsc_msg *m, uint64_t seq)
{
	m->fn = NULL;
	for (unsigned int i = 0; i < 7; i++)
		m->arg[i] = seq * 7 + i;
}

/* The message numbered @seq, exactly as fill() made it. */
static int check(const struct spsc_msg *m, uint64_t seq)
{
	for (unsigned int i = 0; i < 7; i++)
		if (m->arg[i] != seq * 7 + i)
			return -1;
	return m->fn ? -1 : 0;
}

static struct spsc_ring *ring_new(void)
{
	struct spsc_ring *r = aligned_alloc(SPSC_CACHE_LINE, sizeof(*r));

	assert_non_null(r);
	memset(r, 0xa5, sizeof(*r)); /* init must not rely on zeroed memory */
	spsc_ring_init(r);
	return r;
}

static void test_layout(void **state)
{
	assert_int_equal(sizeof(struct spsc_msg), SPSC_CACHE_LINE);
	/* each side's index alone on its line, the slots after both */
	assert_true(offsetof(struct spsc_ring, tail) - offsetof(struct spsc_ring, head) >=
		    SPSC_CACHE_LINE);
	assert_true(offsetof(struct spsc_ring, slot) - offsetof(struct spsc_ring, tail) >=
		    SPSC_CACHE_LINE);
}

static void test_empty_and_full(void **state)
{
	struct spsc_ring *r = ring_new();
	struct spsc_msg m;

	assert_true(spsc_ring_empty(r));
	assert_false(spsc_ring_full(r));
	assert_false(spsc_ring_pop(r, &m));
	for (unsigned int i = 0; i < SPSC_RING_SLOTS; i++) {
		assert_false(spsc_ring_full(r));
		assert_int_equal(spsc_ring_used(r), i);
		fill(&m, i);
		assert_true(spsc_ring_push(r, &m));
		assert_false(spsc_ring_empty(r));
	}
	assert_int_equal(spsc_ring_used(r), SPSC_RING_SLOTS);
	assert_true(spsc_ring_full(r));
	fill(&m, 999);
	assert_false(spsc_ring_push(r, &m)); /* refused, and nothing overwritten */
	for (unsigned int i = 0; i < SPSC_RING_SLOTS; i++) {
		assert_true(spsc_ring_pop(r, &m));
		assert_int_equal(check(&m, i), 0);
		assert_false(spsc_ring_full(r));
	}
	assert_true(spsc_ring_empty(r));
	assert_false(spsc_ring_pop(r, &m));
	free(r);
}

/* The indices run past 2^32: the count is head - tail, not a compare. */
static void test_index_wrap(void **state)
{
	struct spsc_ring *r = ring_new();
	struct spsc_msg m;

	r->head = r->tail = UINT32_MAX - 2;
	for (unsigned int i = 0; i < SPSC_RING_SLOTS; i++) {
		fill(&m, i);
		assert_true(spsc_ring_push(r, &m));
	}
	assert_true(spsc_ring_full(r));
	for (unsigned int i = 0; i < SPSC_RING_SLOTS; i++) {
		assert_true(spsc_ring_pop(r, &m));
		assert_int_equal(check(&m, i), 0);
		assert_int_equal(spsc_ring_used(r), SPSC_RING_SLOTS - 1 - i);
	}
	assert_true(spsc_ring_empty(r));
	free(r);
}

struct exchange {
	struct spsc_ring *ring;
	uint64_t full, bad, received;
};

static void *producer(void *arg)
{
	struct exchange *x = arg;
	struct spsc_msg m;

	for (uint64_t seq = 0; seq < MESSAGES; seq++) {
		fill(&m, seq);
		while (!spsc_ring_push(x->ring, &m)) {
			x->full++;
			sched_yield(); /* two threads may share one core */
		}
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct exchange *x = arg;
	struct spsc_msg m;

	while (x->received < MESSAGES) {
		if (!spsc_ring_pop(x->ring, &m)) {
			sched_yield();
			continue;
		}
		/* in order, none lost (a gap) nor twice (a repeat) */
		if (check(&m, x->received))
			x->bad++;
		x->received++;
	}
	return NULL;
}

static void test_two_threads(void **state)
{
	struct exchange x = { .ring = ring_new() };
	pthread_t p, c;

	assert_int_equal(pthread_create(&c, NULL, consumer, &x), 0);
	assert_int_equal(pthread_create(&p, NULL, producer, &x), 0);
	assert_int_equal(pthread_join(p, NULL), 0);
	assert_int_equal(pthread_join(c, NULL), 0);
	assert_int_equal(x.bad, 0);
	assert_int_equal(x.received, MESSAGES);
	assert_true(spsc_ring_empty(x.ring));
	free(x.ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_empty_and_full),
		cmocka_unit_test(test_index_wrap),
		cmocka_unit_test(test_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
