// SPDX-License-Identifier: MIT
/*
 * The `vsock` shell command: the socket table, and guest-initiated
 * benchmarks against a host listener (ping-pong latency with the TSC,
 * stream throughput).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/services.h"
#include "kernel/io.h"
#include "kernel/poll.h"
#include "kernel/shell.h"
#include "kernel/shell_json.h"
#include "kernel/stats.h"
#include "kernel/time.h"
#include "net/vsock/vsock.h"

#define CONNECT_WAIT_NS (15ULL * 1000000000ULL)
#define IO_WAIT_NS (30ULL * 1000000000ULL)
#define MAX_PINGPONG_SIZE (1u << 20)
#define MAX_PINGPONG_COUNT 1000000u

static int parse_u64(const char *s, const char *what, uint64_t min, uint64_t max, uint64_t *out)
{
	if (config_parse_uint(s, out) || *out < min || *out > max)
		return shell_error("vsock: %s must be %llu..%llu, got '%s'", what,
				   (unsigned long long)min, (unsigned long long)max, s);
	return 0;
}

static void list_sockets(void)
{
	struct vsock_sock *s = NULL;
	unsigned int n = 0;

	printf("local cid %llu\n", (unsigned long long)vsock_local_cid());
	printf("%-6s %-10s %-11s %-16s %8s %8s %8s %8s %12s %12s %s\n", "type", "state", "local",
	       "peer", "rxq", "bufalloc", "peerfree", "fwd_cnt", "rx_bytes", "tx_bytes", "owner");
	while ((s = vsock_next(s))) {
		struct vsock_info in;
		char peer[32];

		vsock_get_info(s, &in);
		if (in.state == VSOCK_LISTEN)
			snprintf(peer, sizeof(peer), "backlog %u", in.accept_queue);
		else
			snprintf(peer, sizeof(peer), "%llu:%u", (unsigned long long)in.peer_cid,
				 in.peer_port);
		printf("%-6s %-10s %-11u %-16s %8u %8u %8u %8u %12llu %12llu %s%s%s\n",
		       in.type == VSOCK_TYPE_STREAM ? "stream" : "seqpkt",
		       vsock_state_name(in.state), in.local_port, peer, in.rx_queued, in.buf_alloc,
		       in.peer_free, in.fwd_cnt, (unsigned long long)in.rx_bytes,
		       (unsigned long long)in.tx_bytes, in.owner ? in.owner->ctx->name : "-",
		       in.on_ready ? " ready" : "", in.on_tx_wait ? " tx-wait" : "");
		n++;
	}
	printf("%u socket(s), %llu packet buffers (%llu KiB) alive, %llu pooled\n", n,
	       (unsigned long long)vsock_pkt_live(),
	       (unsigned long long)(vsock_pkt_live_bytes() >> 10),
	       (unsigned long long)vsock_pkt_pooled());
}

/* The socket table for programs: every socket's state, and the buffers alive. */
static int list_sockets_json(void)
{
	struct json_writer *w = shell_json_begin();
	struct vsock_sock *s = NULL;

	json_put_u64(w, "local_cid", vsock_local_cid());
	json_open(w, "sockets", '[');
	while ((s = vsock_next(s))) {
		struct vsock_info in;

		vsock_get_info(s, &in);
		json_open(w, NULL, '{');
		json_put_string(w, "type", in.type == VSOCK_TYPE_STREAM ? "stream" : "seqpacket");
		json_put_string(w, "state", vsock_state_name(in.state));
		json_put_u64(w, "local_port", in.local_port);
		json_put_u64(w, "peer_cid", in.peer_cid);
		json_put_u64(w, "peer_port", in.peer_port);
		json_put_u64(w, "backlog", in.accept_queue);
		json_put_u64(w, "rx_queued", in.rx_queued);
		json_put_u64(w, "rx_bytes", in.rx_bytes);
		json_put_u64(w, "tx_bytes", in.tx_bytes);
		json_close(w, '}');
	}
	json_close(w, ']');
	json_put_u64(w, "pkts_alive", vsock_pkt_live());
	json_put_u64(w, "pkt_bytes_alive", vsock_pkt_live_bytes());
	json_put_u64(w, "pkts_pooled", vsock_pkt_pooled());
	return shell_json_end("vsock");
}

static enum poll_step connect_settled(void *arg)
{
	return vsock_state(arg) == VSOCK_CONNECTING ? POLL_AGAIN : POLL_DONE;
}

static struct vsock_sock *connect_wait(uint64_t cid, uint32_t port)
{
	struct vsock_sock *s = vsock_connect(cid, port, VSOCK_TYPE_STREAM);

	if (!s) {
		shell_error("vsock: no free socket or port");
		return NULL;
	}
	poll_wait(connect_settled, s, now_ns() + CONNECT_WAIT_NS);
	if (vsock_state(s) != VSOCK_CONNECTED) {
		shell_error("vsock: connect to %llu:%u failed: %s", (unsigned long long)cid, port,
			    strerror(-vsock_error(s) ? -vsock_error(s) : ETIMEDOUT));
		vsock_close(s);
		return NULL;
	}
	return s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct round_trip {
	struct vsock_sock *s;
	uint8_t *buf;
	uint32_t size, sent, got;
	uint64_t seq;
	int error; /* set when the step gave up: the message is printed */
};

/* Send what the peer has room for, read what came back. */
static enum poll_step round_trip_step(void *arg)
{
	struct round_trip *rt = arg;
	enum poll_step step = POLL_AGAIN;

	if (rt->sent < rt->size) {
		uint32_t chunk = rt->size - rt->sent > 65536 ? 65536 : rt->size - rt->sent;
		ssize_t n = vsock_send(rt->s, vsock_pattern() + (rt->seq + rt->sent) % 251, chunk,
				       false);

		if (n > 0) {
			rt->sent += n;
			step = POLL_PROGRESS;
		} else if (n != -EAGAIN) {
			rt->error = shell_error("vsock: send failed (%d)", (int)n);
			return POLL_DONE;
		}
	}
	ssize_t r = vsock_recv(rt->s, rt->buf + rt->got, rt->size - rt->got, NULL);

	if (r > 0) {
		rt->got += r;
		return rt->got == rt->size ? POLL_DONE : POLL_PROGRESS;
	}
	if (vsock_eof(rt->s)) {
		rt->error =
			shell_error("vsock: peer closed after %u of %u bytes", rt->got, rt->size);
		return POLL_DONE;
	}
	return step;
}

/* One round trip: send @size pattern bytes, read them back, compare. */
static int round_trip(struct vsock_sock *s, uint8_t *buf, uint32_t size, uint64_t seq)
{
	struct round_trip rt = { .s = s, .buf = buf, .size = size, .seq = seq };

	if (!poll_wait(round_trip_step, &rt, now_ns() + IO_WAIT_NS))
		return shell_error("vsock: timeout after %u of %u bytes", rt.got, size);
	if (rt.error)
		return rt.error;
	for (uint32_t i = 0; i < size; i++)
		if (buf[i] != vsock_pattern_byte(seq + i))
			return shell_error("vsock: echo mismatch at byte %u", i);
	return 0;
}

static void pingpong_json(uint32_t size, uint32_t count, const uint64_t *ns, uint64_t sum)
{
	struct json_writer *w = shell_json_begin();

	json_put_u64(w, "size", size);
	json_put_u64(w, "count", count);
	json_put_u64(w, "p1", ns[count / 100]);
	json_put_u64(w, "p50", ns[count / 2]);
	json_put_u64(w, "mean", sum / count);
	json_put_u64(w, "p99", ns[count * 99 / 100]);
	json_put_u64(w, "max", ns[count - 1]);
	shell_json_end("vsock");
}

static int pingpong(uint64_t cid, uint32_t port, uint32_t size, uint32_t count, bool json)
{
	uint64_t *ns = malloc(count * sizeof(*ns)), sum = 0;
	uint8_t *buf = malloc(size);
	struct vsock_sock *s;
	int ret = -1;

	if (!ns || !buf) {
		shell_error("vsock: out of memory");
		goto out;
	}
	s = connect_wait(cid, port);
	if (!s)
		goto out;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t t0 = rdtsc();

		if (round_trip(s, buf, size, i))
			goto close;
		ns[i] = tsc_to_ns(rdtsc() - t0);
		sum += ns[i];
	}
	qsort(ns, count, sizeof(*ns), cmp_u64);
	ret = 0;
	if (json) {
		pingpong_json(size, count, ns, sum);
		goto close;
	}
	printf("pingpong %u B x %u: p1 %llu ns  p50 %llu ns  mean %llu ns  p99 %llu ns  max %llu ns\n",
	       size, count, (unsigned long long)ns[count / 100], (unsigned long long)ns[count / 2],
	       (unsigned long long)(sum / count), (unsigned long long)ns[count * 99 / 100],
	       (unsigned long long)ns[count - 1]);
	ret = 0;
close:
	vsock_close(s);
out:
	free(ns);
	free(buf);
	return ret;
}

struct stream {
	struct vsock_sock *s;
	uint32_t size;
	uint64_t bytes;
	int error;
};

static enum poll_step stream_step(void *arg)
{
	struct stream *st = arg;
	ssize_t n = vsock_send(st->s, vsock_pattern() + st->bytes % 251, st->size, false);

	if (n > 0) {
		st->bytes += n;
		return POLL_PROGRESS;
	}
	if (n == -EAGAIN)
		return POLL_AGAIN;
	st->error = shell_error("vsock: send failed (%d) after %llu bytes", (int)n,
				(unsigned long long)st->bytes);
	return POLL_DONE;
}

static int stream(uint64_t cid, uint32_t port, uint32_t size, uint32_t seconds, bool json)
{
	struct stream st = { .s = connect_wait(cid, port), .size = size };
	uint64_t start;

	if (!st.s)
		return -1;
	start = now_ns();
	poll_wait(stream_step, &st, start + seconds * 1000000000ULL);
	if (st.error) {
		vsock_close(st.s);
		return st.error;
	}
	uint64_t ns = now_ns() - start;
	double secs = ns / 1e9;

	if (json) {
		struct json_writer *w = shell_json_begin();
		int ret;

		json_put_u64(w, "size", size);
		json_put_u64(w, "bytes", st.bytes);
		json_put_u64(w, "ns", ns);
		/* printed before the close, as the text is (see the note below) */
		ret = shell_json_end("vsock");
		vsock_close(st.s);
		return ret;
	}
	printf("stream %u B writes for %.2f s: %llu bytes, %.3f Gb/s\n", size, secs,
	       (unsigned long long)st.bytes, st.bytes * 8 / secs / 1e9);
	/*
	 * Closed after the line, never right after the last write: that was
	 * seen to leave the peer 128 KiB short (vsock_perf on the nested
	 * host's vhost-vsock), queued bytes overtaken by the SHUTDOWN.
	 */
	vsock_close(st.s);
	return 0;
}

static int cmd_vsock(int argc, char **argv)
{
	bool json = shell_json_wanted(&argc, argv);
	uint64_t cid, port, size, n;

	if (argc == 1) {
		/* the next pass settles the device: a second look sees it quiet */
		vsock_settle();
		if (json)
			return list_sockets_json();
		list_sockets();
		return 0;
	}
	if (!strcmp(argv[1], "trim") && argc == 2) {
		/* the soak compares the heap without the pool's peak-sized lists */
		n = vsock_pkt_trim();
		if (json) {
			json_put_u64(shell_json_begin(), "freed", n);
			return shell_json_end("vsock");
		}
		printf("vsock: %llu pooled packet buffers freed\n", (unsigned long long)n);
		return 0;
	}
	if (strcmp(argv[1], "pingpong") && strcmp(argv[1], "stream"))
		return shell_error("vsock: unknown subcommand '%s' (pingpong, stream, trim)",
				   argv[1]);
	if (argc != 6)
		return shell_error("usage: vsock %s CID PORT SIZE %s", argv[1],
				   argv[1][0] == 'p' ? "COUNT" : "SECONDS");
	if (parse_u64(argv[2], "CID", 2, 0xfffffffe, &cid) ||
	    parse_u64(argv[3], "PORT", 0, 0xffffffff, &port))
		return -1;
	if (argv[1][0] == 'p') {
		if (parse_u64(argv[4], "SIZE", 1, MAX_PINGPONG_SIZE, &size) ||
		    parse_u64(argv[5], "COUNT", 1, MAX_PINGPONG_COUNT, &n))
			return -1;
		return pingpong(cid, port, size, n, json);
	}
	if (parse_u64(argv[4], "SIZE", 1, VSOCK_MAX_PKT_PAYLOAD, &size) ||
	    parse_u64(argv[5], "SECONDS", 1, 3600, &n))
		return -1;
	return stream(cid, port, size, n, json);
}

static void vsock_stats(void)
{
	const struct vsock_counters *c = vsock_counters();

	printf("  rx_pkts %llu rx_bytes %llu tx_pkts %llu tx_bytes %llu\n",
	       (unsigned long long)c->rx_pkts, (unsigned long long)c->rx_bytes,
	       (unsigned long long)c->tx_pkts, (unsigned long long)c->tx_bytes);
	printf("  drop: rx_no_socket %llu rx_bad_type %llu rx_over_credit %llu rx_bad_op %llu "
	       "backlog_full %llu request_no_socket %llu rst_ignored %llu rx_bad_dst_cid %llu "
	       "rx_bad_src_cid %llu\n",
	       (unsigned long long)c->rx_no_socket, (unsigned long long)c->rx_bad_type,
	       (unsigned long long)c->rx_over_credit, (unsigned long long)c->rx_bad_op,
	       (unsigned long long)c->backlog_full, (unsigned long long)c->request_no_socket,
	       (unsigned long long)c->rx_rst_ignored, (unsigned long long)c->rx_bad_dst_cid,
	       (unsigned long long)c->rx_bad_src_cid);
	printf("  credit: updates sent %llu rcvd %llu, requests sent %llu rcvd %llu\n",
	       (unsigned long long)c->credit_updates_sent,
	       (unsigned long long)c->credit_updates_rcvd,
	       (unsigned long long)c->credit_requests_sent,
	       (unsigned long long)c->credit_requests_rcvd);
	printf("  rst_sent %llu connect_timeouts %llu close_timeouts %llu tx_full %llu "
	       "smallcopy %llu transport_resets %llu compacted %llu\n",
	       (unsigned long long)c->rst_sent, (unsigned long long)c->connect_timeouts,
	       (unsigned long long)c->close_timeouts, (unsigned long long)c->tx_full,
	       (unsigned long long)c->rx_smallcopy, (unsigned long long)c->transport_resets,
	       (unsigned long long)c->rx_compacted);
}

/* The text's names; its groups ("drop:", "credit:") are objects. */
static void vsock_stats_json(struct json_writer *w)
{
	const struct vsock_counters *c = vsock_counters();

	json_put_u64(w, "rx_pkts", c->rx_pkts);
	json_put_u64(w, "rx_bytes", c->rx_bytes);
	json_put_u64(w, "tx_pkts", c->tx_pkts);
	json_put_u64(w, "tx_bytes", c->tx_bytes);
	json_open(w, "drop", '{');
	json_put_u64(w, "rx_no_socket", c->rx_no_socket);
	json_put_u64(w, "rx_bad_type", c->rx_bad_type);
	json_put_u64(w, "rx_over_credit", c->rx_over_credit);
	json_put_u64(w, "rx_bad_op", c->rx_bad_op);
	json_put_u64(w, "backlog_full", c->backlog_full);
	json_put_u64(w, "request_no_socket", c->request_no_socket);
	json_put_u64(w, "rst_ignored", c->rx_rst_ignored);
	json_put_u64(w, "rx_bad_dst_cid", c->rx_bad_dst_cid);
	json_put_u64(w, "rx_bad_src_cid", c->rx_bad_src_cid);
	json_close(w, '}');
	json_open(w, "credit", '{');
	json_put_u64(w, "updates_sent", c->credit_updates_sent);
	json_put_u64(w, "updates_rcvd", c->credit_updates_rcvd);
	json_put_u64(w, "requests_sent", c->credit_requests_sent);
	json_put_u64(w, "requests_rcvd", c->credit_requests_rcvd);
	json_close(w, '}');
	json_put_u64(w, "rst_sent", c->rst_sent);
	json_put_u64(w, "connect_timeouts", c->connect_timeouts);
	json_put_u64(w, "close_timeouts", c->close_timeouts);
	json_put_u64(w, "tx_full", c->tx_full);
	json_put_u64(w, "smallcopy", c->rx_smallcopy);
	json_put_u64(w, "transport_resets", c->transport_resets);
	json_put_u64(w, "compacted", c->rx_compacted);
}

static const struct shell_cmd vsock_cmd = {
	.name = "vsock",
	.usage = "[pingpong|stream CID PORT SIZE N | trim] [json]",
	.help = "sockets; guest-initiated ping-pong (N round trips) or stream (N seconds); "
		"trim: free the packet pool",
	.run = cmd_vsock,
};

void vsock_cmd_init(void)
{
	shell_register(&vsock_cmd);
	stats_register("vsock", vsock_stats, vsock_stats_json);
}
