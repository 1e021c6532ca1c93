// SPDX-License-Identifier: MIT
/*
 * ringside-guest-server: the services the ringside appliance offers, for a
 * Linux guest, so the same host tools measure both:
 *   port 1234 echo    returns exactly what arrived
 *   port 1235 sink    discards (all connections from one epoll loop)
 *   port 1236 source  streams pattern_byte(i) = i % 251 until the peer closes
 *   port 1237 echo    SOCK_SEQPACKET: returns each message as it came
 * Commands on stdin (the serial console), one per line:
 *   connect PORT BYTES   connect to the host (CID 2) port PORT, send BYTES
 *                        of the pattern, read them back (the host peer
 *                        echoes), print "connect PORT ok BYTES" or an error
 *   send PORT BYTES SIZE connect to the host port PORT, write BYTES of the
 *                        pattern in SIZE-byte writes (at most 64 KiB), close,
 *                        print "send PORT ok BYTES ns T" (T: CLOCK_MONOTONIC
 *                        from connected to closed) or an error; for
 *                        receivers that do not answer (vsock_perf)
 *   sconnect PORT BYTES  the same as connect over SOCK_SEQPACKET, messages of varied
 *                        sizes, each checked for length and content
 *   pktgen DSTIP DSTMAC COUNT SIZE BURST [QUEUES]
 *                        Linux's pktgen on eth0 (virtio-net, brought up as
 *                        10.0.2.15/24 without IPv6): one UDP flow to
 *                        DSTIP/DSTMAC, COUNT frames of SIZE bytes without
 *                        FCS, BURST frames per doorbell (xmit_more); QUEUES
 *                        (1) kpktgend threads, thread q on CPU q sending
 *                        its share of COUNT on transmit queue q; prints
 *                        with QUEUES > 1 "pktgen-queues: q=SENT/USEC ...",
 *                        then "pktgen-result: sent N of COUNT in U usec
 *                        P pps errors E size S burst B runs R queues Q" or
 *                        "pktgen error: ...", then "pktgen-done"
 *   udpecho              bring eth0 up as for pktgen and answer every UDP
 *                        datagram to port 7 with its payload (RFC 862,
 *                        like ringside's net/udp.c); prints "udpecho ready"
 *                        or "udpecho error: ..."
 *   rxcount              bring eth0 up as for pktgen (once) and print its
 *                        counters, the receive baseline counted at the
 *                        interface: "rxcount: ns T rx_packets N rx_bytes B
 *                        rx_dropped D rx_errors E" (T: CLOCK_MONOTONIC)
 *   queues               eth0's queues as the kernel set them up
 *                        (/sys/class/net/eth0/queues: virtio-net enables
 *                        min(device pairs, CPUs) pairs): "queues rx N tx M"
 *                        or "queues error: ..."
 *   vsocktest server|client VPORT [ARGS]
 *                        the kernel's vsock_test against the host's, its
 *                        control connection over vsock port VPORT
 *                        (vsock_test_bridge.c); prints vsock_test's lines,
 *                        then "vsocktest exit STATUS"
 *   reboot               restart the guest (tests: the back end survives)
 *   kallsyms             the kernel's and modules' text symbols from
 *                        /proc/kallsyms between "kallsyms-begin" and
 *                        "kallsyms-end" lines (cost profiles: Debian's
 *                        System.map is a stub)
 * A "ringside-linux-guest: ready" line on stdout says the ports listen.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "vsock_test_bridge.h"

#define PORT_ECHO 1234
#define PORT_SINK 1235
#define PORT_SOURCE 1236
#define PORT_SEQ_ECHO 1237
#define BUF (64 * 1024)
#define SEQ_BUF (256 * 1024)

static uint8_t pattern_byte(uint64_t i)
{
	return (uint8_t)(i % 251);
}

static void fill_pattern(uint8_t *p, size_t n, uint64_t off)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern_byte(off + i);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

static void serve(int fd, int port)
{
	static uint8_t buf[SEQ_BUF];
	uint64_t off = 0;
	ssize_t n;

	if (port == PORT_SEQ_ECHO) {
		while ((n = recv(fd, buf, SEQ_BUF, 0)) > 0)
			if (send(fd, buf, n, 0) != n)
				break;
		return;
	}
	if (port == PORT_SOURCE) {
		for (;;) {
			/* chunks start on pattern offsets: refill each time */
			fill_pattern(buf, BUF, off);
			n = write(fd, buf, BUF);
			if (n <= 0 && errno != EINTR)
				break;
			if (n > 0)
				off += n;
		}
		return;
	}
	while ((n = read(fd, buf, BUF)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (port == PORT_ECHO && write_all(fd, buf, n) < 0)
			break;
	}
}

/*
 * The backlog: vsock answers a connect as soon as it is queued, so a host
 * opening 200 sessions one after another outruns the forking acceptor.
 */
static int listen_port(int port, int type)
{
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK,
		.svm_cid = VMADDR_CID_ANY,
		.svm_port = port,
	};
	int fd = socket(AF_VSOCK, type, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 256) < 0) {
		printf("ringside-linux-guest: listen %d: %s\n", port, strerror(errno));
		exit(1);
	}
	return fd;
}

/* One process per port accepting, one per connection serving. */
static void start_service(int port, int type)
{
	int lfd = listen_port(port, type);

	if (fork() != 0) {
		close(lfd);
		return;
	}
	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			continue;
		if (fork() == 0) {
			close(lfd);
			serve(fd, port);
			_exit(0);
		}
		close(fd);
	}
}

static void do_connect(unsigned port, unsigned long long bytes)
{
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK,
		.svm_cid = VMADDR_CID_HOST,
		.svm_port = port,
	};
	static uint8_t tx[BUF], rx[BUF];
	unsigned long long sent = 0, got = 0;
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("connect %u error %s\n", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	/* send in chunks and read back as we go: the peer echoes */
	while (got < bytes) {
		if (sent < bytes) {
			size_t n = bytes - sent < BUF ? bytes - sent : BUF;

			fill_pattern(tx, n, sent);
			if (write_all(fd, tx, n) < 0)
				break;
			sent += n;
		}
		while (got < sent) {
			ssize_t n = read(fd, rx, sent - got < BUF ? sent - got : BUF);

			if (n <= 0)
				goto out;
			for (ssize_t i = 0; i < n; i++)
				if (rx[i] != pattern_byte(got + i)) {
					printf("connect %u mismatch at %llu\n", port, got + i);
					close(fd);
					return;
				}
			got += n;
		}
	}
out:
	close(fd);
	if (got == bytes)
		printf("connect %u ok %llu\n", port, got);
	else
		printf("connect %u short %llu of %llu\n", port, got, bytes);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Write only: the pattern's offset stays that of the whole connection. */
static void do_send(unsigned port, unsigned long long bytes, unsigned size)
{
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK,
		.svm_cid = VMADDR_CID_HOST,
		.svm_port = port,
	};
	static uint8_t tx[BUF + 251];
	unsigned long long sent = 0;
	uint64_t t0;
	int fd;

	if (size == 0 || size > BUF) {
		printf("send %u error SIZE must be 1..%u\n", port, BUF);
		return;
	}
	fd = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("send %u error %s\n", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fill_pattern(tx, sizeof(tx), 0);
	t0 = mono_ns();
	while (sent < bytes) {
		size_t n = bytes - sent < size ? bytes - sent : size;

		if (write_all(fd, tx + sent % 251, n) < 0)
			break;
		sent += n;
	}
	close(fd);
	if (sent == bytes)
		printf("send %u ok %llu ns %llu\n", port, sent,
		       (unsigned long long)(mono_ns() - t0));
	else
		printf("send %u error %s after %llu of %llu\n", port, strerror(errno), sent, bytes);
}

/* Messages of these sizes in turn, echoed one by one. */
static void do_sconnect(unsigned port, unsigned long long bytes)
{
	static const size_t sizes[] = { 1, 100, 4096, 5000, 70000, 44 };
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK,
		.svm_cid = VMADDR_CID_HOST,
		.svm_port = port,
	};
	static uint8_t tx[SEQ_BUF], rx[SEQ_BUF];
	unsigned long long done = 0;
	unsigned i = 0;
	int fd = socket(AF_VSOCK, SOCK_SEQPACKET, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("sconnect %u error %s\n", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	while (done < bytes) {
		size_t n = sizes[i++ % 6];
		ssize_t r;

		if (n > bytes - done)
			n = bytes - done;
		fill_pattern(tx, n, done);
		if (send(fd, tx, n, 0) != (ssize_t)n)
			break;
		r = recv(fd, rx, SEQ_BUF, 0);
		if (r != (ssize_t)n || memcmp(tx, rx, n)) {
			printf("sconnect %u bad message at %llu: %zd bytes, "
			       "want %zu\n",
			       port, done, r, n);
			close(fd);
			return;
		}
		done += n;
	}
	close(fd);
	if (done == bytes)
		printf("sconnect %u ok %llu\n", port, done);
	else
		printf("sconnect %u short %llu of %llu\n", port, done, bytes);
}

/* ------------------------------------------------------------- pktgen */

#define PG_DIR "/proc/net/pktgen"
#define PG_IF "eth0"
#define PG_SRC_IP "10.0.2.15"

static char pg_err[512];

/* Write one command to a pktgen control file; pktgen rejects bad ones
 * with a failed write (and a "Result:" line in the file). */
static int pg_write(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int pg_write(const char *file, const char *fmt, ...)
{
	char path[64], cmd[96];
	va_list ap;
	int fd, len;
	ssize_t w;

	snprintf(path, sizeof(path), PG_DIR "/%s", file);
	va_start(ap, fmt);
	len = vsnprintf(cmd, sizeof(cmd) - 1, fmt, ap);
	va_end(ap);
	if (len < 0 || len > (int)sizeof(cmd) - 2)
		len = sizeof(cmd) - 2; /* cut: the write then fails */
	/* pgctrl drops the last byte of a write: end each with a newline */
	cmd[len++] = '\n';
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		snprintf(pg_err, sizeof(pg_err), "open %s: %s", path, strerror(errno));
		return -1;
	}
	w = write(fd, cmd, len);
	if (w != len) {
		cmd[len - 1] = 0;
		snprintf(pg_err, sizeof(pg_err), "'%s' > %s: %s", cmd, path,
			 w < 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (got + 1 < size && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return 0;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, text, strlen(text));
	close(fd);
	return w == (ssize_t)strlen(text) ? 0 : -1;
}

/* eth0 up with PG_SRC_IP/24 (pktgen takes its source address from the
 * device), no IPv6 (no router solicitations or MLD reports at the peer
 * that counts frames), then wait for the carrier. */
static int eth0_up(void)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	char carrier[8];
	int fd, i;

	if (access("/sys/class/net/" PG_IF, F_OK) < 0) {
		snprintf(pg_err, sizeof(pg_err),
			 "no " PG_IF " (virtio_net "
			 "not loaded or no virtio-net device)");
		return -1;
	}
	write_text("/proc/sys/net/ipv6/conf/" PG_IF "/disable_ipv6", "1");
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		snprintf(pg_err, sizeof(pg_err), "socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, PG_IF);
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, PG_SRC_IP, &sin->sin_addr);
	if (ioctl(fd, SIOCSIFADDR, &ifr) < 0)
		goto fail;
	inet_pton(AF_INET, "255.255.255.0", &sin->sin_addr);
	if (ioctl(fd, SIOCSIFNETMASK, &ifr) < 0)
		goto fail;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		goto fail;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		goto fail;
	close(fd);
	for (i = 0; i < 200; i++) { /* 20 s */
		if (!read_text("/sys/class/net/" PG_IF "/carrier", carrier, sizeof(carrier)) &&
		    carrier[0] == '1')
			return 0;
		usleep(100000);
	}
	snprintf(pg_err, sizeof(pg_err), PG_IF " has no carrier");
	return -1;
fail:
	snprintf(pg_err, sizeof(pg_err), PG_IF " setup: %s", strerror(errno));
	close(fd);
	return -1;
}

#define PG_MAX_QUEUES 16

struct pg_result {
	unsigned long long sofar, usec, pps, errors;
};

/* CPU q's pktgen thread, kpktgend_q, as a file under PG_DIR; 0 if there is none. */
static int pg_thread(char *name, size_t size, unsigned q)
{
	char path[64];

	snprintf(name, size, "kpktgend_%u", q);
	snprintf(path, sizeof(path), PG_DIR "/%s", name);
	return access(path, F_OK) == 0;
}

/* Queue q's pktgen device: "eth0@q", on CPU q's thread kpktgend_q. */
static void pg_dev_name(char *name, size_t size, unsigned q)
{
	snprintf(name, size, PG_IF "@%u", q);
}

/* Queue q's device for one run of `count` frames at `burst`, all on
 * transmit queue q; the run before it left nothing (rem_device_all). */
static int pg_setup(unsigned q, const char *dstip, const char *dstmac, unsigned long long count,
		    unsigned size, unsigned burst)
{
	char thread[32], dev[32];

	pg_thread(thread, sizeof(thread), q);
	pg_dev_name(dev, sizeof(dev), q);
	return pg_write(thread, "add_device %s", dev) || pg_write(dev, "count %llu", count) ||
	       /* the same skb for the whole run: burst sends it `burst` times */
	       pg_write(dev, "clone_skb %llu", count) || pg_write(dev, "pkt_size %u", size) ||
	       pg_write(dev, "burst %u", burst) || pg_write(dev, "delay 0") ||
	       pg_write(dev, "flag NO_TIMESTAMP") || pg_write(dev, "queue_map_min %u", q) ||
	       pg_write(dev, "queue_map_max %u", q) || pg_write(dev, "dst %s", dstip) ||
	       pg_write(dev, "dst_mac %s", dstmac) || pg_write(dev, "udp_src_min 9") ||
	       pg_write(dev, "udp_src_max 9") || pg_write(dev, "udp_dst_min 9") ||
	       pg_write(dev, "udp_dst_max 9");
}

/* What queue q's device counted in the run that just ended. */
static int pg_result(unsigned q, struct pg_result *r)
{
	static char text[8192];
	char dev[32], path[64];
	const char *p;

	pg_dev_name(dev, sizeof(dev), q);
	snprintf(path, sizeof(path), PG_DIR "/%s", dev);
	if (read_text(path, text, sizeof(text)) < 0) {
		snprintf(pg_err, sizeof(pg_err), "read %s: %s", path, strerror(errno));
		return -1;
	}
	/* "Result: OK: U(cB+dI) usec, N (SIZEbyte,Ffrags)\n  Ppps ... errors: E" */
	p = strstr(text, "Result: OK: ");
	if (!p || sscanf(p, "Result: OK: %llu(c%*u+d%*u) usec, %llu", &r->usec, &r->sofar) != 2 ||
	    !(p = strchr(p, '\n')) || sscanf(p, " %llupps", &r->pps) != 1 ||
	    !(p = strstr(p, "errors: ")) || sscanf(p, "errors: %llu", &r->errors) != 1) {
		p = strstr(text, "Result:");
		snprintf(pg_err, sizeof(pg_err), "%s: no result: %.120s", dev, p ? p : "(none)");
		for (char *c = pg_err; *c; c++)
			if (*c == '\n')
				*c = ' ';
		return -1;
	}
	return 0;
}

/* What a queue has sent so far and what it still owes. */
struct pg_queue {
	unsigned long long want, sent, usec, errors;
	unsigned burst; /* this run's */
};

/*
 * One run: every queue that still owes frames sends on its own thread, all
 * at once ("start" returns when the last is done). Every thread's device
 * list is emptied first, those beyond QUEUES too, so nothing from a run
 * before (one with more queues among them) sends again. The run lasts as
 * long as its slowest queue: that is what *usec gains.
 */
static int pg_run(struct pg_queue *qs, unsigned queues, const char *dstip, const char *dstmac,
		  unsigned size, unsigned burst, unsigned long long *usec)
{
	unsigned long long longest = 0;
	char thread[32];

	for (unsigned q = 0; pg_thread(thread, sizeof(thread), q); q++)
		if (pg_write(thread, "rem_device_all"))
			return -1;
	for (unsigned q = 0; q < queues; q++) {
		unsigned long long r = qs[q].want - qs[q].sent;

		if (!r)
			continue;
		qs[q].burst = r < burst ? (unsigned)r : burst;
		if (pg_setup(q, dstip, dstmac, r - (qs[q].burst - 1), size, qs[q].burst))
			return -1;
	}
	if (pg_write("pgctrl", "start"))
		return -1;
	for (unsigned q = 0; q < queues; q++) {
		unsigned long long r = qs[q].want - qs[q].sent;
		struct pg_result res = { 0 };

		if (!r)
			continue;
		if (pg_result(q, &res))
			return -1;
		if (res.sofar == 0 || res.sofar > r) {
			snprintf(pg_err, sizeof(pg_err), "queue %u sent %llu of %llu missing", q,
				 res.sofar, r);
			return -1;
		}
		qs[q].sent += res.sofar;
		qs[q].usec += res.usec;
		qs[q].errors += res.errors;
		if (res.usec > longest)
			longest = res.usec;
	}
	*usec += longest;
	return 0;
}

static bool pg_owed(const struct pg_queue *qs, unsigned queues)
{
	for (unsigned q = 0; q < queues; q++)
		if (qs[q].sent < qs[q].want)
			return true;
	return false;
}

/* Each queue's share of `count`, sent by its CPU's thread: none missing. */
static int pg_check_queues(unsigned queues)
{
	char thread[32], path[64];

	if (queues == 0 || queues > PG_MAX_QUEUES) {
		snprintf(pg_err, sizeof(pg_err), "QUEUES must be 1 to %u", PG_MAX_QUEUES);
		return -1;
	}
	for (unsigned q = 0; q < queues; q++) {
		if (!pg_thread(thread, sizeof(thread), q)) {
			snprintf(pg_err, sizeof(pg_err), "no " PG_DIR "/%s: %u queues need %u CPUs",
				 thread, queues, queues);
			return -1;
		}
	}
	snprintf(path, sizeof(path), "/sys/class/net/" PG_IF "/queues/tx-%u", queues - 1);
	if (access(path, F_OK) < 0) {
		snprintf(pg_err, sizeof(pg_err), PG_IF " has fewer than %u transmit queues",
			 queues);
		return -1;
	}
	return 0;
}

static void pg_print(const struct pg_queue *qs, unsigned queues, unsigned long long count,
		     unsigned long long usec, unsigned size, unsigned burst, unsigned runs)
{
	unsigned long long sent = 0, errors = 0;

	for (unsigned q = 0; q < queues; q++) {
		sent += qs[q].sent;
		errors += qs[q].errors;
	}
	if (queues > 1) {
		printf("pktgen-queues:");
		for (unsigned q = 0; q < queues; q++)
			printf(" %u=%llu/%llu", q, qs[q].sent, qs[q].usec);
		printf("\n");
	}
	printf("pktgen-result: sent %llu of %llu in %llu usec %llu pps "
	       "errors %llu size %u burst %u runs %u queues %u\n",
	       sent, count, usec, usec ? sent * 1000000ULL / usec : 0, errors, size, burst, runs,
	       queues);
}

/*
 * pktgen counts a burst whole even past `count`: a run of n frames at burst
 * b can send up to n+b-1. So that exactly `count` go out, each run asks a
 * queue missing r frames for n = r-(b-1) at b = min(BURST, r) (with b = r
 * that is one burst of r, or less where the ring filled up), until none
 * are. Every frame goes out in bursts of at most BURST; pktgen times each
 * run, the result adds them up. With QUEUES > 1, queue q (on CPU q) owes
 * its even share of `count`, the first count % QUEUES one more.
 */
static void do_pktgen(const char *dstip, const char *dstmac, unsigned long long count,
		      unsigned size, unsigned burst, unsigned queues)
{
	struct pg_queue qs[PG_MAX_QUEUES] = { 0 };
	unsigned long long usec = 0;
	unsigned runs = 0;

	if (access(PG_DIR "/pgctrl", F_OK) < 0) {
		printf("pktgen error: no " PG_DIR "/pgctrl (pktgen module "
		       "not loaded)\n");
		goto out;
	}
	if (count == 0 || burst == 0 || size < 42) {
		printf("pktgen error: need COUNT > 0, BURST > 0, SIZE >= 42\n");
		goto out;
	}
	if (eth0_up() < 0 || pg_check_queues(queues) < 0) {
		printf("pktgen error: %s\n", pg_err);
		goto out;
	}
	for (unsigned q = 0; q < queues; q++)
		qs[q].want = count / queues + (q < count % queues);
	while (pg_owed(qs, queues)) {
		if (++runs > 100) {
			printf("pktgen error: still owing after 100 runs\n");
			goto out;
		}
		if (pg_run(qs, queues, dstip, dstmac, size, burst, &usec) < 0) {
			printf("pktgen error: %s\n", pg_err);
			goto out;
		}
	}
	pg_print(qs, queues, count, usec, size, burst, runs);
out:
	printf("pktgen-done\n");
}

/* "ADDR TYPE NAME [MODULE]" lines of code symbols only: fewer bytes on the serial line. */
static void print_text_symbols(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char sym[512];

	printf("kallsyms-begin\n");
	while (f && fgets(sym, sizeof(sym), f)) {
		char *type = strchr(sym, ' ');

		if (type && (type[1] == 't' || type[1] == 'T'))
			fputs(sym, stdout);
	}
	if (f)
		fclose(f);
	printf("kallsyms-end\n");
	fflush(stdout);
}

/*
 * /proc/interrupts between markers: benchmarks read the guest's own
 * interrupt counts (virtio queues) around a measured cell.
 */
static void print_interrupts(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[1024];

	printf("interrupts-begin\n");
	while (f && fgets(line, sizeof(line), f))
		fputs(line, stdout);
	if (f)
		fclose(f);
	printf("interrupts-end\n");
	fflush(stdout);
}

static void print_queues(void)
{
	DIR *d = opendir("/sys/class/net/" PG_IF "/queues");
	struct dirent *e;
	unsigned int rx = 0, tx = 0;

	if (!d) {
		printf("queues error: /sys/class/net/" PG_IF "/queues: %s\n", strerror(errno));
		return;
	}
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, "rx-", 3))
			rx++;
		else if (!strncmp(e->d_name, "tx-", 3))
			tx++;
	}
	closedir(d);
	printf("queues rx %u tx %u\n", rx, tx);
}

/* The UDP echo (RFC 862) on port 7, in its own process. */
static unsigned long long eth0_counter(const char *name)
{
	char path[96], text[32];

	snprintf(path, sizeof(path), "/sys/class/net/" PG_IF "/statistics/%s", name);
	return read_text(path, text, sizeof(text)) ? 0 : strtoull(text, NULL, 10);
}

static void do_rxcount(void)
{
	static int up;
	struct timespec ts;

	if (!up && eth0_up() < 0) {
		printf("rxcount error: %s\n", pg_err);
		return;
	}
	up = 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("rxcount: ns %llu rx_packets %llu rx_bytes %llu rx_dropped %llu rx_errors %llu\n",
	       (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec,
	       eth0_counter("rx_packets"), eth0_counter("rx_bytes"), eth0_counter("rx_dropped"),
	       eth0_counter("rx_errors"));
}

static void do_udpecho(void)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(7),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	static uint8_t buf[65536];
	int fd;

	if (eth0_up() < 0) {
		printf("udpecho error: %s\n", pg_err);
		return;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("udpecho error: port 7: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fork() != 0) {
		close(fd);
		printf("udpecho ready\n");
		return;
	}
	for (;;) {
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &plen);

		if (n >= 0)
			sendto(fd, buf, n, 0, (struct sockaddr *)&peer, plen);
	}
}

/*
 * The sink serves every connection from one epoll loop, as ringside's
 * services do. One process per connection made -P 4 host-to-guest
 * collapse (0.32 -> 0.08 Gb/s in total under TCG, also with the back
 * end polling): four readers woken per packet on one vCPU cost more than
 * the data. From one loop the same run scales (0.32 -> 0.46, Jain 1.0).
 */
static void start_sink(int port)
{
	static uint8_t buf[BUF];
	struct epoll_event ev = { .events = EPOLLIN }, evs[32];
	int lfd = listen_port(port, SOCK_STREAM), ep;

	if (fork() != 0) {
		close(lfd);
		return;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = lfd;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0) {
		printf("ringside-linux-guest: sink epoll: %s\n", strerror(errno));
		_exit(1);
	}
	for (;;) {
		int n = epoll_wait(ep, evs, 32, -1);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			ssize_t r;

			if (fd == lfd) {
				ev.data.fd = accept(lfd, NULL, NULL);
				if (ev.data.fd >= 0 &&
				    epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
					close(ev.data.fd);
				continue;
			}
			r = read(fd, buf, BUF);
			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				close(fd);
			}
		}
	}
}

int main(void)
{
	char line[1024]; /* vsocktest: a --skip for each of vsock_test's cases */

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_IGN); /* no zombies */
	start_service(PORT_ECHO, SOCK_STREAM);
	start_sink(PORT_SINK);
	start_service(PORT_SOURCE, SOCK_STREAM);
	start_service(PORT_SEQ_ECHO, SOCK_SEQPACKET);
	printf("ringside-linux-guest: ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		unsigned port, size, burst, queues;
		unsigned long long bytes;
		int fields;
		char ip[64], mac[64];

		if (sscanf(line, "connect %u %llu", &port, &bytes) == 2) {
			do_connect(port, bytes);
		} else if (sscanf(line, "send %u %llu %u", &port, &bytes, &size) == 3) {
			do_send(port, bytes, size);
		} else if (sscanf(line, "sconnect %u %llu", &port, &bytes) == 2) {
			do_sconnect(port, bytes);
		} else if ((fields = sscanf(line, "pktgen %63s %63s %llu %u %u %u", ip, mac, &bytes,
					    &size, &burst, &queues)) >= 5) {
			do_pktgen(ip, mac, bytes, size, burst, fields == 6 ? queues : 1);
		} else if (!strcmp(line, "kallsyms\n")) {
			print_text_symbols();
		} else if (!strcmp(line, "rxcount\n")) {
			do_rxcount();
		} else if (!strcmp(line, "interrupts\n")) {
			print_interrupts();
		} else if (!strcmp(line, "queues\n")) {
			print_queues();
		} else if (!strcmp(line, "udpecho\n")) {
			do_udpecho();
		} else if (!strncmp(line, "vsocktest ", 10)) {
			char *argv[48], *save = NULL;
			int argc = 0;

			for (char *w = strtok_r(line + 10, " \n", &save); w && argc < 48;
			     w = strtok_r(NULL, " \n", &save))
				argv[argc++] = w;
			do_vsocktest(argc, argv);
		} else if (!strcmp(line, "reboot\n")) {
			sync();
			reboot(RB_AUTOBOOT);
		} else if (line[0] != '\n')
			printf("commands: connect|sconnect PORT BYTES | send PORT BYTES SIZE | pktgen "
			       "DSTIP DSTMAC COUNT SIZE BURST [QUEUES] | udpecho | kallsyms | "
			       "interrupts | rxcount | queues | vsocktest server|client VPORT [ARGS] | "
			       "reboot\n");
	}
	for (;;)
		pause();
}
