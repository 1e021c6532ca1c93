// SPDX-License-Identifier: MIT
/*
 * ringside-vhost-vsock: a vhost-user back end for QEMU's
 * vhost-user-vsock-pci that bridges the guest's vsock to hybrid-vsock
 * Unix sockets. One thread, one epoll loop; --poll busy-polls the rings.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"
#include "control.h"
#include "dev.h"
#include "inject.h"
#include "stats.h"

static const char usage[] =
	"usage: ringside-vhost-vsock --socket PATH --uds PATH [options]\n"
	"vhost-user back end for QEMU's vhost-user-vsock-pci; host side: hybrid vsock\n"
	"over Unix sockets (Firecracker / Cloud Hypervisor style).\n"
	"  --socket PATH     vhost-user socket QEMU connects to (-chardev socket,path=)\n"
	"  --uds PATH        host clients connect and send \"CONNECT <port>\\n\"; guest\n"
	"                    connections to host port P go to PATH_P\n"
	"  --uds-seqpacket PATH  the same for SOCK_SEQPACKET clients (optional)\n"
	"  --control PATH    programs send \"counters\" or \"inject stop\": JSON back\n"
	"  --guest-cid N     the guest's CID (default 3)\n"
	"  --buf-alloc BYTES receive buffer advertised per connection (default 262144)\n"
	"  --poll            busy-poll the rings instead of sleeping on eventfds\n"
	"  --forward-tcp [ADDR:]HOSTPORT=GUESTPORT  TCP on ADDR:HOSTPORT (127.0.0.1;\n"
	"                    0: a free port) to GUESTPORT, both <= 65535 (repeatable)\n"
	"  --inject MODE[,MODE]|all  act as a faulty device (--inject list: the modes)\n"
	"  --inject-every N, --inject-seed S  a fault per N packets (100), seeded (1)\n"
	"  -v, --verbose     log the front end's messages (twice: every message)\n"
	"  -h, --help        this text\n"
	"Counters go to stderr at exit, and on SIGUSR1 (which also stops --inject).\n"
	"QEMU needs shared guest RAM: -object memory-backend-memfd,id=mem,size=512M,\n"
	"share=on -machine q35,memory-backend=mem -chardev socket,id=vu,path=PATH\n"
	"-device vhost-user-vsock-pci,chardev=vu\n";

/*
 * The socket files we created: removed at every exit, die() included, so
 * a failed start leaves nothing behind (and a stale file is never ours).
 */
static const char *bound_paths[4];
static unsigned n_bound;

static void unlink_bound(void)
{
	while (n_bound)
		unlink(bound_paths[--n_bound]);
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "ringside-vhost-vsock: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static void die2(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "ringside-vhost-vsock: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(2);
}

/* "--uds PATH: cannot bind: <errno's text>" */
static void die_errno(const char *what, const char *path, const char *failed)
{
	fprintf(stderr, "ringside-vhost-vsock: %s %s: %s: %s\n", what, path, failed,
		strerror(errno));
	exit(2);
}

/* Listen on a Unix socket path; a stale socket file is replaced. */
static int listen_unix(const char *path, const char *what, int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, probe;

	if (strlen(path) >= sizeof(sa.sun_path))
		die2("%s %s: path too long (at most 107 bytes)", what, path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno != EADDRINUSE)
			die_errno(what, path, "cannot bind");
		/* in use by a live process, or left over by a dead one? */
		probe = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
		if (connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			die2("%s %s: in use by another process", what, path);
		close(probe);
		unlink(path);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die_errno(what, path, "cannot bind");
	}
	bound_paths[n_bound++] = path;
	if (listen(fd, 128) < 0)
		die_errno(what, path, "cannot listen");
	return fd;
}

static void ep_add(struct vsock_dev *d, int fd, struct ep_src *src, enum ep_kind kind)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = src };

	src->kind = kind;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
}

static void parse_args(struct vsock_dev *d, int argc, char **argv)
{
	static const struct option opts[] = { { "socket", required_argument, NULL, 's' },
					      { "uds", required_argument, NULL, 'u' },
					      { "uds-seqpacket", required_argument, NULL, 'q' },
					      { "control", required_argument, NULL, 'C' },
					      { "guest-cid", required_argument, NULL, 'c' },
					      { "buf-alloc", required_argument, NULL, 'b' },
					      { "poll", no_argument, NULL, 'p' },
					      { "forward-tcp", required_argument, NULL, 'f' },
					      { "inject", required_argument, NULL, 'I' },
					      { "inject-every", required_argument, NULL, 'E' },
					      { "inject-seed", required_argument, NULL, 'S' },
					      { "verbose", no_argument, NULL, 'v' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	unsigned long long v, inject_every = 100, inject_seed = 1;
	char *end, err[160];
	int o;

	d->guest_cid = 3;
	d->buf_alloc = 256 * 1024;
	opterr = 0; /* our own one-line messages */
	while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			d->vu_path = optarg;
			break;
		case 'u':
			d->uds_path = optarg;
			break;
		case 'q':
			d->uds_seq_path = optarg;
			break;
		case 'C':
			d->ctl_path = optarg;
			break;
		case 'c':
			errno = 0;
			v = strtoull(optarg, &end, 0);
			/* 0-2 are reserved, U32_MAX is VMADDR_CID_ANY */
			if (*end || errno || v < 3 || v >= 0xffffffffull)
				die("--guest-cid: '%s' is not a CID (3..2^32-2)", optarg);
			d->guest_cid = v;
			break;
		case 'b':
			errno = 0;
			v = strtoull(optarg, &end, 0);
			if (*end || errno || v < 4096 || v > (1ull << 30))
				die("--buf-alloc: '%s' is not 4096..1073741824", optarg);
			d->buf_alloc = v;
			break;
		case 'p':
			d->poll = true;
			break;
		case 'f': /* checked now, listened on in setup() once epoll exists */
			if (tcp_forward_check(optarg, err, sizeof(err)))
				die("--forward-tcp: %s", err);
			if (d->n_forward_tcp == TCP_MAX_FORWARDS)
				die("--forward-tcp: at most %s", "16");
			d->forward_tcp[d->n_forward_tcp++] = optarg;
			break;
		case 'I':
			if (!strcmp(optarg, "list")) {
				inject_list(stdout);
				exit(0);
			}
			if (!inject_parse_modes(optarg))
				die("--inject: unknown mode in '%s' (try --help)", optarg);
			break;
		case 'E':
			errno = 0;
			inject_every = strtoull(optarg, &end, 0);
			if (*end || errno || inject_every < 1 || inject_every > 1000000)
				die("--inject-every: '%s' is not 1..1000000", optarg);
			break;
		case 'S':
			errno = 0;
			inject_seed = strtoull(optarg, &end, 0);
			if (*end || errno)
				die("--inject-seed: '%s' is not a number", optarg);
			break;
		case 'v':
			vv_verbose++;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			die("bad option or missing value: '%s' (try --help)", argv[optind - 1]);
		}
	}
	inject_configure(inject_every, inject_seed);
	if (optind < argc)
		die("unexpected argument '%s' (try --help)", argv[optind]);
	if (!d->vu_path)
		die("%s", "--socket PATH is required (try --help)");
	if (!d->uds_path)
		die("%s", "--uds PATH is required (try --help)");
}

static void setup(struct vsock_dev *d)
{
	char err[160];
	sigset_t set;

	d->vu_fd = -1;
	for (unsigned i = 0; i < 2; i++) {
		d->vq[i].kick_fd = d->vq[i].call_fd = d->vq[i].err_fd = -1;
		d->ep_kick[i].kind = i == VQ_RX ? EP_KICK_RX : EP_KICK_TX;
	}
	d->ep_vu_conn.kind = EP_VU_CONN;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		die("epoll_create1: %s", strerror(errno));
	atexit(unlink_bound);
	d->vu_listen_fd = listen_unix(d->vu_path, "--socket", SOCK_STREAM);
	d->uds_fd = listen_unix(d->uds_path, "--uds", SOCK_STREAM);
	ep_add(d, d->vu_listen_fd, &d->ep_vu_listen, EP_VU_LISTEN);
	ep_add(d, d->uds_fd, &d->ep_uds, EP_UDS_LISTEN);
	d->ctl_fd = -1;
	if (d->ctl_path) {
		d->ctl_fd = listen_unix(d->ctl_path, "--control", SOCK_STREAM);
		ep_add(d, d->ctl_fd, &d->ep_ctl, EP_CTL_LISTEN);
	}
	d->uds_seq_fd = -1;
	if (d->uds_seq_path) {
		d->uds_seq_fd = listen_unix(d->uds_seq_path, "--uds-seqpacket", SOCK_SEQPACKET);
		ep_add(d, d->uds_seq_fd, &d->ep_uds_seq, EP_UDS_SEQ_LISTEN);
	}

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	d->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sig_fd < 0)
		die("signalfd: %s", strerror(errno));
	ep_add(d, d->sig_fd, &d->ep_sig, EP_SIGNAL);
	vsock_init(d);
	for (unsigned i = 0; i < d->n_forward_tcp; i++)
		if (tcp_forward_add(d, d->forward_tcp[i], err, sizeof(err)) < 0)
			die("--forward-tcp: %s", err);
}

static void drain_eventfd(int fd)
{
	uint64_t v;

	if (fd >= 0 && read(fd, &v, sizeof(v)) == sizeof(v))
		stats.kicks++;
}

/*
 * An rx ring that was kicked a while ago but never showed a buffer means we
 * do not see the guest's writes: QEMU's RAM is not shared with us
 * (share=off). Only rx: drivers keep it stocked from the start, while an
 * idle guest's tx ring is rightly empty, and QEMU kicks every ring once
 * when it starts them. Checked from the tick, not at the kick: a kick can
 * arrive before the ring is enabled.
 */
static void shared_ram_check(struct vsock_dev *d)
{
	static bool warned;

	for (unsigned i = 0; i < 1 && !warned; i++) {
		struct device_ring *vr = &d->vq[i];

		if (!d->vq_ready[i] || !d->vq_kicked[i] || vr->seen_avail ||
		    now_ms() - d->vq_ready_ms[i] < 1000 || vring_avail_pending(vr))
			continue;
		warned = true;
		vv_log("error: the guest kicked queue %u but its ring is empty "
		       "here: guest RAM is not shared (use "
		       "memory-backend-memfd,share=on)",
		       i);
	}
}

/* false: time to exit */
static bool handle_signal(struct vsock_dev *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			inject_stop();
			stats_dump(stderr);
			inject_dump();
		} else
			return false;
	}
	return true;
}

/* Before sleeping: let the guest kick us; true if work raced in. */
static bool arm_kicks(struct vsock_dev *d)
{
	bool more = false;

	if (!d->vq_ready[VQ_RX] || !d->vq_ready[VQ_TX])
		return false;
	more |= vring_set_kicks(&d->vq[VQ_TX], true);
	/* RX kicks matter only while work waits for guest buffers */
	if (vsock_rx_waiting(d))
		more |= vring_set_kicks(&d->vq[VQ_RX], true);
	else
		vring_set_kicks(&d->vq[VQ_RX], false);
	return more;
}

static void run(struct vsock_dev *d)
{
	struct epoll_event ev[64];

	for (;;) {
		int timeout = 200, n;

		if (d->poll && d->vq_ready[VQ_RX] && d->vq_ready[VQ_TX])
			timeout = 0;
		else if (arm_kicks(d))
			timeout = 0;
		n = epoll_wait(d->epfd, ev, 64, timeout);
		if (n < 0 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			struct ep_src *src = ev[i].data.ptr;

			switch (src->kind) {
			case EP_VU_LISTEN:
				vu_accept(d);
				break;
			case EP_VU_CONN:
				if (d->vu_fd >= 0)
					vu_readable(d);
				break;
			case EP_KICK_RX:
			case EP_KICK_TX:
				drain_eventfd(d->vq[src->kind == EP_KICK_TX].kick_fd);
				d->vq_kicked[src->kind == EP_KICK_TX] = true;
				break;
			case EP_UDS_LISTEN:
				vsock_accept(d, false);
				break;
			case EP_UDS_SEQ_LISTEN:
				vsock_accept(d, true);
				break;
			case EP_TCP_LISTEN:
				tcp_accept(d, src);
				break;
			case EP_CONN:
				vsock_conn_event(d, src, ev[i].events);
				break;
			case EP_SIGNAL:
				if (!handle_signal(d))
					return;
				break;
			case EP_CTL_LISTEN:
				control_accept(d);
				break;
			case EP_CTL_CONN:
				control_event(d, src);
				break;
			}
		}
		vsock_process(d);
		if (now_ms() - d->last_tick_ms >= 200) {
			d->last_tick_ms = now_ms();
			vsock_tick(d);
			shared_ram_check(d);
		}
		vsock_reap(d);
	}
}

int main(int argc, char **argv)
{
	static struct vsock_dev dev;

	parse_args(&dev, argc, argv);
	vring_violation_hook = stats_ring_violation;
	vring_broken_hook = vu_ring_broken;
	setup(&dev);
	fprintf(stderr,
		"ringside-vhost-vsock: listening on %s (vhost-user), "
		"%s (hybrid vsock), guest cid %llu%s\n",
		dev.vu_path, dev.uds_path, (unsigned long long)dev.guest_cid,
		dev.poll ? ", polling" : "");
	run(&dev);
	vu_disconnect(&dev);
	tcp_close_listeners();
	unlink_bound();
	stats_dump(stderr);
	inject_dump();
	return 0;
}
