// SPDX-License-Identifier: MIT
/*
 * ringside-guest-server: the services the ringside appliance offers, for a
 * Linux guest, so the same host tools measure both:
 *   port 1234 echo    returns exactly what arrived
 *   port 1235 sink    discards
 *   port 1236 source  streams pattern_byte(i) = i % 251 until the peer closes
 *   port 1237 echo    SOCK_SEQPACKET: returns each message as it came
 * Commands on stdin (the serial console), one per line:
 *   connect PORT BYTES   connect to the host (CID 2) port PORT, send BYTES
 *                        of the pattern, read them back (the host peer
 *                        echoes), print "connect PORT ok BYTES" or an error
 *   sconnect PORT BYTES  the same over SOCK_SEQPACKET, messages of varied
 *                        sizes, each checked for length and content
 *   reboot               restart the guest (tests: the back end survives)
 * A "ringside-linux-guest: ready" line on stdout says the ports listen.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

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

static int listen_port(int port, int type)
{
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK,
		.svm_cid = VMADDR_CID_ANY,
		.svm_port = port,
	};
	int fd = socket(AF_VSOCK, type, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 64) < 0) {
		printf("ringside-linux-guest: listen %d: %s\n", port,
		       strerror(errno));
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
					printf("connect %u mismatch at %llu\n",
					       port, got + i);
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
			       "want %zu\n", port, done, r, n);
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

int main(void)
{
	char line[128];

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_IGN);	/* no zombies */
	start_service(PORT_ECHO, SOCK_STREAM);
	start_service(PORT_SINK, SOCK_STREAM);
	start_service(PORT_SOURCE, SOCK_STREAM);
	start_service(PORT_SEQ_ECHO, SOCK_SEQPACKET);
	printf("ringside-linux-guest: ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		unsigned port;
		unsigned long long bytes;

		if (sscanf(line, "connect %u %llu", &port, &bytes) == 2) {
			do_connect(port, bytes);
		} else if (sscanf(line, "sconnect %u %llu", &port,
				  &bytes) == 2) {
			do_sconnect(port, bytes);
		} else if (!strcmp(line, "reboot\n")) {
			sync();
			reboot(RB_AUTOBOOT);
		} else if (line[0] != '\n')
			printf("commands: connect|sconnect PORT BYTES | reboot\n");
	}
	for (;;)
		pause();
}
