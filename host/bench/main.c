// SPDX-License-Identifier: MIT
/* ringside-bench: ping-pong latency and stream throughput over vsock. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* Rounds and warm-up rounds: pingpong keeps 8 bytes per measured round. */
#define MAX_COUNT 1000000000ull

static const char usage[] =
	"usage: ringside-bench pingpong|stream|rr (--uds PATH|--cid N|--tcp H:P) [opts]\n"
	"       ringside-bench rr --udp HOST:PORT [options]\n"
	"  --uds PATH      hybrid vsock through a back end's Unix socket\n"
	"  --cid N         AF_VSOCK to guest CID N (hosts with vhost-vsock)\n"
	"  --tcp HOST:PORT a back end's --forward-tcp listener (it names the port)\n"
	"  --port P        guest port (default: echo 1234, sink 1235, source 1236)\n"
	"  --json          machine-readable output; --progress: progress on stderr\n"
	"  --timeout S     give up when the guest port is silent this long (30)\n"
	"pingpong: SIZE bytes out, all SIZE back, per-round latency\n"
	"  -s, --size LIST sizes, comma separated, k/m/g suffixes (64)\n"
	"  --count N       measured rounds per size (1000); --warmup N unmeasured (50)\n"
	"  --time S        measure for S seconds per size instead of --count\n"
	"  --trace FILE    every measured round trip: size, index, ns (and with\n"
	"                  --cost-shm the guest's instructions, halts, halted ns)\n"
	"  --cost-shm PATH the ringside-cost plugin's block (shm=PATH), read live\n"
	"stream: --time S (10) seconds of throughput like iperf-vsock, Gb/s, fairness\n"
	"  -l LEN          buffer length per read/write (64k); -P N parallel streams (1)\n"
	"  --dir h2g|g2h   we write to the sink (h2g); g2h, -R/--reverse: the guest sends\n"
	"  --cpu-pids LIST CPU% of these pids (QEMU, back end) plus ours: Mbps per CPU%\n"
	"rr: N sessions, each a closed loop of request and echoed response\n"
	"  -n, --sessions LIST  concurrent sessions (1); -s, --size LIST (1,64,256,1024)\n"
	"  --time S        seconds per cell (3); --warmup N per session (5)\n"
	"  --udp HOST:PORT UDP echo (a guest's port 7) instead of vsock\n"
	"  --udp-timeout S resend a request unanswered this long (0.5)\n"
	"Data is the pattern byte(i) = i % 251; a mismatch exits 3 with its offset.\n";

static void bad_value(const char *opt, const char *s, int len, unsigned long long min,
		      unsigned long long max, bool suffixes)
{
	const char *what = suffixes ? "size (k, m, g: 2^10, 2^20, 2^30)" : "number";

	if (min == 1)
		fprintf(stderr, "ringside-bench: %s: expected a positive %s, got '%.*s'\n", opt,
			what, len, s);
	else
		fprintf(stderr, "ringside-bench: %s: expected a %s from %llu to %llu, got '%.*s'\n",
			opt, what, min, max, len, s);
	exit(2);
}

/*
 * One value of option @opt, which ends at NUL or ',': decimal digits and,
 * where @suffixes (sizes), k, m or g for 2^10, 2^20, 2^30. Out of
 * [min, max] or malformed: one line naming the option, exit 2.
 */
static unsigned long long parse_value(const char *opt, const char *s, unsigned long long min,
				      unsigned long long max, bool suffixes)
{
	unsigned long long v = 0;
	const char *p = s;
	int len, shift = 0;

	len = (int)strcspn(s, ",");
	/* digits only: strtoull would take "-5" as 2^64 - 5, and " 5" or "0x5" */
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (ULLONG_MAX - 9) / 10)
			goto range;
		v = v * 10 + (*p - '0');
	}
	if (p == s)
		goto bad;
	if (suffixes && *p && *p != ',') {
		const char *units = "kmg", *u = strchr(units, *p | 0x20);

		if (!u)
			goto bad;
		shift = 10 * (int)(u - units + 1);
		p++;
	}
	if (*p && *p != ',')
		goto bad;
	if (v > max >> shift)
		goto range;
	v <<= shift;
	if (v < min)
		goto bad;
	return v;
bad:
	bad_value(opt, s, len, min, max, suffixes);
range:
	fprintf(stderr, "ringside-bench: %s: at most %llu, got '%.*s'\n", opt, max, len, s);
	exit(2);
}

/* An option that takes one value, not a list. */
static unsigned long long parse_one(const char *opt, const char *s, unsigned long long min,
				    unsigned long long max, bool suffixes)
{
	if (strchr(s, ','))
		bad_value(opt, s, (int)strlen(s), min, max, suffixes);
	return parse_value(opt, s, min, max, suffixes);
}

/* Seconds: a positive decimal number, at most 10^6 (its ns fit in 64 bits). */
static double parse_seconds(const char *s, const char *opt)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v > 0 && v <= 1e6)) {
		fprintf(stderr,
			"ringside-bench: %s: expected a positive number of seconds "
			"(at most 1000000), got '%s'\n",
			opt, s);
		exit(2);
	}
	return v;
}

/*
 * A comma-separated list of at most 64 values of @opt, each in [min, max];
 * returns how many.
 */
static unsigned parse_list(const char *opt, const char *s, unsigned long long *out,
			   unsigned long long min, unsigned long long max, bool suffixes)
{
	unsigned n = 0;

	for (;;) {
		if (n == 64) {
			fprintf(stderr, "ringside-bench: %s: at most 64 values\n", opt);
			exit(2);
		}
		out[n++] = parse_value(opt, s, min, max, suffixes);
		s = strchr(s, ',');
		if (!s)
			return n;
		s++;
	}
}

static void parse_sessions(struct bench_opts *o, const char *opt, const char *s)
{
	unsigned long long v[64];

	o->nsessions = parse_list(opt, s, v, 1, 1000, false);
	for (unsigned i = 0; i < o->nsessions; i++)
		o->sessions[i] = v[i];
}

static void parse_sizes(struct bench_opts *o, const char *s)
{
	unsigned long long v[64];

	o->nsizes = parse_list("--size", s, v, 1, 1ull << 30, true);
	for (unsigned i = 0; i < o->nsizes; i++)
		o->sizes[i] = v[i];
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "uds", required_argument, NULL, 'u' },
					      { "cid", required_argument, NULL, 'c' },
					      { "tcp", required_argument, NULL, 'X' },
					      { "port", required_argument, NULL, 'p' },
					      { "json", no_argument, NULL, 'j' },
					      { "progress", no_argument, NULL, 'g' },
					      { "size", required_argument, NULL, 's' },
					      { "count", required_argument, NULL, 'K' },
					      { "time", required_argument, NULL, 't' },
					      { "warmup", required_argument, NULL, 'w' },
					      { "dir", required_argument, NULL, 'd' },
					      { "cpu-pids", required_argument, NULL, 'C' },
					      { "sessions", required_argument, NULL, 'S' },
					      { "udp", required_argument, NULL, 'U' },
					      { "reverse", no_argument, NULL, 'R' },
					      { "trace", required_argument, NULL, 'x' },
					      { "cost-shm", required_argument, NULL, 'M' },
					      { "udp-timeout", required_argument, NULL, 'T' },
					      { "timeout", required_argument, NULL, 'O' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	struct bench_opts o = {
		.port = -1,
		.count = 1000,
		.warmup = 50,
		.len = 65536,
		.parallel = 1,
		.sizes = { 64 },
		.nsizes = 1,
		.sessions = { 1 },
		.nsessions = 1,
		.udp_timeout_s = 0.5,
		.timeout_s = 30,
	};
	bool have_cid = false;
	const char *dir = NULL;
	bool reverse = false;
	int mode;
	int opt;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "pingpong")) {
		mode = 'p';
	} else if (!strcmp(argv[1], "stream")) {
		mode = 's';
		o.time_s = 10;
	} else if (!strcmp(argv[1], "rr")) {
		mode = 'r';
		o.time_s = 3;
		o.warmup = 5;
		parse_sizes(&o, "1,64,256,1024");
	} else {
		fprintf(stderr,
			"ringside-bench: unknown mode '%s' (pingpong, "
			"stream or rr)\n",
			argv[1]);
		return 2;
	}
	bench_mode = argv[1];
	/*
	 * A peer that closed (no guest behind the back end, a guest that
	 * refused) is an error we report, not a silent death by SIGPIPE.
	 */
	signal(SIGPIPE, SIG_IGN);
	o.progress = isatty(2);
	optind = 2;
	while ((opt = getopt_long(argc, argv, "s:l:P:n:hR", opts, NULL)) != -1) {
		switch (opt) {
		case 'u':
			o.uds = optarg;
			break;
		case 'X':
			o.tcp = optarg;
			break;
		case 'c':
			/* CIDs 0..2 are the hypervisor, local and the host: never a guest */
			o.cid = parse_one("--cid", optarg, 3, 0xfffffffe, false);
			have_cid = true;
			break;
		case 'p':
			o.port = parse_one("--port", optarg, 1, 0x7fffffff, false);
			break;
		case 'j':
			o.json = true;
			break;
		case 'g':
			o.progress = true;
			break;
		case 's':
			parse_sizes(&o, optarg);
			break;
		case 'K':
			o.count = parse_one("--count", optarg, 1, MAX_COUNT, false);
			break;
		case 'n':
		case 'S':
			parse_sessions(&o, opt == 'n' ? "-n" : "--sessions", optarg);
			break;
		case 'x':
			o.trace = optarg;
			break;
		case 'M':
			o.cost_shm = optarg;
			break;
		case 'U':
			o.udp = optarg;
			break;
		case 'T':
			o.udp_timeout_s = parse_seconds(optarg, "--udp-timeout");
			break;
		case 'O':
			o.timeout_s = parse_seconds(optarg, "--timeout");
			break;
		case 't':
			o.time_s = parse_seconds(optarg, "--time");
			break;
		case 'w':
			o.warmup = parse_one("--warmup", optarg, 0, MAX_COUNT, false);
			break;
		case 'l':
			o.len = parse_one("-l", optarg, 1, 1ull << 30, true);
			break;
		case 'P':
			o.parallel = parse_one("-P", optarg, 1, 64, false);
			break;
		case 'd':
			if (strcmp(optarg, "h2g") && strcmp(optarg, "g2h")) {
				fprintf(stderr, "ringside-bench: --dir h2g|g2h\n");
				return 2;
			}
			dir = optarg;
			break;
		case 'R':
			reverse = true;
			break;
		case 'C': {
			unsigned long long pids[64];

			/* stream.c adds our own pid to at most 16 of these */
			if (parse_list("--cpu-pids", optarg, pids, 1, INT_MAX, false) > 16) {
				fprintf(stderr, "ringside-bench: --cpu-pids: at most 16 pids\n");
				return 2;
			}
			o.cpu_pids = optarg;
		} break;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs("try --help\n", stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ringside-bench: unexpected '%s'\n", argv[optind]);
		return 2;
	}
	if (o.udp && mode != 'r') {
		fprintf(stderr, "ringside-bench: --udp is for rr\n");
		return 2;
	}
	if ((o.trace || o.cost_shm) && mode != 'p') {
		fprintf(stderr, "ringside-bench: --trace and --cost-shm are for pingpong\n");
		return 2;
	}
	if (o.cost_shm && !o.trace) {
		fprintf(stderr, "ringside-bench: --cost-shm needs --trace FILE\n");
		return 2;
	}
	if (reverse && mode != 's') {
		fprintf(stderr, "ringside-bench: -R is for stream\n");
		return 2;
	}
	if (reverse && dir && strcmp(dir, "g2h")) {
		fprintf(stderr, "ringside-bench: -R is --dir g2h: not with --dir %s\n", dir);
		return 2;
	}
	o.g2h = reverse || (dir && !strcmp(dir, "g2h"));
	if (o.udp && (o.uds || have_cid || o.tcp)) {
		fprintf(stderr, "ringside-bench: --udp excludes --uds and --cid\n");
		return 2;
	}
	for (unsigned i = 0; o.udp && i < o.nsizes; i++)
		if (o.sizes[i] > 65507) {
			fprintf(stderr, "ringside-bench: UDP requests are at "
					"most 65507 bytes\n");
			return 2;
		}
	if (!o.udp && (!!o.uds + have_cid + !!o.tcp) != 1) {
		fprintf(stderr, "ringside-bench: give exactly one of --uds PATH, "
				"--cid N and --tcp HOST:PORT\n");
		return 2;
	}
	if (mode == 'r')
		return run_rr(&o);
	return mode == 'p' ? run_pingpong(&o) : run_stream(&o);
}
