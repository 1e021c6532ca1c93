// SPDX-License-Identifier: MIT
/* ringside-bench: ping-pong latency and stream throughput over vsock. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static const char usage[] =
	"usage: ringside-bench pingpong|stream|rr (--uds PATH|--cid N|--tcp H:P) [opts]\n"
	"       ringside-bench rr --udp HOST:PORT [options]\n"
	"  --uds PATH      hybrid vsock through a back end's Unix socket\n"
	"  --cid N         AF_VSOCK to guest CID N (hosts with vhost-vsock)\n"
	"  --tcp HOST:PORT a back end's --forward-tcp listener (it names the port)\n"
	"  --port P        guest port (default: echo 1234, sink 1235, source 1236)\n"
	"  --json          machine-readable output; --progress: progress on stderr\n"
	"pingpong: SIZE bytes out, all SIZE back, per-round latency\n"
	"  -s, --size LIST sizes, comma separated, k/m suffixes (64)\n"
	"  --count N       measured rounds per size (1000); --warmup N unmeasured (50)\n"
	"  --time S        measure for S seconds per size instead of --count\n"
	"  --trace FILE    every measured round trip: size, index, ns (and with\n"
	"                  --cost-shm the guest's instructions, halts, halted ns)\n"
	"  --cost-shm PATH the ringside-cost plugin's block (shm=PATH), read live\n"
	"stream: throughput like iperf-vsock, Gb/s with G = 10^9; per-stream fairness\n"
	"  -l LEN          buffer length per read/write (64k); -P N parallel streams (1)\n"
	"  --dir h2g|g2h   h2g: host writes to the sink; g2h: reads the source (h2g)\n"
	"  --time S        seconds (10)\n"
	"  --cpu-pids LIST CPU% of these pids (QEMU, back end) plus ours: Mbps per CPU%\n"
	"rr: N sessions, each a closed loop of request and echoed response\n"
	"  -n, --sessions LIST  concurrent sessions (1); -s, --size LIST (1,64,256,1024)\n"
	"  --time S        seconds per cell (3); --warmup N per session (5)\n"
	"  --udp HOST:PORT UDP echo (a guest's port 7) instead of vsock\n"
	"  --udp-timeout S resend a request unanswered this long (0.5)\n"
	"Data is the pattern byte(i) = i % 251; a mismatch exits 3 with its offset.\n";

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s)
		goto bad;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if ((*end && *end != ',') || v == 0 || v > (1ull << 30))
		goto bad;
	return v;
bad:
	fprintf(stderr, "ringside-bench: bad size '%s'\n", s);
	exit(2);
}

/* A CID or port: a plain decimal number in [min, max], no size suffix. */
static unsigned long parse_number(const char *s, const char *what, unsigned long min,
				  unsigned long max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || *end || *s == '-' || errno || v < min || v > max) {
		fprintf(stderr, "ringside-bench: %s: bad value '%s' (%lu..%lu)\n", what, s, min,
			max);
		exit(2);
	}
	return v;
}

static double parse_double(const char *s, const char *what)
{
	char *end;
	double v = strtod(s, &end);

	if (*end || end == s || v <= 0) {
		fprintf(stderr, "ringside-bench: %s: bad value '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static void parse_sessions(struct bench_opts *o, const char *s)
{
	o->nsessions = 0;
	while (*s) {
		size_t v = parse_size(s);

		if (o->nsessions == 64 || v > 1000) {
			fprintf(stderr, "ringside-bench: --sessions: at most 64 "
					"values of at most 1000\n");
			exit(2);
		}
		o->sessions[o->nsessions++] = v;
		s = strchr(s, ',');
		if (!s)
			break;
		s++;
	}
}

static void parse_sizes(struct bench_opts *o, const char *s)
{
	o->nsizes = 0;
	while (*s) {
		if (o->nsizes == 64) {
			fprintf(stderr, "ringside-bench: at most 64 sizes\n");
			exit(2);
		}
		o->sizes[o->nsizes++] = parse_size(s);
		s = strchr(s, ',');
		if (!s)
			break;
		s++;
	}
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
					      { "trace", required_argument, NULL, 'R' },
					      { "cost-shm", required_argument, NULL, 'M' },
					      { "udp-timeout", required_argument, NULL, 'T' },
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
	};
	bool have_cid = false;
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
	o.progress = isatty(2);
	optind = 2;
	while ((opt = getopt_long(argc, argv, "s:l:P:n:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'u':
			o.uds = optarg;
			break;
		case 'X':
			o.tcp = optarg;
			break;
		case 'c':
			/* CIDs 0..2 are the hypervisor, local and the host: never a guest */
			o.cid = parse_number(optarg, "--cid", 3, 0xfffffffe);
			have_cid = true;
			break;
		case 'p':
			o.port = parse_number(optarg, "--port", 1, 0x7fffffff);
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
			o.count = parse_size(optarg);
			break;
		case 'n':
		case 'S':
			parse_sessions(&o, optarg);
			break;
		case 'R':
			o.trace = optarg;
			break;
		case 'M':
			o.cost_shm = optarg;
			break;
		case 'U':
			o.udp = optarg;
			break;
		case 'T':
			o.udp_timeout_s = parse_double(optarg, "--udp-timeout");
			break;
		case 't':
			o.time_s = parse_double(optarg, "--time");
			break;
		case 'w':
			o.warmup = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			o.len = parse_size(optarg);
			break;
		case 'P':
			o.parallel = parse_size(optarg);
			if (o.parallel > 64) {
				fprintf(stderr, "ringside-bench: -P: at most 64\n");
				return 2;
			}
			break;
		case 'd':
			if (strcmp(optarg, "h2g") && strcmp(optarg, "g2h")) {
				fprintf(stderr, "ringside-bench: --dir h2g|g2h\n");
				return 2;
			}
			o.g2h = !strcmp(optarg, "g2h");
			break;
		case 'C':
			o.cpu_pids = optarg;
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
