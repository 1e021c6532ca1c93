// SPDX-License-Identifier: MIT
/*
 * The vsock_test peer service (vsock_test.h): the control connection, a
 * run through every case in vsock_test's order, the poll context that drives
 * it and the `vsock-test` console command.
 *
 * Server role: ringside listens on vsock_test_port for the control
 * connection; the host bridges its vsock_test's TCP control connection
 * there. Client role (`vsock-test client PORT`): ringside connects to the
 * host's port PORT, which the host bridges to its vsock_test's control
 * port. The service is one poll context, and it owns every socket it
 * opens (vsock_set_owner): a change on any of them schedules it, and a
 * pass runs the run's next steps, at most a budget of them. A run waits
 * for nothing else but time: after each look it asks the loop for one
 * (poll_schedule_at), the earliest of its step's limit and a timed wait
 * a half asked for (vt_sleep).
 *
 * Every wait has a limit: a half that sees nothing happen for
 * VT_STEP_TIMEOUT_NS fails. A failed case, a control line that is not the
 * one the protocol wants or the control connection ending all end the
 * run with one line saying why; the host's vsock_test then sees its
 * control connection close and exits, as it does when its own half fails.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/vsock_test.h"
#include "kernel/config.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/time.h"

CONFIG_KEY(cfg_vsock_test_port) = {
	.name = "vsock_test_port",
	.help = "vsock port the vsock_test peer listens on for the host vsock_test's control "
		"connection (0: off)",
	.type = CONFIG_UINT,
	.max = 0xffffffff,
	.def = 1238,
};

CONFIG_KEY(cfg_vsock_test_peer_port) = {
	.name = "vsock_test_peer_port",
	.help = "the port vsock_test's cases use (its --peer-port), and the next one",
	.type = CONFIG_UINT,
	.max = 0xfffffffe,
	.def = 1240,
};

#define VT_STEP_TIMEOUT_NS (30ULL * 1000000000ULL)

/* Where a run is: the barrier before each case, its half, the end. */
enum vt_phase {
	PH_IDLE,
	PH_CONNECT, /* client role: the control connection is being made */
	PH_SAY, /* write NEXT or SKIP for case_id */
	PH_HEAR, /* read the peer's NEXT or SKIP */
	PH_HALF, /* run case_id's half */
	PH_SAY_COMPLETED,
	PH_HEAR_COMPLETED,
};

struct vt_counters {
	uint64_t runs, completed, aborted, refused;
	uint64_t ok, failed, na, peer_skipped;
};

static struct vt_run run;
static enum vt_phase phase;
static bool we_skip; /* our half of case_id is not applicable */
static struct vsock_sock *ctl_listener;
static uint32_t ctl_port;
static struct config_hook port_hook;
static struct vt_counters cnt;
static struct poll_ctx vt_ctx;
static struct vsock_owner vt_owner = { .ctx = &vt_ctx }; /* every socket the service opens */
static unsigned int steps_left; /* of this pass's budget (vt_poll) */
static const char *const role_names[VT_ROLES] = { "server", "client" };

/* ---- the glue to the loop ---- */

void vt_own(struct vsock_sock *s)
{
	vsock_set_owner(s, &vt_owner, &run);
}

enum vt_status vt_sleep(struct vt_run *t, uint64_t ns)
{
	uint64_t at = t->step_start + ns;

	if (at < t->wake_at)
		t->wake_at = at;
	return VT_WAIT;
}

/* ---- the control connection ---- */

enum vt_status vt_fail(struct vt_run *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
	return VT_FAIL;
}

uint64_t vt_step_ns(const struct vt_run *t)
{
	return now_ns() - t->step_start;
}

/* The control connection ended, or never came up: why, for an error. */
static enum vt_status ctl_gone(struct vt_run *t)
{
	if (vsock_state(t->ctl) == VSOCK_CLOSED && vsock_error(t->ctl))
		return vt_fail(t, "the control connection was reset (%d)", vsock_error(t->ctl));
	return vt_fail(t, "the peer closed the control connection");
}

enum vt_status vt_write(struct vt_run *t, const char *line)
{
	ssize_t n;

	if (!t->out_len) {
		t->out_len = snprintf(t->out, sizeof(t->out), "%s\n", line);
		t->out_off = 0;
	}
	while (t->out_off < t->out_len) {
		n = vsock_send(t->ctl, t->out + t->out_off, t->out_len - t->out_off, false);
		if (n == -EAGAIN || n == -ENOMEM)
			return VT_WAIT;
		if (n < 0)
			return ctl_gone(t);
		t->out_off += n;
	}
	t->out_len = 0;
	return VT_NEXT;
}

enum vt_status vt_write_ulong(struct vt_run *t, unsigned long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lu", v);
	return vt_write(t, num);
}

/*
 * Gather the next line (vsock_test's control_readln: bytes up to a
 * newline). VT_NEXT once t->line holds it.
 */
static enum vt_status read_line(struct vt_run *t)
{
	const uint8_t *data;
	size_t n, i;

	while (!t->line_ready) {
		n = vsock_peek(t->ctl, &data, NULL);
		if (!n)
			return vsock_done(t->ctl) ? ctl_gone(t) : VT_WAIT;
		for (i = 0; i < n && data[i] != '\n'; i++) {
			if (t->line_len == VT_LINE_MAX)
				return vt_fail(t, "a control line longer than %u bytes",
					       VT_LINE_MAX);
			if (!data[i])
				return vt_fail(t, "a NUL byte in a control line");
			t->line[t->line_len++] = data[i];
		}
		if (i < n) {
			t->line[t->line_len] = '\0';
			t->line_ready = true;
			i++;
		}
		vsock_consume(t->ctl, i);
	}
	return VT_NEXT;
}

/* The line read is used up: the next read waits for a new one. */
static void take_line(struct vt_run *t)
{
	t->line_ready = false;
	t->line_len = 0;
}

/* A line from the peer, shown in an error as it came (no control bytes). */
static const char *shown(struct vt_run *t)
{
	for (size_t i = 0; i < t->line_len; i++)
		if ((unsigned char)t->line[i] < ' ' || (unsigned char)t->line[i] > '~')
			t->line[i] = '?';
	return t->line;
}

enum vt_status vt_expect(struct vt_run *t, const char *line)
{
	enum vt_status r = read_line(t);

	if (r != VT_NEXT)
		return r;
	if (strcmp(t->line, line))
		return vt_fail(t, "expected \"%s\" on the control connection, got \"%s\"", line,
			       shown(t));
	take_line(t);
	return VT_NEXT;
}

enum vt_status vt_read_ulong(struct vt_run *t, unsigned long *v)
{
	enum vt_status r = read_line(t);
	char *end;

	if (r != VT_NEXT)
		return r;
	errno = 0;
	*v = strtoul(t->line, &end, 10);
	/* digits only: no sign, no blanks, and one that fits an unsigned long */
	if (t->line[0] < '0' || t->line[0] > '9' || *end || errno == ERANGE)
		return vt_fail(t, "expected a number on the control connection, got \"%s\"",
			       shown(t));
	take_line(t);
	return VT_NEXT;
}

/* ---- a run ---- */

/* Everything the case left open goes; the control connection stays. */
static void case_cleanup(struct vt_run *t)
{
	if (t->sock)
		vsock_close(t->sock);
	if (t->listener)
		vsock_close(t->listener);
	for (unsigned int i = 0; i < VT_MULTICONN; i++)
		if (t->socks[i])
			vsock_close(t->socks[i]);
	memset(t->socks, 0, sizeof(t->socks));
	free(t->buf);
	t->sock = t->listener = NULL;
	t->buf = NULL;
	t->pc = t->sub = t->i = 0;
	t->len = t->off = 0;
	t->hash = t->peer_hash = 0;
	t->err[0] = '\0';
	t->step_start = now_ns();
}

static const char *case_name(unsigned int id)
{
	return id < vt_n_cases ? vt_cases[id].name : "after the last case";
}

static void run_end(struct vt_run *t, bool completed)
{
	case_cleanup(t);
	if (t->ctl)
		vsock_close(t->ctl);
	t->ctl = NULL;
	phase = PH_IDLE;
	poll_schedule_at(&vt_ctx, UINT64_MAX);
	if (completed)
		cnt.completed++;
	else
		cnt.aborted++;
	printf("vsock-test: %s as %s: %llu ok, %llu n/a, %llu skipped by the peer, "
	       "%llu failed\n",
	       completed ? "done" : "aborted", role_names[t->role], (unsigned long long)cnt.ok,
	       (unsigned long long)cnt.na, (unsigned long long)cnt.peer_skipped,
	       (unsigned long long)cnt.failed);
}

/*
 * A case failed, or the protocol broke at its barrier: the run ends. A
 * control connection that never came up is no case's.
 */
static void run_fail(struct vt_run *t)
{
	if (phase == PH_CONNECT) {
		printf("vsock-test: no run: %s\n", t->err);
	} else {
		cnt.failed++;
		printf("vsock-test: case %u %s: FAIL: %s\n", t->case_id, case_name(t->case_id),
		       t->err);
	}
	run_end(t, false);
}

static void run_start(struct vt_run *t, enum vt_role role, struct vsock_sock *ctl)
{
	memset(t, 0, sizeof(*t));
	t->role = role;
	t->peer_port = config_get(&cfg_vsock_test_peer_port);
	t->ctl = ctl;
	t->rng = now_ns() | 1;
	vt_own(ctl);
	memset(&cnt.ok, 0, sizeof(cnt) - offsetof(struct vt_counters, ok));
	cnt.runs++;
	phase = role == VT_CLIENT ? PH_CONNECT : PH_SAY;
	case_cleanup(t);
	poll_schedule(&vt_ctx); /* the first look, this pass or the next */
	printf("vsock-test: run as %s, cases on port %u\n", role_names[role], t->peer_port);
}

static void next_step(struct vt_run *t, enum vt_phase next)
{
	phase = next;
	t->step_start = now_ns();
}

/*
 * The half of case_id, step by step (vsock_test.h): VT_END when over.
 * Each step done takes one of the pass's budget; VT_WAIT with none left
 * (the pass goes on with the next step).
 */
static enum vt_status run_half(struct vt_run *t)
{
	enum vt_status (*half)(struct vt_run *) = vt_cases[t->case_id].half[t->role];
	enum vt_status r;

	if (!half)
		return VT_END; /* vsock_test has nothing for this role either */
	for (;;) {
		r = half(t);
		if (r == VT_NEXT)
			t->pc++;
		if (r != VT_NEXT && r != VT_JUMP)
			break;
		t->sub = 0;
		t->step_start = now_ns();
		if (steps_left && !--steps_left)
			return VT_WAIT;
	}
	if (r == VT_WAIT && vt_step_ns(t) >= VT_STEP_TIMEOUT_NS)
		return vt_fail(t, "step %u: nothing happened for %llu s", t->pc,
			       VT_STEP_TIMEOUT_NS / 1000000000ULL);
	return r;
}

static void case_done(struct vt_run *t, const char *how, const char *why)
{
	printf("vsock-test: case %u %s: %s%s%s\n", t->case_id, vt_cases[t->case_id].name, how,
	       why ? ": " : "", why ? why : "");
	case_cleanup(t);
	t->case_id++;
	next_step(t, t->case_id < vt_n_cases ? PH_SAY : PH_SAY_COMPLETED);
}

static enum vt_status say_barrier(struct vt_run *t)
{
	we_skip = vt_cases[t->case_id].na[t->role];
	return vt_write(t, we_skip ? "SKIP" : "NEXT");
}

/* run_tests() in vsock_test's util.c: either side's SKIP skips the case. */
static enum vt_status hear_barrier(struct vt_run *t)
{
	enum vt_status r = read_line(t);
	const struct vt_case *c = &vt_cases[t->case_id];
	bool peer_skips;

	if (r != VT_NEXT)
		return r;
	peer_skips = !strcmp(t->line, "SKIP");
	if (!peer_skips && strcmp(t->line, "NEXT"))
		return vt_fail(t, "expected NEXT or SKIP on the control connection, got \"%s\"",
			       shown(t));
	take_line(t);
	if (we_skip) {
		cnt.na++;
		case_done(t, "n/a", c->na[t->role]);
	} else if (peer_skips) {
		cnt.peer_skipped++;
		case_done(t, "skipped by the peer", NULL);
	} else {
		next_step(t, PH_HALF);
	}
	return VT_NEXT;
}

static enum vt_status connect_ctl(struct vt_run *t)
{
	switch (vsock_state(t->ctl)) {
	case VSOCK_CONNECTING:
		return VT_WAIT;
	case VSOCK_CONNECTED:
		next_step(t, PH_SAY);
		return VT_NEXT;
	default:
		return vt_fail(t, "the control connection to the host failed: %s",
			       vsock_error(t->ctl) == -ECONNREFUSED ? "refused (RST)" :
			       vsock_error(t->ctl) == -ETIMEDOUT    ? "no answer" :
								      "reset");
	}
}

/* One phase of the run; VT_NEXT when it moved on to another. */
static enum vt_status run_phase(struct vt_run *t)
{
	enum vt_status r;

	switch (phase) {
	case PH_CONNECT:
		return connect_ctl(t);
	case PH_SAY:
		r = say_barrier(t);
		if (r == VT_NEXT)
			next_step(t, PH_HEAR);
		return r;
	case PH_HEAR:
		return hear_barrier(t);
	case PH_HALF:
		r = run_half(t);
		if (r != VT_END)
			return r;
		cnt.ok++;
		case_done(t, "ok", vt_cases[t->case_id].note[t->role]);
		return VT_NEXT;
	case PH_SAY_COMPLETED:
		r = vt_write(t, "COMPLETED");
		if (r == VT_NEXT)
			next_step(t, PH_HEAR_COMPLETED);
		return r;
	case PH_HEAR_COMPLETED:
		r = vt_expect(t, "COMPLETED");
		if (r == VT_NEXT)
			run_end(t, true);
		return r;
	default:
		return VT_WAIT;
	}
}

/*
 * The run's next steps, at most @budget (each phase and each step of a
 * half one): the steps done, @budget when more may be ready. Then the
 * time of the next look: the step's limit, or a timed wait's end.
 */
static unsigned int run_advance(struct vt_run *t, unsigned int budget)
{
	uint64_t limit;
	enum vt_status r;

	steps_left = budget;
	t->wake_at = UINT64_MAX;
	do {
		r = run_phase(t);
	} while (r == VT_NEXT && phase != PH_IDLE && --steps_left);
	if (r == VT_WAIT && phase != PH_HALF && vt_step_ns(t) >= VT_STEP_TIMEOUT_NS)
		r = vt_fail(t, "no control line for %llu s", VT_STEP_TIMEOUT_NS / 1000000000ULL);
	if (r == VT_FAIL) {
		run_fail(t);
		return budget - steps_left;
	}
	if (phase == PH_IDLE)
		return budget - steps_left;
	limit = t->step_start + VT_STEP_TIMEOUT_NS;
	poll_schedule_at(&vt_ctx, t->wake_at < limit ? t->wake_at : limit);
	return budget - steps_left;
}

/* ---- the poll context: control connections and the run ---- */

static void accept_ctl(void)
{
	struct vsock_sock *c;

	while ((c = vsock_accept(ctl_listener))) {
		if (phase != PH_IDLE) {
			cnt.refused++;
			printf("vsock-test: a second control connection refused: a run is on\n");
			vsock_close(c);
			continue;
		}
		run_start(&run, VT_SERVER, c);
	}
}

/*
 * Scheduled by the socket layer when one of the service's sockets
 * changed, by its time (run_advance), or by a run starting. The ready
 * list is emptied first, so a change the run does not look at again
 * (the list has each socket once) schedules it anew; one whole budget of
 * steps keeps it scheduled. Completing needs no re-check: the socket
 * layer schedules the context on every socket it readies.
 */
static unsigned int vt_poll(struct poll_ctx *ctx, unsigned int budget)
{
	struct vsock_sock *s;

	while ((s = vsock_take_ready(&vt_owner, NULL)))
		if (s == ctl_listener)
			accept_ctl();
	if (phase == PH_IDLE)
		return 0;
	return run_advance(&run, budget);
}

/* For the idle watchdog: a socket readied that nobody scheduled the service for. */
static enum poll_verdict vt_check(struct poll_ctx *ctx, bool count, const char **what)
{
	*what = "vsock-test sockets";
	return vsock_ready_count(&vt_owner) ? POLL_LOST : POLL_IDLE;
}

static struct poll_ctx vt_ctx = {
	.name = "vsock-test",
	.poll = vt_poll,
	.check = vt_check,
};

static void listen_ctl(void)
{
	if (ctl_listener)
		vsock_close(ctl_listener);
	ctl_listener = NULL;
	ctl_port = config_get(&cfg_vsock_test_port);
	if (!ctl_port)
		return;
	ctl_listener = vsock_listen(ctl_port, VSOCK_TYPE_STREAM, 1);
	if (!ctl_listener) {
		printf("vsock-test: cannot listen on port %u\n", ctl_port);
		return;
	}
	vsock_set_owner(ctl_listener, &vt_owner, NULL);
}

static void port_changed(struct config_key *key)
{
	listen_ctl();
}

/* ---- the console command ---- */

static void list_cases(void)
{
	printf("ID\tTest name\tserver\tclient\n");
	for (unsigned int id = 0; id < vt_n_cases; id++) {
		const struct vt_case *c = &vt_cases[id];

		printf("%u\t%s", id, c->name);
		for (int r = 0; r < VT_ROLES; r++)
			printf("\t%s%s", c->na[r] ? "n/a: " : "", c->na[r] ? c->na[r] : "runs");
		printf("\n");
	}
}

static void show_status(void)
{
	printf("vsock-test: control port %u (%s), cases on port %u, %s\n", ctl_port,
	       ctl_listener ? "listening" : "off",
	       (unsigned int)config_get(&cfg_vsock_test_peer_port),
	       phase == PH_IDLE ? "no run" : "a run is on");
	printf("  runs %llu completed %llu aborted %llu refused %llu\n",
	       (unsigned long long)cnt.runs, (unsigned long long)cnt.completed,
	       (unsigned long long)cnt.aborted, (unsigned long long)cnt.refused);
	printf("  last run: ok %llu failed %llu n/a %llu skipped by the peer %llu\n",
	       (unsigned long long)cnt.ok, (unsigned long long)cnt.failed,
	       (unsigned long long)cnt.na, (unsigned long long)cnt.peer_skipped);
}

static int start_client(const char *port_arg)
{
	struct vsock_sock *ctl;
	unsigned long port;
	char *end;

	port = strtoul(port_arg, &end, 10);
	if (*end || !*port_arg || port > 0xffffffffUL)
		return shell_error("vsock-test client: bad port \"%s\"", port_arg);
	if (phase != PH_IDLE)
		return shell_error("vsock-test client: a run is on");
	ctl = vsock_connect(VSOCK_CID_HOST, port, VSOCK_TYPE_STREAM);
	if (!ctl)
		return shell_error("vsock-test client: no socket for the control connection");
	run_start(&run, VT_CLIENT, ctl);
	return 0;
}

static int vt_cmd(int argc, char **argv)
{
	if (argc == 1) {
		show_status();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "list")) {
		list_cases();
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "client"))
		return start_client(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "stop")) {
		if (phase == PH_IDLE)
			return shell_error("vsock-test stop: no run is on");
		vt_fail(&run, "stopped from the console");
		run_fail(&run);
		return 0;
	}
	return shell_error("vsock-test: usage: vsock-test [list | client PORT | stop]");
}

static const struct shell_cmd vt_shell_cmd = {
	.name = "vsock-test",
	.usage = "[list | client PORT | stop]",
	.help = "the kernel's vsock_test, ringside's half: status; the cases; a run as client "
		"to host PORT (as server: vsock_test_port); stop the run",
	.run = vt_cmd,
};

void vsock_test_init(void)
{
	poll_ctx_add(&vt_ctx);
	listen_ctl();
	port_hook.fn = port_changed;
	config_on_change(&cfg_vsock_test_port, &port_hook);
	shell_register(&vt_shell_cmd);
}
