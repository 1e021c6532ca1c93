// SPDX-License-Identifier: MIT
/*
 * netsink: the receive benchmark's guest side. While it runs, a net RX tap
 * takes every frame the driver delivers before the protocols would, counts
 * it and drops it, so what is measured is the driver and the ring, not
 * Ethernet/IP parsing. Frames the driver itself dropped are reported by
 * reason from the device counters (deltas over the run): a sender's count
 * must equal frames + drops. The frames are counted by the receive queue
 * they came in on (net_rx_queue()), each queue's count written only by
 * the CPU that owns the queue; with more than one pair the report gives
 * each queue's.
 *
 *   netsink [seconds=S] [idle=MS]   run, stop after S s or MS ms without frames
 *   netsink on | show | off         the same as a switch (off prints the report)
 *   ... json                        the report as one line of JSON, for programs
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/shell_json.h"
#include "kernel/time.h"
#include "net/net.h"

#define NETSINK_MAX_SECONDS 3600

/* The device counters that mean "a frame arrived and the driver dropped it". */
#define NETSINK_DROPS(X) \
	X(rx_drop_short) X(rx_drop_long) X(rx_drop_num_buffers) X(rx_drop_bad_token)

/* One receive queue's frames, in a cache line of its own (its owner CPU's). */
struct netsink_queue {
	uint64_t frames, bytes;
	uint64_t first_ns, last_ns; /* first and last frame seen */
} __attribute__((aligned(64)));

struct netsink {
	bool on;
	struct net_dev *dev;
	struct net_dev_stats base; /* device counters when the run started */
	struct netsink_queue queue[NET_MAX_QUEUES];
};

static struct netsink sink;

static void netsink_tap(struct net_dev *dev, const void *frame, uint32_t len)
{
	unsigned int q = net_rx_queue();
	struct netsink_queue *sq = &sink.queue[q < NET_MAX_QUEUES ? q : 0];
	uint64_t now = now_ns();

	(void)dev;
	(void)frame;
	if (!sq->frames)
		sq->first_ns = now;
	sq->last_ns = now;
	sq->frames++;
	sq->bytes += len;
}

/* Every queue's counts together: the first frame of any, the last of any. */
static struct netsink_queue netsink_total(void)
{
	struct netsink_queue t = { 0 };

	for (unsigned int q = 0; q < NET_MAX_QUEUES; q++) {
		const struct netsink_queue *sq = &sink.queue[q];

		if (!sq->frames)
			continue;
		if (!t.frames || sq->first_ns < t.first_ns)
			t.first_ns = sq->first_ns;
		if (sq->last_ns > t.last_ns)
			t.last_ns = sq->last_ns;
		t.frames += sq->frames;
		t.bytes += sq->bytes;
	}
	return t;
}

static int netsink_on(void)
{
	struct net_dev *dev = net_device();

	if (!dev)
		return shell_error("netsink: no network device");
	memset(&sink, 0, sizeof(sink));
	sink.dev = dev;
	net_dev_stats_sum(dev, &sink.base);
	sink.on = true;
	net_set_rx_tap(netsink_tap);
	return 0;
}

/* With more than one pair set up: the frames each receive queue brought. */
static void netsink_report_queues(void)
{
	unsigned int n = sink.dev->queues_set_up;

	if (n < 2)
		return;
	printf("netsink: per queue");
	for (unsigned int q = 0; q < n && q < NET_MAX_QUEUES; q++)
		printf(" %u=%llu", q, (unsigned long long)sink.queue[q].frames);
	printf("\n");
}

/* The report for programs: counts and nanoseconds, the drops by reason. */
static int netsink_report_json(void)
{
	const struct net_dev_stats *base = &sink.base;
	struct netsink_queue t = netsink_total();
	struct json_writer *w = shell_json_begin();
	struct net_dev_stats now;
	uint64_t total = 0;

	json_put_u64(w, "frames", t.frames);
	json_put_u64(w, "bytes", t.bytes);
	json_put_u64(w, "ns", t.last_ns - t.first_ns);
	json_open(w, "queues", '[');
	for (unsigned int q = 0; q < sink.dev->queues_set_up && q < NET_MAX_QUEUES; q++)
		json_put_u64(w, NULL, sink.queue[q].frames);
	json_close(w, ']');
	json_put_bool(w, "device_changed", net_device() != sink.dev);
	if (net_device() == sink.dev) {
		net_dev_stats_sum(sink.dev, &now);
		json_open(w, "drops", '{');
#define NETSINK_JSON_DROP(name)                            \
	json_put_u64(w, #name + 3, now.name - base->name); \
	total += now.name - base->name;
		NETSINK_DROPS(NETSINK_JSON_DROP)
#undef NETSINK_JSON_DROP
		json_put_u64(w, "total", total);
		json_put_u64(w, "refill_fail", now.rx_refill_fail - base->rx_refill_fail);
		json_close(w, '}');
	}
	return shell_json_end("netsink");
}

static int netsink_report(bool json)
{
	const struct net_dev_stats *base = &sink.base;
	struct netsink_queue t = netsink_total();
	double secs = (t.last_ns - t.first_ns) / 1e9;
	struct net_dev_stats now_sum, *now = &now_sum;
	uint64_t total = 0;

	if (json)
		return netsink_report_json();
	/* the rate counts the gaps between frames: n frames span n - 1 of them */
	printf("netsink: %llu frames %llu bytes in %.6f s: %.4f Mpps %.4f Gb/s\n",
	       (unsigned long long)t.frames, (unsigned long long)t.bytes, secs,
	       secs > 0 ? (t.frames - 1) / secs / 1e6 : 0.0,
	       secs > 0 ? t.bytes * 8 / secs / 1e9 : 0.0);
	/* a re-probe freed the device the run started on, and its counters */
	if (net_device() != sink.dev) {
		printf("netsink: the network device changed during the run: no drop counts\n");
		return 0;
	}
	net_dev_stats_sum(sink.dev, now);
	printf("netsink: drops");
#define NETSINK_PRINT_DROP(name)                                                     \
	printf(" %s=%llu", #name + 3, (unsigned long long)(now->name - base->name)); \
	total += now->name - base->name;
	NETSINK_DROPS(NETSINK_PRINT_DROP)
#undef NETSINK_PRINT_DROP
	/* not a lost frame, but the ring ran short of buffers meanwhile */
	printf(" total=%llu refill_fail=%llu\n", (unsigned long long)total,
	       (unsigned long long)(now->rx_refill_fail - base->rx_refill_fail));
	netsink_report_queues();
	return 0;
}

static int netsink_off(bool json)
{
	net_set_rx_tap(NULL);
	sink.on = false;
	return netsink_report(json);
}

struct netsink_wait {
	uint64_t end_ns, idle_ns;
};

static enum poll_step netsink_step(void *arg)
{
	const struct netsink_wait *w = arg;
	uint64_t now = now_ns();

	if (now >= w->end_ns)
		return POLL_DONE;
	/* idle counts from the last frame, so it ends only after traffic */
	if (w->idle_ns) {
		struct netsink_queue t = netsink_total();

		if (t.frames && now - t.last_ns >= w->idle_ns)
			return POLL_DONE;
	}
	return POLL_AGAIN;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	return config_parse_uint(s, out) || *out > max ? -EINVAL : 0;
}

static int netsink_timed(int argc, char **argv, bool json)
{
	uint64_t seconds = 10, idle_ms = 0;
	struct netsink_wait w;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "seconds=", 8) &&
		    !parse_u64(argv[i] + 8, NETSINK_MAX_SECONDS, &seconds) && seconds)
			continue;
		if (!strncmp(argv[i], "idle=", 5) &&
		    !parse_u64(argv[i] + 5, NETSINK_MAX_SECONDS * 1000ULL, &idle_ms))
			continue;
		return shell_error("netsink: bad argument '%s' (seconds=1..%d idle=MS on show off)",
				   argv[i], NETSINK_MAX_SECONDS);
	}
	ret = netsink_on();
	if (ret)
		return ret;
	w.end_ns = now_ns() + seconds * 1000000000ULL;
	w.idle_ns = idle_ms * 1000000ULL;
	poll_wait(netsink_step, &w, w.end_ns);
	return netsink_off(json);
}

static int cmd_netsink(int argc, char **argv)
{
	bool json = shell_json_wanted(&argc, argv);

	if (argc == 2 && !strcmp(argv[1], "on"))
		return sink.on ? shell_error("netsink: already on") : netsink_on();
	if (argc == 2 && (!strcmp(argv[1], "off") || !strcmp(argv[1], "show"))) {
		if (!sink.on)
			return shell_error("netsink: not on");
		if (argv[1][1] == 'f')
			return netsink_off(json);
		return netsink_report(json);
	}
	if (sink.on)
		return shell_error("netsink: already on (netsink off first)");
	return netsink_timed(argc, argv, json);
}

static const struct shell_cmd netsink_cmd = {
	.name = "netsink",
	.usage = "[seconds=10] [idle=MS] | on | show | off [json]",
	.help = "count and drop every received frame before the protocols, print Mpps and drops",
	.run = cmd_netsink,
};

void netsink_init(void)
{
	shell_register(&netsink_cmd);
}
