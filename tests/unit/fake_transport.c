// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_transport.h"
#include "kernel/poll.h"

struct vsock_pkt *sent[MAX_SENT];
unsigned int n_sent;
bool transport_full;
bool transport_direct;
unsigned int tx_full_asked, local_cid_asked;
uint32_t fake_raised;
static const struct poller *fake_pollers[POLL_MAX];

static uint64_t fake_cid(void)
{
	local_cid_asked++;
	return GUEST_CID;
}

static bool fake_send(struct vsock_pkt *pkt)
{
	assert_true(n_sent < MAX_SENT);
	sent[n_sent++] = pkt;
	return transport_direct;
}

static bool fake_full(void)
{
	tx_full_asked++;
	return transport_full;
}

const struct vsock_transport fake = {
	.name = "fake",
	.local_cid = fake_cid,
	.send_pkt = fake_send,
	.tx_full = fake_full,
};

void clear_sent(void)
{
	for (unsigned int i = 0; i < n_sent; i++)
		vsock_pkt_free(sent[i]);
	n_sent = 0;
}

uint32_t fake_bit(const struct poller *p)
{
	unsigned int i = 0;

	while (i < POLL_MAX && fake_pollers[i] && fake_pollers[i] != p)
		i++;
	assert_true(i < POLL_MAX);
	fake_pollers[i] = p;
	return 1u << i;
}

static void fake_raise(uint32_t bits)
{
	fake_raised |= bits;
}

static const struct poller fake_pass = { .name = "fake-pass" };

const struct vsock_hooks fake_hooks = {
	.raise = fake_raise,
	.bit = fake_bit,
	.pass = &fake_pass,
};
