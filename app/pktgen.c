// SPDX-License-Identifier: MIT
/*
 * pktgen: `pktgen count=N size=64 burst=256 dst=IP[,MAC] queues=Q`. With
 * Q > 1 each transmit queue sends its own flow (source port 9 + queue),
 * the count split evenly among them, from the CPU that owns the queue's
 * pair (net_pair_cpu): the queues of one CPU a burst each in turn. Each burst goes
 * to the driver in one xmit_burst call (one kick at most); between bursts
 * the device is polled as the poll loop would, which is where sent buffers
 * are reclaimed when txpoll=1 (as virtio-net frees them only in NAPI).
 * Prints packets, Mpps and kicks per packet; the clock stops when the last
 * frame is queued.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/pktgen.h"
#include "kernel/barrier.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/shell_json.h"
#include "kernel/time.h"
#include "kernel/xcpu.h"
#include "net/proto.h"

#define PKTGEN_STALL_NS 5000000000ULL
#define PKTGEN_RETRY_NS 1000000ULL /* another CPU's look at a full ring, as poll_wait's */
#define PKTGEN_ARP_NS 3000000000ULL
#define PKTGEN_SRC_PORT 9

/*
 * Queue q's flow: source port PKTGEN_SRC_PORT + q, so a receiver tells
 * the queues apart (and a device that hashes flows keeps each on one).
 */
static uint32_t build_flow(uint8_t *frame, const struct pktgen_params *p, const uint8_t *src_mac,
			   unsigned int q)
{
	uint32_t len = p->size < ETH_ZLEN ? ETH_ZLEN : p->size;
	uint32_t payload;
	uint8_t *ip = frame + ETH_HLEN, *udp = ip + IP_HLEN, *data = udp + UDP_HLEN;

	if (len > ETH_FRAME_LEN)
		len = ETH_FRAME_LEN;
	payload = len - ETH_HLEN - IP_HLEN - UDP_HLEN;
	memset(data, 0, payload);
	/* pktgen's header: magic, then a sequence number (0: one flow, one frame) */
	put_be32(data, PKTGEN_MAGIC);
	eth_build_header(frame, p->dst_mac, src_mac, ETH_P_IP);
	ipv4_build_header(ip, net_ip(), p->dst, IPPROTO_UDP, UDP_HLEN + payload, 0);
	udp_build_header(udp, net_ip(), p->dst, (uint16_t)(PKTGEN_SRC_PORT + q), p->port, payload);
	return len;
}

uint32_t pktgen_build(uint8_t *frame, const struct pktgen_params *p, const uint8_t *src_mac)
{
	return build_flow(frame, p, src_mac, 0);
}

static unsigned int pktgen_queues(const struct net_dev *dev)
{
	return dev->nqueues ? dev->nqueues : 1;
}

static uint64_t tx_kicks(const struct net_dev *dev)
{
	struct net_dev_stats sum;

	net_dev_stats_sum(dev, &sum);
	return sum.tx_kicks;
}

/*
 * One CPU's part of a run, written by that CPU alone: what it sent on each
 * queue it owns, when it last queued a frame, and whether it is done.
 */
struct pktgen_cpu {
	uint64_t sent_queue[NET_MAX_QUEUES];
	uint64_t ring_full;
	uint64_t progress_ns; /* the last burst that moved; the clock stops there */
	bool taking_part;
	volatile bool done;
} __attribute__((aligned(64)));

/*
 * A run: its parameters and templates, read-only while it runs, and a
 * part per CPU. Each queue has its share of the count; the CPU that owns
 * the queue's pair sends it (a flow per queue, a sender per CPU, as Linux
 * runs a pktgen thread per CPU): CPU 0 from the shell command's wait,
 * every other CPU from a poll context a request added there.
 */
struct pktgen_run {
	struct pktgen_params params; /* a copy: a CPU that stops late still reads it */
	struct net_dev *dev;
	const struct net_frame (*frames)[PKTGEN_MAX_BURST]; /* one template per queue */
	unsigned int queues;
	uint64_t quota[NET_MAX_QUEUES];
	volatile bool stop; /* CPU 0 gave up: the others stop too */
	struct pktgen_cpu cpu[PERCPU_MAX_CPUS];
};

/*
 * One burst on each queue @cpu owns that has frames left. Between bursts
 * the loop reclaims sent buffers (the txpoll=1 path) and keeps RX and
 * every other service of the CPU going.
 */
static enum poll_step send_bursts(struct pktgen_run *run, unsigned int cpu)
{
	struct pktgen_cpu *pc = &run->cpu[cpu];
	bool moved = false, left_any = false;
	uint64_t now;

	/* the device went away (a re-probe, a recovery): its rings are freed */
	if (net_this_cpu()->dev != run->dev)
		return POLL_DONE;

	for (unsigned int q = 0; q < run->queues; q++) {
		uint64_t left = run->quota[q] - pc->sent_queue[q];
		unsigned int n = left < run->params.burst ? (unsigned int)left : run->params.burst;
		unsigned int got;

		if (net_pair_cpu(run->dev, q) != cpu || !left)
			continue;
		left_any = true;
		got = net_dev_xmit(run->dev, q, run->frames[q], n);
		pc->sent_queue[q] += got;
		if (got < n)
			pc->ring_full++;
		moved |= got != 0;
	}
	if (!left_any)
		return POLL_DONE;
	now = now_ns();
	if (moved) {
		pc->progress_ns = now;
		return POLL_PROGRESS;
	}
	/*
	 * The ring is full: let the loop sleep until the device has taken
	 * something (a pass that reclaims counts as work) instead of spinning
	 * on a full ring, which spends the CPU on asking the device again.
	 */
	return now - pc->progress_ns > PKTGEN_STALL_NS ? POLL_DONE : POLL_AGAIN;
}

/* ---- the other CPUs' senders ---- */

/*
 * A CPU's sender, a poll context of its own there, added by the first
 * run it sends for; its run set and cleared on that CPU only.
 */
struct pktgen_sender {
	struct poll_ctx ctx;
	struct pktgen_run *run;
};

static DEFINE_PER_CPU(struct pktgen_sender, senders);

static void cpu_finish(struct pktgen_sender *ps, unsigned int cpu)
{
	struct pktgen_run *run = ps->run;

	ps->run = NULL;
	/* the counts before done: a release store, read by CPU 0's acquire */
	__atomic_store_n(&run->cpu[cpu].done, true, __ATOMIC_RELEASE);
}

/*
 * A burst per queue per pass while frames move (scheduled again at
 * once); on a full ring, a look after PKTGEN_RETRY_NS, the pair's own
 * context reclaiming meanwhile (the driver scheduled it).
 */
static unsigned int cpu_send(struct poll_ctx *ctx, unsigned int budget)
{
	struct pktgen_sender *ps = this_cpu_ptr(&senders);
	unsigned int cpu = percpu_read(index);
	enum poll_step s;

	if (!ps->run)
		return 0;
	s = ps->run->stop ? POLL_DONE : send_bursts(ps->run, cpu);
	if (s == POLL_DONE)
		cpu_finish(ps, cpu);
	else if (s == POLL_AGAIN)
		poll_schedule_at(ctx, now_ns() + PKTGEN_RETRY_NS);
	else
		poll_schedule(ctx);
	return s == POLL_PROGRESS;
}

/* On CPU @cpu (a request): send its queues' shares of arg[0]'s run. */
static void cpu_start(const struct spsc_msg *m, unsigned int cpu)
{
	struct pktgen_run *run = (struct pktgen_run *)(uintptr_t)m->arg[0];
	struct pktgen_sender *ps = this_cpu_ptr(&senders);

	run->cpu[cpu].progress_ns = now_ns();
	ps->run = run;
	if (!ps->ctx.poll) {
		ps->ctx.name = "pktgen";
		ps->ctx.poll = cpu_send;
		if (poll_ctx_add(&ps->ctx)) {
			ps->ctx.poll = NULL;
			cpu_finish(ps, cpu); /* no room: it sends nothing, the total says so */
			return;
		}
	}
	poll_schedule(&ps->ctx);
}

/* ---- CPU 0: the command's wait ---- */

/* Every CPU that takes part is done; those still going are stopped on a stall. */
static bool others_done(struct pktgen_run *run)
{
	uint64_t now = now_ns();
	bool all = true;

	for (unsigned int c = 1; c < PERCPU_MAX_CPUS; c++) {
		struct pktgen_cpu *pc = &run->cpu[c];

		if (!pc->taking_part || __atomic_load_n(&pc->done, __ATOMIC_ACQUIRE))
			continue;
		all = false;
		/* its own stall check failed to end it (the CPU does not run): give up */
		if (now - pc->progress_ns > 2 * PKTGEN_STALL_NS)
			return true;
	}
	return all;
}

static enum poll_step pktgen_step(void *arg)
{
	struct pktgen_run *run = arg;

	if (!run->cpu[0].done) {
		enum poll_step s = send_bursts(run, 0);

		if (s != POLL_DONE)
			return s;
		run->cpu[0].done = true;
	}
	return others_done(run) ? POLL_DONE : POLL_AGAIN;
}

/* The queues' shares of the count: as even as it divides. */
static void split_count(struct pktgen_run *run)
{
	for (unsigned int q = 0; q < run->queues; q++)
		run->quota[q] =
			run->params.count / run->queues + (q < run->params.count % run->queues);
}

/* Ask every other CPU that owns one of the run's queues to send its shares. */
static void start_others(struct pktgen_run *run)
{
	for (unsigned int q = 0; q < run->queues; q++) {
		unsigned int c = net_pair_cpu(run->dev, q);
		struct spsc_msg m = { .fn = cpu_start, .arg = { (uintptr_t)run } };

		if (!c || c >= PERCPU_MAX_CPUS || run->cpu[c].taking_part)
			continue;
		run->cpu[c].taking_part = true;
		run->cpu[c].progress_ns = now_ns();
		if (xcpu_send(c, &m)) {
			printf("pktgen: cpu %u cannot be asked to send its queues\n", c);
			run->cpu[c].done = true;
		}
	}
}

/* The CPUs' parts added up; the clock stops when the last frame was queued. */
static void add_up(const struct pktgen_run *run, struct pktgen_result *r, uint64_t start)
{
	uint64_t end = start;

	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++) {
		const struct pktgen_cpu *pc = &run->cpu[c];

		if (!pc->taking_part)
			continue;
		for (unsigned int q = 0; q < run->queues; q++) {
			r->sent_queue[q] += pc->sent_queue[q];
			r->cpu_sent[c] += pc->sent_queue[q];
		}
		r->sent += r->cpu_sent[c];
		r->ring_full += pc->ring_full;
		if (pc->progress_ns > end)
			end = pc->progress_ns;
		r->cpu_ns[c] = pc->progress_ns - start;
		r->cpus_taking_part++;
	}
	r->ns = end - start;
}

/* A CPU of an earlier run that has not stopped yet (its part is still in use). */
static int still_sending(const struct pktgen_run *run)
{
	for (unsigned int c = 1; c < PERCPU_MAX_CPUS; c++)
		if (run->cpu[c].taking_part &&
		    !__atomic_load_n(&run->cpu[c].done, __ATOMIC_ACQUIRE))
			return (int)c;
	return 0;
}

static struct pktgen_run the_run;

int pktgen_busy_cpu(void)
{
	return still_sending(&the_run);
}

int pktgen_run(const struct pktgen_params *p, struct pktgen_result *r)
{
	static struct net_frame frames[NET_MAX_QUEUES][PKTGEN_MAX_BURST];
	static uint8_t frame[NET_MAX_QUEUES][ETH_FRAME_LEN];
	struct pktgen_run *run = &the_run;
	uint64_t kicks0, start;
	uint32_t len = 0, tag;

	memset(r, 0, sizeof(*r));
	if (still_sending(run))
		return -EBUSY;
	memset(run, 0, sizeof(*run));
	run->params = *p;
	p = &run->params; /* from here on, the copy */
	run->frames = frames;
	run->dev = net_device();
	if (!run->dev)
		return -ENODEV;
	run->queues = p->queues ? p->queues : 1;
	if (!p->burst || p->burst > PKTGEN_MAX_BURST || run->queues > pktgen_queues(run->dev))
		return -EINVAL;
	split_count(run);
	/* one template per queue for the whole run: the driver need not copy it again */
	for (unsigned int q = 0; q < run->queues; q++) {
		len = build_flow(frame[q], p, run->dev->mac, q);
		tag = net_frame_tag();
		for (uint32_t i = 0; i < p->burst; i++)
			frames[q][i] = (struct net_frame){ frame[q], len, tag };
	}

	kicks0 = tx_kicks(run->dev);
	start = run->cpu[0].progress_ns = now_ns();
	run->cpu[0].taking_part = true;
	start_others(run);
	poll_wait(pktgen_step, run, UINT64_MAX);
	run->stop = true; /* a CPU still going after a stall stops at its next pass */
	add_up(run, r, start);
	/* a recovery in the wait may have freed the device: its counters went with it */
	if (net_device() == run->dev)
		r->kicks = tx_kicks(run->dev) - kicks0;
	r->bytes = r->sent * len;
	return r->sent == p->count ? 0 : -ETIMEDOUT;
}

static void print_queues(const struct pktgen_result *r, unsigned int queues)
{
	if (queues < 2)
		return;
	printf("pktgen: per queue");
	for (unsigned int q = 0; q < queues; q++)
		printf(" %u=%llu", q, (unsigned long long)r->sent_queue[q]);
	printf("\n");
}

/* With more than one CPU sending: each one's own clock and rate. */
static void print_cpus(const struct pktgen_result *r)
{
	if (r->cpus_taking_part < 2)
		return;
	printf("pktgen: per cpu");
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++)
		if (r->cpu_sent[c])
			printf(" %u=%.4f", c,
			       r->cpu_ns[c] ? r->cpu_sent[c] / (r->cpu_ns[c] / 1e3) : 0.0);
	printf(" Mpps\n");
}

/* The run for programs: counts and nanoseconds, every rate theirs to work out. */
static int print_json(const struct pktgen_params *p, const struct pktgen_result *r, int ret)
{
	struct json_writer *w = shell_json_begin();

	json_put_u64(w, "count", p->count);
	json_put_u64(w, "sent", r->sent);
	json_put_u64(w, "size", p->size < ETH_ZLEN ? ETH_ZLEN : p->size);
	json_put_u64(w, "bytes", r->bytes);
	json_put_u64(w, "ns", r->ns);
	json_put_u64(w, "kicks", r->kicks);
	json_put_u64(w, "ring_full", r->ring_full);
	json_put_u64(w, "burst", p->burst);
	json_put_bool(w, "stalled", ret != 0);
	json_open(w, "queues", '[');
	for (unsigned int q = 0; q < (p->queues ? p->queues : 1); q++)
		json_put_u64(w, NULL, q < 1 && p->queues < 2 ? r->sent : r->sent_queue[q]);
	json_close(w, ']');
	json_open(w, "cpus", '[');
	for (unsigned int c = 0; c < PERCPU_MAX_CPUS; c++) {
		if (!r->cpu_sent[c])
			continue;
		json_open(w, NULL, '{');
		json_put_u64(w, "cpu", c);
		json_put_u64(w, "sent", r->cpu_sent[c]);
		json_put_u64(w, "ns", r->cpu_ns[c]);
		json_close(w, '}');
	}
	json_close(w, ']');
	return shell_json_end("pktgen");
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	return config_parse_uint(s, out) || *out < min || *out > max ? -EINVAL : 0;
}

static int parse_dst(char *s, struct pktgen_params *p)
{
	char *comma = strchr(s, ',');

	if (comma) {
		*comma = '\0';
		if (net_parse_mac(comma + 1, p->dst_mac))
			return -EINVAL;
		p->have_mac = true;
	}
	return net_parse_ip(s, &p->dst);
}

static int cmd_pktgen(int argc, char **argv)
{
	struct pktgen_params p = { .count = 100000, .size = 64, .burst = 256, .port = PKTGEN_PORT };
	struct pktgen_result r;
	bool json = shell_json_wanted(&argc, argv);
	bool have_dst = false;
	uint64_t v;
	double secs;
	int ret;

	for (int i = 1; i < argc; i++) {
		char *a = argv[i];

		if (!strncmp(a, "count=", 6) && !parse_u64(a + 6, 1, 1ULL << 40, &v))
			p.count = v;
		else if (!strncmp(a, "size=", 5) && !parse_u64(a + 5, ETH_ZLEN, ETH_FRAME_LEN, &v))
			p.size = (uint32_t)v;
		else if (!strncmp(a, "burst=", 6) && !parse_u64(a + 6, 1, PKTGEN_MAX_BURST, &v))
			p.burst = (uint32_t)v;
		else if (!strncmp(a, "port=", 5) && !parse_u64(a + 5, 1, 65535, &v))
			p.port = (uint16_t)v;
		else if (!strncmp(a, "queues=", 7) && !parse_u64(a + 7, 1, NET_MAX_QUEUES, &v))
			p.queues = (uint32_t)v;
		else if (!strncmp(a, "dst=", 4) && !parse_dst(a + 4, &p))
			have_dst = true;
		else
			return shell_error("pktgen: bad argument '%s' (count=1.. size=%d..%d "
					   "burst=1..%d dst=IP[,MAC] port=N queues=1..%d)",
					   a, ETH_ZLEN, ETH_FRAME_LEN, PKTGEN_MAX_BURST,
					   NET_MAX_QUEUES);
	}
	if (!have_dst)
		return shell_error("usage: pktgen dst=IP[,MAC] [count=N] [size=64] [burst=256]");
	if (!net_device())
		return shell_error("pktgen: no network device");
	if (p.queues > pktgen_queues(net_device()))
		return shell_error("pktgen: queues=%u but %u queue pairs are in use", p.queues,
				   pktgen_queues(net_device()));
	if (!p.have_mac) {
		uint32_t hop = ipv4_next_hop(p.dst);

		if (!hop || arp_resolve(hop, p.dst_mac, PKTGEN_ARP_NS))
			return shell_error("pktgen: cannot resolve the MAC of the next hop");
	}
	ret = pktgen_run(&p, &r);
	if (ret == -EBUSY)
		return shell_error("pktgen: cpu %d is still sending from an earlier run",
				   pktgen_busy_cpu());
	if (json)
		return print_json(&p, &r, ret);
	secs = r.ns / 1e9;
	printf("pktgen: %llu packets %u bytes in %.3f s: %.4f Mpps %.4f Gb/s\n",
	       (unsigned long long)r.sent, p.size < ETH_ZLEN ? ETH_ZLEN : p.size, secs,
	       secs > 0 ? r.sent / secs / 1e6 : 0.0, secs > 0 ? r.bytes * 8 / secs / 1e9 : 0.0);
	printf("pktgen: kicks %llu (%.4f per packet), ring full %llu times, burst %u\n",
	       (unsigned long long)r.kicks, r.sent ? (double)r.kicks / r.sent : 0.0,
	       (unsigned long long)r.ring_full, p.burst);
	print_queues(&r, p.queues);
	print_cpus(&r);
	if (ret)
		return shell_error("pktgen: stalled after %llu of %llu packets",
				   (unsigned long long)r.sent, (unsigned long long)p.count);
	return 0;
}

static const struct shell_cmd pktgen_cmd = {
	.name = "pktgen",
	.usage = "dst=IP[,MAC] [count=N] [size=64] [burst=256] [port=9] [queues=1] [json]",
	.help = "send one UDP flow per TX queue in bursts (pktgen_sample03), print Mpps",
	.run = cmd_pktgen,
};

void pktgen_init(void)
{
	shell_register(&pktgen_cmd);
}
