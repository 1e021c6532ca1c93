// SPDX-License-Identifier: MIT
/*
 * The guest-side virtio fuzzer (fuzz.h): runs a seed's steps, or steps
 * given on the console, against the live devices while the services run
 * beside them, a batch at a time.
 *
 *   fuzz SEED [steps=N] [target=vsock|net|transport] [from=I] [batch=B] [v=1]
 *        [only=hd,cr,...]   the steps of other kinds are skipped
 *   fuzz replay [target=T] TOKEN...   the steps given, as one batch
 *   fuzz add [target=T] TOKEN...      more steps for the next replay (a
 *                                     line holds 14 tokens, a replay 512)
 *   fuzz show SEED [from=I] [steps=N] [target=T]   the tokens, not run
 *   fuzz stop | fuzz          end the run after the batch | what runs, the tally
 *
 * After a batch of vsock or net steps the guest says "fuzz settle" (the
 * host then holds the traffic it makes, so that only the batch's buffers
 * are out) and waits for the device's answer as the attack modes do
 * (hostile.h): a harmless last buffer, then every buffer of the batch
 * completed (answered), some kept for good while the device goes on
 * completing (keeps K: a second probe came back; past a quarter of the
 * ring the guest resets the device), or nothing completed for 3 s
 * (silent: the queue is marked broken and virtio-recover resets and
 * probes the device again). After a batch of transport steps every
 * device they touched is reset and probed again. Then one line:
 *
 *   fuzz SEED TARGET FROM+N: VERDICT; well-formed W/N, skipped S; digest D
 *   fuzz replay N: VERDICT; well-formed W/N, skipped S; digest D
 *
 * W counts the steps whose rings and transport writes were well formed
 * (fuzz.h); D is fuzz_digest over the batch's steps. The host's oracles
 * (host/ringside/fuzz.py) read the line and check the back end, the
 * host's logs and the bystander connection.
 *
 * Off by default, and nothing here runs on the data path: the context
 * joins the loop with the first run (the command or the boot key). A
 * step schedules the next one; a batch waiting for its device looks
 * every millisecond by the clock (poll_schedule_at), as the attack
 * modes do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/fuzz.h"
#include "drivers/virtio/hostile.h"
#include "drivers/virtio/virtio_pci.h"
#include "kernel/config.h"
#include "kernel/dma.h"
#include "kernel/mm.h"
#include "kernel/poll.h"
#include "kernel/printk.h"
#include "kernel/shell.h"
#include "kernel/time.h"

#define NS_PER_MS 1000000ULL
#define ZEROS_LEN (64u << 10)
/* Steps of one replay, gathered by `fuzz add` lines of 14 tokens at most (16 words). */
#define REPLAY_MAX 512
#define LINE_TOKENS 14
/* How long a run waits for its device (the boot key, a device restarting). */
#define DEVICE_WAIT_NS (60000ULL * NS_PER_MS)

/* enum fuzz_target's names in its order (fuzz_gen.c names them too) */
static const char *const target_choices[] = { "vsock", "net", "transport", NULL };
_Static_assert(FUZZ_VSOCK == 0 && FUZZ_NET == 1 && FUZZ_TRANSPORT == 2 && FUZZ_TARGETS == 3,
	       "target_choices follows enum fuzz_target");

CONFIG_KEY(cfg_fuzz) = {
	.name = "fuzz",
	.help = "fuzzer: run this seed's steps from boot (0: off; `fuzz` on the console)",
	.type = CONFIG_UINT,
	.min = 0,
	.max = 0xffffffffffffffffULL,
	.def = 0,
};

CONFIG_KEY(cfg_fuzz_steps) = {
	.name = "fuzz_steps",
	.help = "fuzzer: steps a run takes",
	.type = CONFIG_UINT,
	.min = 1,
	.max = 1000000000,
	.def = 256,
};

CONFIG_KEY(cfg_fuzz_target) = {
	.name = "fuzz_target",
	.help = "fuzzer: what the steps drive (vsock headers and rings, virtio-net, the transport)",
	.type = CONFIG_ENUM,
	.choices = target_choices,
	.def = 0, /* vsock */
};

CONFIG_KEY(cfg_fuzz_batch) = {
	.name = "fuzz_batch",
	.help = "fuzzer: steps between two looks at the device's answer",
	.type = CONFIG_UINT,
	.min = 1,
	.max = 4096,
	.def = 32,
};

struct fuzz_run {
	bool active, settling, replay;
	enum fuzz_target target;
	uint64_t seed;
	uint64_t next, end; /* step indices: the next to run, one past the last */
	uint64_t batch_from;
	uint32_t batch;
	bool verbose;
	uint32_t only; /* the kinds run (a bit each), the others skipped; 0: all */
	struct fuzz_step steps[REPLAY_MAX]; /* a replay's */
	/* this batch */
	unsigned int ran, well_formed, skipped, refused;
	uint64_t digest;
	bool broken; /* the queue broke during the batch */
	bool begin; /* the next batch begins at the next pass */
	bool reprobed; /* a second probe went out after buffers looked kept */
	uint64_t recoveries0; /* devices reset after a broken queue, before the batch */
	uint64_t kept_before; /* buffers kept when it did */
	uint64_t wait_until; /* for the device to be there */
	struct tx_watch watch;
};

struct fuzz_tally {
	uint64_t runs, steps, skipped, batches, answered, kept, silent, resets, restarts;
};

static struct fuzz_run run;
static struct fuzz_tally tally;
static struct fuzz_mem mem;
static struct poll_ctx fuzz_ctx;

const struct fuzz_mem *fuzz_mem(void)
{
	return mem.scratch ? &mem : NULL;
}

static int mem_init(void)
{
	const struct mem_region *r;
	unsigned int n;
	uint8_t *zeros;

	if (mem.scratch)
		return 0;
	r = mm_regions(&n);
	zeros = dma_alloc(ZEROS_LEN, 4096);
	mem.scratch = dma_alloc(FUZZ_SCRATCH_LEN, 4096);
	if (!zeros || !mem.scratch || !n)
		return -ENOMEM;
	mem.scratch_pa = virt_to_phys(mem.scratch);
	mem.zeros_pa = virt_to_phys(zeros);
	for (unsigned int i = 0; i < n; i++)
		if (r[i].end > mem.ram_end)
			mem.ram_end = r[i].end;
	return 0;
}

/* The TX queue a batch of @target is watched on (none for the transport). */
static struct virtq *target_txq(enum fuzz_target target)
{
	if (target == FUZZ_VSOCK)
		return virtio_vsock_txq();
	return target == FUZZ_NET ? virtio_net_txq() : NULL;
}

static struct fuzz_step current(void)
{
	if (run.replay)
		return run.steps[run.next];
	return fuzz_step_at(run.seed, run.target, run.next);
}

static int run_step(const struct fuzz_step *s, struct fuzz_outcome *o)
{
	o->well_formed = true;
	o->phantoms = 0;
	if (run.target == FUZZ_TRANSPORT)
		return fuzz_transport_step(s, o);
	if (run.target == FUZZ_NET)
		return fuzz_net_step(s, o);
	return fuzz_vsock_step(s, o);
}

/* Resets of any device after a queue broke (virtio-recover), so far. */
static uint64_t recoveries(void)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < virtio_device_count(); i++)
		n += virtio_device_get(i)->recoveries;
	return n;
}

static void batch_begin(void)
{
	/* a device that wrote into the zeroes must not find its own writes there */
	memset(phys_to_virt(mem.zeros_pa), 0, ZEROS_LEN);
	run.batch_from = run.next;
	run.ran = run.well_formed = run.skipped = run.refused = 0;
	run.digest = FUZZ_DIGEST_INIT;
	run.broken = false;
	run.begin = false;
	run.reprobed = false;
	run.settling = false;
	run.recoveries0 = recoveries();
	tx_watch_begin(&run.watch, target_txq(run.target), now_ns());
}

static void fuzz_stop(const char *how)
{
	if (run.replay)
		pr_warn("fuzz replay: %s\n", how);
	else
		pr_warn("fuzz %#llx %s: %s\n", (unsigned long long)run.seed,
			fuzz_target_name(run.target), how);
	run.active = false;
	poll_schedule_at(&fuzz_ctx, UINT64_MAX);
}

/*
 * The batch's line, then the next batch or the end of the run. @reset:
 * the verdict says the device is reset.
 */
static void batch_end(const char *verdict, bool reset)
{
	unsigned int n = run.ran + run.skipped + run.refused;
	const char *also = "";
	char where[64];

	tally.batches++;
	if (run.replay)
		snprintf(where, sizeof(where), "replay %u", n);
	else
		snprintf(where, sizeof(where), "%#llx %s %llu+%u", (unsigned long long)run.seed,
			 fuzz_target_name(run.target), (unsigned long long)run.batch_from, n);
	/* another queue of a device broke meanwhile (RX, say): it was reset too */
	if (!reset && recoveries() != run.recoveries0)
		also = ", queue broken: reset";
	pr_warn("fuzz %s: %s%s; well-formed %u/%u, skipped %u; digest %016llx\n", where, verdict,
		also, run.well_formed, run.ran, run.skipped + run.refused,
		(unsigned long long)run.digest);
	if (run.next >= run.end) {
		run.active = false;
		poll_schedule_at(&fuzz_ctx, UINT64_MAX);
		return;
	}
	/*
	 * Not in this pass: a device reset asked for now (virtio-recover,
	 * scheduled) happens before the next pass gets here, and belongs to
	 * this batch.
	 */
	run.begin = true;
}

static bool needs_reset(struct virtq *vq)
{
	const struct virtio_queue *q = virtq_priv(vq);

	return q && q->vdev && !virtio_device_ok(q->vdev);
}

/* A harmless last buffer: the device answers it only if it still takes buffers. */
static void probe(void)
{
	if (run.target == FUZZ_VSOCK)
		hostile_probe();
	else
		fuzz_net_probe();
}

static void settle_start(uint64_t now)
{
	struct virtq *vq = target_txq(run.target);
	char verdict[48];
	int ret;

	run.settling = true;
	if (run.target == FUZZ_TRANSPORT) {
		ret = fuzz_transport_restart();
		tally.restarts += ret > 0 ? (unsigned int)ret : 0;
		if (ret < 0)
			snprintf(verdict, sizeof(verdict), "restart failed: %d", ret);
		else
			snprintf(verdict, sizeof(verdict), "restarted %d", ret);
		batch_end(verdict, true);
		return;
	}
	if (run.broken || (vq && virtq_is_broken(vq))) {
		tally.resets++;
		batch_end("queue broken: reset", true);
		return;
	}
	/* the host holds its own traffic now, so a device that keeps buffers falls quiet */
	pr_warn("fuzz settle\n");
	probe();
	tx_watch_settle(&run.watch, vq, now);
}

static void silent(struct virtq *vq)
{
	char verdict[48];

	tally.silent++;
	tally.resets++;
	snprintf(verdict, sizeof(verdict), "silent%s: reset",
		 needs_reset(vq) ? ", needs reset" : "");
	virtq_mark_broken(vq); /* virtio-recover resets the device */
	batch_end(verdict, true);
}

/*
 * Buffers kept: the device went on completing after the probe went out,
 * but that may have been buffers before it, and then it stopped. A
 * second probe tells: a device that still takes buffers answers it, and
 * keeps no more than before.
 */
static void kept(struct virtq *vq, uint64_t now)
{
	uint64_t kept = tx_watch_kept(&run.watch, vq);
	char verdict[48];
	bool reset;

	if (!run.reprobed) {
		run.reprobed = true;
		run.kept_before = kept;
		probe();
		tx_watch_settle(&run.watch, vq, now);
		return;
	}
	if (kept > run.kept_before) {
		silent(vq);
		return;
	}
	tally.kept++;
	/* buffers a device keeps are lost until a reset: not a quarter of the ring */
	reset = kept + run.watch.out0 > virtq_size(vq) / 4u;
	if (reset) {
		tally.resets++;
		virtq_mark_broken(vq);
	}
	snprintf(verdict, sizeof(verdict), "keeps %llu%s", (unsigned long long)kept,
		 reset ? ": reset" : "");
	batch_end(verdict, reset);
}

static void settle(uint64_t now)
{
	struct virtq *vq = target_txq(run.target);

	switch (tx_watch_verdict(&run.watch, vq, now)) {
	case TXW_WAIT:
		return;
	case TXW_ANSWERED:
		tally.answered++;
		batch_end("answered", false);
		return;
	case TXW_KEPT:
		kept(vq, now);
		return;
	case TXW_SILENT:
		silent(vq);
		return;
	case TXW_BUSY:
		batch_end("busy", false);
		return;
	case TXW_NO_DEVICE:
		fuzz_stop("no device");
		return;
	}
}

static void one_step(uint64_t now)
{
	struct fuzz_step s = current();
	struct virtq *vq = target_txq(run.target);
	struct fuzz_outcome o;
	char tok[FUZZ_TOKEN_MAX];
	int ret = run.only && !(run.only & 1u << s.kind) ? -EOPNOTSUPP : run_step(&s, &o);

	if (ret == -ENOSPC && !tx_watch_silent(&run.watch, vq, now))
		return; /* the ring is full: again next pass */
	if (ret == -ENODEV && run.next == run.batch_from && now < run.wait_until)
		return; /* the boot key waits for its device */
	if (ret == -ENODEV && run.next != run.batch_from) {
		fuzz_stop("no device");
		return;
	}
	run.digest = fuzz_digest(run.digest, &s);
	run.next++;
	tally.steps++;
	if (ret == -ENOSPC || ret == -ENOMEM || ret == -ENODEV)
		run.refused++;
	else if (ret == -EOPNOTSUPP)
		run.skipped++, tally.skipped++;
	else
		run.ran++, run.well_formed += o.well_formed;
	/* what the ring counts as out for them, the device does not hold */
	run.watch.out0 += o.phantoms;
	if (ret == -EIO || (vq && virtq_is_broken(vq)))
		run.broken = true;
	if (vq && !virtq_is_broken(vq))
		virtq_kick(vq);
	if (run.verbose)
		printf("fuzz step %llu: %s -> %d%s\n", (unsigned long long)(run.next - 1),
		       fuzz_token(&s, tok), ret, o.well_formed ? "" : " (malformed)");
	/* a full ring the device takes nothing from ends the batch: settle says why */
	if (run.broken || ret == -ENOSPC || run.next >= run.end ||
	    run.next - run.batch_from >= run.batch)
		settle_start(now);
	else
		poll_schedule(&fuzz_ctx); /* the next step in the next pass, no halt between */
}

/* While a run is on: a step a pass, or a look every millisecond while it waits. */
static unsigned int fuzz_poll(struct poll_ctx *ctx, unsigned int budget)
{
	uint64_t now = now_ns();

	if (!run.active)
		return 0;
	poll_schedule_at(ctx, now + NS_PER_MS);
	if (run.begin)
		batch_begin();
	else if (run.settling)
		settle(now);
	else
		one_step(now);
	return 1;
}

static struct poll_ctx fuzz_ctx = {
	.name = "fuzz",
	.poll = fuzz_poll,
};

/*
 * The context joins the loop with the first run, not at boot: a guest
 * that never fuzzes runs exactly the contexts it ran before.
 */
static int fuzz_start(void)
{
	int ret = mem_init();

	if (ret)
		return ret;
	if (!fuzz_ctx.cpu) {
		ret = poll_ctx_add(&fuzz_ctx);
		if (ret)
			return ret;
	}
	tally.runs++;
	run.active = true;
	run.wait_until = now_ns() + DEVICE_WAIT_NS;
	batch_begin();
	poll_schedule(&fuzz_ctx);
	return 0;
}

struct run_opts {
	uint64_t from, steps;
	uint32_t batch;
	enum fuzz_target target;
	bool verbose;
	uint32_t only; /* the kinds run (a bit each); 0: all */
};

/* What a run takes unless told otherwise: the keys' values. */
static struct run_opts key_opts(void)
{
	return (struct run_opts){
		.steps = config_get(&cfg_fuzz_steps),
		.batch = (uint32_t)config_get(&cfg_fuzz_batch),
		.target = (enum fuzz_target)config_get(&cfg_fuzz_target),
	};
}

static int start_seed(uint64_t seed, const struct run_opts *o)
{
	memset(&run, 0, sizeof(run));
	run.seed = seed;
	run.target = o->target;
	run.next = o->from;
	run.end = o->from + o->steps;
	run.batch = o->batch;
	run.verbose = o->verbose;
	run.only = o->only;
	pr_warn("fuzz %#llx %s: steps %llu..%llu, batches of %u\n", (unsigned long long)seed,
		fuzz_target_name(o->target), (unsigned long long)o->from,
		(unsigned long long)(o->from + o->steps - 1), o->batch);
	return fuzz_start();
}

/*
 * `fuzz stop`: no step after this one, but the batch ends as every batch
 * does, with its settle and line: a device the steps stopped is reset,
 * not left stopped.
 */
static void stop_after_batch(void)
{
	if (run.next == run.batch_from && !run.settling) {
		fuzz_stop("stopped");
		return;
	}
	run.end = run.next;
	printf("fuzz: no more steps; the batch ends with its line\n");
	if (!run.settling)
		settle_start(now_ns());
}

/* ---- console and boot keys ---- */

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	*out = strtoull(s, &end, 0);
	return *end ? -1 : 0;
}

/* "hd,cr,sq": a bit per kind named; -1 for a name that is none. */
static int parse_kinds(char *list, uint32_t *mask)
{
	struct fuzz_step s;
	char tok[8];

	*mask = 0;
	for (char *k = strtok(list, ","); k; k = strtok(NULL, ",")) {
		if (strlen(k) != 2)
			return -1;
		snprintf(tok, sizeof(tok), "%s.0", k);
		if (fuzz_token_parse(tok, &s))
			return -1;
		*mask |= 1u << s.kind;
	}
	return *mask ? 0 : -1;
}

/* KEY=VALUE words from argv[2] on; a clear line and -1 on anything else. */
static int parse_opts(int argc, char **argv, struct run_opts *o)
{
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		uint64_t v = 0;

		if (!eq)
			return shell_error("fuzz: '%s' is not KEY=VALUE", argv[i]);
		*eq = 0;
		if (!strcmp(argv[i], "only")) {
			if (parse_kinds(eq + 1, &o->only))
				return shell_error("fuzz: only takes kinds like hd,cr,sq, got '%s'",
						   eq + 1);
			continue;
		}
		if (!strcmp(argv[i], "target")) {
			o->target = fuzz_target_parse(eq + 1);
			if (o->target == FUZZ_TARGETS)
				return shell_error("fuzz: target must be vsock, net or transport, "
						   "got '%s'",
						   eq + 1);
			continue;
		}
		if (parse_u64(eq + 1, &v))
			return shell_error("fuzz: %s must be a number, got '%s'", argv[i], eq + 1);
		if (!strcmp(argv[i], "from"))
			o->from = v;
		else if (!strcmp(argv[i], "steps") && v >= 1 && v <= cfg_fuzz_steps.max)
			o->steps = v;
		else if (!strcmp(argv[i], "batch") && v >= 1 && v <= cfg_fuzz_batch.max)
			o->batch = (uint32_t)v;
		else if (!strcmp(argv[i], "v") && v <= 1)
			o->verbose = v;
		else
			return shell_error("fuzz: unknown option or value out of range: %s=%s",
					   argv[i], eq + 1);
	}
	return 0;
}

static void show(uint64_t seed, const struct run_opts *o)
{
	uint64_t digest = FUZZ_DIGEST_INIT;
	char tok[FUZZ_TOKEN_MAX];

	for (uint64_t i = 0; i < o->steps; i++) {
		struct fuzz_step s = fuzz_step_at(seed, o->target, o->from + i);

		digest = fuzz_digest(digest, &s);
		printf("%s%s", fuzz_token(&s, tok), (i + 1) % 8 && i + 1 < o->steps ? " " : "\n");
	}
	printf("digest %016llx\n", (unsigned long long)digest);
}

/* The target of steps given without one: the transport's, virtio-net's, or vsock's. */
static enum fuzz_target replay_target(const struct fuzz_step *steps, int n)
{
	if (steps[0].kind >= FK_STATUS)
		return FUZZ_TRANSPORT;
	for (int i = 0; i < n; i++)
		if (steps[i].kind == FK_NET_HDR)
			return FUZZ_NET;
	return !virtio_vsock_txq() && virtio_net_txq() ? FUZZ_NET : FUZZ_VSOCK;
}

/* What `fuzz add` gathered for the next `fuzz replay`. */
static struct fuzz_step added[REPLAY_MAX];
static unsigned int n_added;
static enum fuzz_target added_target;

/*
 * The tokens of `fuzz add|replay [target=T] TOKEN...` onto added[]: all of
 * them, or none and a one-line error.
 */
static int gather(int argc, char **argv)
{
	struct fuzz_step steps[LINE_TOKENS];
	enum fuzz_target target = FUZZ_TARGETS;
	int first = 2, n;

	if (argc > 2 && !strncmp(argv[2], "target=", 7)) {
		target = fuzz_target_parse(argv[2] + 7);
		if (target == FUZZ_TARGETS)
			return shell_error("fuzz: target must be vsock, net or transport, got '%s'",
					   argv[2] + 7);
		first = 3;
	}
	n = argc - first;
	if (n < 1 && (!n_added || strcmp(argv[1], "replay")))
		return shell_error("fuzz: %s needs steps (tokens like hd.4a0012)", argv[1]);
	if (n_added + (unsigned int)n > REPLAY_MAX)
		return shell_error("fuzz: a replay takes %d steps at most", REPLAY_MAX);
	for (int i = 0; i < n; i++)
		if (fuzz_token_parse(argv[first + i], &steps[i]))
			return shell_error("fuzz: '%s' is not a step (KIND.HEX)", argv[first + i]);
	if (target == FUZZ_TARGETS)
		target = n_added ? added_target : replay_target(steps, n);
	if (n_added && target != added_target)
		return shell_error("fuzz: the steps added are %s steps, not %s",
				   fuzz_target_name(added_target), fuzz_target_name(target));
	for (int i = 0; i < n; i++)
		if (!fuzz_kind_in(steps[i].kind, target))
			return shell_error("fuzz: %s is no %s step", argv[first + i],
					   fuzz_target_name(target));
	memcpy(added + n_added, steps, sizeof(steps[0]) * (unsigned int)n);
	n_added += (unsigned int)n;
	added_target = target;
	return 0;
}

/* `fuzz replay`: what `fuzz add` gathered and the tokens given, as one batch. */
static int cmd_replay(int argc, char **argv)
{
	if (gather(argc, argv))
		return -1;
	memset(&run, 0, sizeof(run));
	run.replay = true;
	memcpy(run.steps, added, sizeof(added[0]) * n_added);
	run.end = n_added;
	run.batch = n_added;
	run.target = added_target;
	n_added = 0;
	if (fuzz_start())
		return shell_error("fuzz: no memory or no room for a poll context");
	return 0;
}

static int cmd_fuzz(int argc, char **argv)
{
	struct run_opts o = key_opts();
	uint64_t seed;

	if (argc < 2) {
		if (run.active && run.replay)
			printf("fuzz replay: running, step %llu of %llu\n",
			       (unsigned long long)run.next, (unsigned long long)run.end);
		else if (run.active)
			printf("fuzz %#llx %s: running, step %llu of %llu..%llu\n",
			       (unsigned long long)run.seed, fuzz_target_name(run.target),
			       (unsigned long long)run.next, (unsigned long long)run.batch_from,
			       (unsigned long long)(run.end - 1));
		else
			printf("no fuzz run\n");
		printf("runs %llu steps %llu skipped %llu batches %llu answered %llu kept %llu "
		       "silent %llu resets %llu restarts %llu\n",
		       (unsigned long long)tally.runs, (unsigned long long)tally.steps,
		       (unsigned long long)tally.skipped, (unsigned long long)tally.batches,
		       (unsigned long long)tally.answered, (unsigned long long)tally.kept,
		       (unsigned long long)tally.silent, (unsigned long long)tally.resets,
		       (unsigned long long)tally.restarts);
		return 0;
	}
	if (!strcmp(argv[1], "stop")) {
		if (run.active)
			stop_after_batch();
		return 0;
	}
	if (run.active)
		return shell_error("fuzz: a run is on (fuzz stop)");
	if (!strcmp(argv[1], "replay"))
		return cmd_replay(argc, argv);
	if (!strcmp(argv[1], "add")) {
		if (gather(argc, argv))
			return -1;
		printf("fuzz: %u %s steps added for the next replay\n", n_added,
		       fuzz_target_name(added_target));
		return 0;
	}
	if (!strcmp(argv[1], "show")) {
		if (argc < 3 || parse_u64(argv[2], &seed))
			return shell_error("fuzz: show needs a SEED");
		o.steps = 16;
		if (parse_opts(argc - 1, argv + 1, &o))
			return -1;
		show(seed, &o);
		return 0;
	}
	if (parse_u64(argv[1], &seed))
		return shell_error("fuzz: '%s' is not a seed (a number; fuzz replay, show, stop)",
				   argv[1]);
	if (parse_opts(argc, argv, &o))
		return -1;
	if (o.target == FUZZ_NET && !virtio_net_txq())
		return shell_error("fuzz: target=net needs a virtio-net device");
	if (o.target == FUZZ_VSOCK && !virtio_vsock_txq())
		return shell_error("fuzz: target=vsock needs a vsock device");
	if (start_seed(seed, &o))
		return shell_error("fuzz: no memory or no room for a poll context");
	return 0;
}

static const struct shell_cmd fuzz_cmd = {
	.name = "fuzz",
	.usage = "SEED [steps=N] [target=vsock|net|transport] [from=I] [batch=B] [only=KINDS] "
		 "[v=1] | replay|add [target=T] STEP... | show SEED | stop",
	.help = "seeded virtio fuzzer: steps against the live devices, batch verdicts",
	.run = cmd_fuzz,
};

static bool fuzz_ready; /* fuzz_init ran */

static void boot_key_changed(struct config_key *key)
{
	struct run_opts o = key_opts();
	uint64_t seed = config_get(&cfg_fuzz);

	(void)key;
	/* parsed before fuzz_init: it calls again once the drivers are there */
	if (!fuzz_ready || !seed || run.active)
		return;
	if (start_seed(seed, &o))
		pr_err("fuzz: no memory or no room for a poll context\n");
}

static struct config_hook boot_hook = { .fn = boot_key_changed };

void fuzz_init(void)
{
	fuzz_ready = true;
	shell_register(&fuzz_cmd);
	config_on_change(&cfg_fuzz, &boot_hook);
	boot_key_changed(&cfg_fuzz);
}
