/* SPDX-License-Identifier: MIT */
/*
 * The other end of the kernel's vsock test suite (Linux's
 * tools/testing/vsock/vsock_test, the version in Debian's
 * linux-source-6.12): vsock_test runs on the host in one role, ringside
 * plays the other, case by case, over its own socket layer.
 *
 * The two ends step in lockstep over a control connection of text lines
 * (vsock_test's control.c): before each case both write NEXT, or SKIP
 * when they will not run it, and read the other's; then each runs its
 * half, meeting on lines such as LISTENING or SRVREADY; after the last
 * case both write and read COMPLETED. vsock_test's control connection is
 * TCP; ringside has none, so it is a vsock connection that the host
 * bridges to TCP (socat, host/ringside/vsock_test.py).
 *
 * Roles are ringside's: in the server role ringside listens for the
 * control connection (vsock_test runs --mode=client on the host) and runs
 * each case's server half; in the client role it connects out (the host's
 * vsock_test runs --mode=server) and runs the client halves.
 *
 * vsock_test_cases.c holds the cases, vsock_test.c the service: the
 * control connection, the run, its poll context and the console command.
 */
#ifndef APP_VSOCK_TEST_H
#define APP_VSOCK_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/vsock/vsock.h"

enum vt_role { VT_SERVER, VT_CLIENT, VT_ROLES };

/* What a step of a half says (vt_run_half): */
enum vt_status {
	VT_WAIT, /* not yet: call again when something changed or the clock moved */
	VT_NEXT, /* done: go on with the next step */
	VT_JUMP, /* done, and the step set t->pc itself (a loop) */
	VT_END, /* the half is over, every check passed */
	VT_FAIL, /* a check failed: t->err says which */
};

#define VT_LINE_MAX 128 /* longer control lines are an error */
#define VT_MULTICONN 100 /* vsock_test's MULTICONN_NFDS */
#define VT_ERR_MAX 160

/* One run: the control connection and the case in progress. */
struct vt_run {
	enum vt_role role;
	uint32_t peer_port; /* vsock_test's --peer-port: the port the halves use */
	struct vsock_sock *ctl;

	/* the control connection, vsock_test's control.c in both directions */
	char line[VT_LINE_MAX + 1]; /* the last line read, without its newline */
	size_t line_len;
	bool line_ready; /* line holds a whole line nobody took yet */
	char out[VT_LINE_MAX + 2]; /* a line being written, with its newline */
	size_t out_len, out_off;

	/* the case in progress */
	unsigned int case_id;
	unsigned int pc; /* the half's step */
	unsigned int sub; /* progress inside one step */
	unsigned int i; /* a loop's counter */
	uint64_t step_start; /* now_ns() when step pc began */
	uint64_t wake_at; /* the earliest vt_sleep of this look (UINT64_MAX: none) */
	struct vsock_sock *listener, *sock;
	struct vsock_sock *socks[VT_MULTICONN];
	uint8_t *buf; /* the case's data, freed with the case */
	size_t len, off;
	bool eor; /* the message being sent ends a record (MSG_EOR) */
	unsigned long hash; /* vsock_test's hash_djb2 sums, an unsigned long */
	unsigned long peer_hash;
	uint64_t rng;
	char err[VT_ERR_MAX];
};

/* A case: its name as vsock_test --list says it, and each role's half. */
struct vt_case {
	const char *name;
	/* NULL with no reason: vsock_test has no half for the role either */
	enum vt_status (*half[VT_ROLES])(struct vt_run *t);
	/* a half ringside cannot play: why (the facility it lacks) */
	const char *na[VT_ROLES];
	/* a half that passes without one of Linux's checks: which and why */
	const char *note[VT_ROLES];
};

extern const struct vt_case vt_cases[];
extern const unsigned int vt_n_cases;

/* ---- what the halves are written with (vsock_test.c) ---- */

/* Fail the half: t->err gets the message. Returns VT_FAIL. */
enum vt_status vt_fail(struct vt_run *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The control connection: write one line; wait for one, or for a given one. */
enum vt_status vt_write(struct vt_run *t, const char *line);
enum vt_status vt_write_ulong(struct vt_run *t, unsigned long v);
enum vt_status vt_expect(struct vt_run *t, const char *line);
enum vt_status vt_read_ulong(struct vt_run *t, unsigned long *v);
/* Nanoseconds the current step has run. */
uint64_t vt_step_ns(const struct vt_run *t);
/* Wait until the current step has run @ns: VT_WAIT, with the loop woken then. */
enum vt_status vt_sleep(struct vt_run *t, uint64_t ns);
/* Hand @s to the service's poll context, so a change on it runs the half. */
void vt_own(struct vsock_sock *s);

#endif
