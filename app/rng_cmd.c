// SPDX-License-Identifier: MIT
/*
 * `rng BYTES`: reads entropy from virtio-rng in requests of up to 4 KiB
 * until BYTES arrived and prints a digest of them. Each request is waited
 * for in the poll loop, so the services keep running.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "app/app.h"
#include "drivers/virtio/virtio_rng.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/time.h"

#define RNG_TIMEOUT_NS 10000000000ULL

struct rng_wait {
	const uint8_t *data;
	uint32_t got;
	int ret;
};

static enum poll_step rng_answered(void *arg)
{
	struct rng_wait *w = arg;

	w->ret = virtio_rng_collect(&w->data, &w->got);
	return w->ret ? POLL_DONE : POLL_AGAIN;
}

/* One request: ask for @len bytes, wait for the device to return them. */
static int rng_read(uint32_t len, struct rng_wait *w)
{
	int ret = virtio_rng_request(len);

	if (ret == -ENOSPC)
		return shell_error("rng: queue full");
	if (ret == -EBUSY)
		return shell_error("rng: the device still owes an earlier request");
	if (ret)
		return shell_error("rng: request failed (%d)", ret);
	if (!poll_wait(rng_answered, w, now_ns() + RNG_TIMEOUT_NS)) {
		virtio_rng_abandon();
		return shell_error("rng: device did not answer in 10 s");
	}
	if (w->ret < 0)
		return shell_error("rng: unexpected completion token");
	return 0;
}

static int cmd_rng(int argc, char **argv)
{
	unsigned long want = 64, have = 0;
	uint32_t sum = 0, ones = 0;

	if (argc > 2)
		return shell_error("usage: rng [BYTES]");
	if (argc == 2) {
		uint64_t v;

		if (config_parse_uint(argv[1], &v) || !v || v > (64UL << 20))
			return shell_error("rng: BYTES must be 1..64m, got '%s'", argv[1]);
		want = v;
	}
	if (!virtio_rng_present())
		return shell_error("rng: no virtio-rng device");
	while (have < want) {
		uint32_t len = want - have > VIRTIO_RNG_MAX_READ ? VIRTIO_RNG_MAX_READ :
								   want - have;
		struct rng_wait w = { 0 };

		if (rng_read(len, &w))
			return -1;
		for (uint32_t i = 0; i < w.got; i++) {
			sum = sum * 31 + w.data[i];
			ones += __builtin_popcount(w.data[i]);
		}
		have += w.got;
	}
	/* for random data about half the bits are set */
	printf("rng: %lu bytes, %u one bits (%.1f%%), digest %08x\n", have, ones,
	       100.0 * ones / (8.0 * have), sum);
	return 0;
}

static const struct shell_cmd rng_cmd = {
	.name = "rng",
	.usage = "[BYTES]",
	.help = "read entropy from virtio-rng",
	.run = cmd_rng,
};

void rng_cmd_init(void)
{
	shell_register(&rng_cmd);
}
