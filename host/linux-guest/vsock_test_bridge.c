// SPDX-License-Identifier: MIT
/*
 * The kernel's vsock_test in the Linux guest, the host's vsock_test its
 * peer: vsock_test coordinates over a TCP control connection, and the
 * guest has no network to the host, so its control connection goes over
 * vsock. The guest's vsock_test talks TCP on the loopback to this bridge,
 * which carries the bytes to and from vsock port VPORT; the host bridges
 * that port to its own vsock_test's TCP (host/ringside/vsock_test.py).
 *
 *   vsocktest server VPORT ARGS...   vsock_test --mode=server here: the
 *                                    host connects to our vsock VPORT
 *   vsocktest client VPORT ARGS...   vsock_test --mode=client here: we
 *                                    connect to the host's vsock VPORT
 *
 * ARGS go to vsock_test (--peer-port=N, --skip=ID, ...). vsock_test's own
 * lines come out on the console; the bridge prints "vsocktest listening"
 * (server: the host may connect now) and, at the end, "vsocktest exit
 * STATUS" with vsock_test's exit status.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "vsock_test_bridge.h"

#define VSOCK_TEST "/bin/vsock_test"
#define TCP_PORT 31000 /* the guest's loopback, vsock_test's --control-port */
#define MAX_ARGS 40
#define WAIT_MS 120000 /* for the host to connect, for vsock_test to listen */

static int lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), r = -1;

	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		r = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return r;
}

static int vsock_socket(unsigned int cid, unsigned int port, bool listening)
{
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK,
		.svm_cid = cid,
		.svm_port = port,
	};
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (listening ? bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1) :
			connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int tcp_socket(bool listening)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(TCP_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (listening ? bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1) :
			connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* accept() on @lfd within WAIT_MS; -1 otherwise. @lfd is closed. */
static int accept_one(int lfd)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int fd = -1;

	if (poll(&p, 1, WAIT_MS) == 1)
		fd = accept(lfd, NULL, NULL);
	close(lfd);
	return fd;
}

/* vsock_test --mode=server listens a moment after it starts: try until it does. */
static int tcp_connect_retry(void)
{
	for (int ms = 0; ms < WAIT_MS; ms += 10) {
		int fd = tcp_socket(false);

		if (fd >= 0)
			return fd;
		usleep(10000);
	}
	return -1;
}

/* Bytes both ways until vsock_test's end closes; the host's close is passed on. */
static void relay(int tfd, int vfd)
{
	struct pollfd p[2] = { { .fd = tfd, .events = POLLIN }, { .fd = vfd, .events = POLLIN } };
	char buf[4096];

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (!p[i].revents)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				if (i == 0)
					return; /* vsock_test is done with it */
				shutdown(tfd, SHUT_WR); /* the host is: vsock_test sees EOF */
				p[1].fd = -1;
				continue;
			}
			if (write(p[!i].fd, buf, n) != n)
				return;
		}
	}
}

/* fork/exec vsock_test with @argv[0..argc) after its own options. */
static pid_t start_vsock_test(bool server, int argc, char **argv)
{
	char port[32], *args[MAX_ARGS + 8];
	int n = 0;
	pid_t pid;

	snprintf(port, sizeof(port), "--control-port=%d", TCP_PORT);
	args[n++] = VSOCK_TEST;
	args[n++] = server ? "--mode=server" : "--mode=client";
	if (!server)
		args[n++] = "--control-host=127.0.0.1";
	args[n++] = port;
	args[n++] = "--peer-cid=2";
	for (int i = 0; i < argc && i < MAX_ARGS; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		execv(VSOCK_TEST, args);
		printf("vsocktest error: exec %s: %s\n", VSOCK_TEST, strerror(errno));
		_exit(127);
	}
	return pid;
}

/* The control connection, both ends made: -1 after printing why not. */
static int control(bool server, unsigned int vport, int tcp_lfd, int *tfd)
{
	int vfd;

	if (server) {
		int lfd = vsock_socket(VMADDR_CID_ANY, vport, true);

		if (lfd < 0) {
			printf("vsocktest error: vsock listen %u: %s\n", vport, strerror(errno));
			return -1;
		}
		printf("vsocktest listening\n");
		vfd = accept_one(lfd);
		*tfd = vfd < 0 ? -1 : tcp_connect_retry();
	} else {
		*tfd = accept_one(tcp_lfd);
		vfd = *tfd < 0 ? -1 : vsock_socket(VMADDR_CID_HOST, vport, false);
	}
	if (vfd < 0 || *tfd < 0) {
		printf("vsocktest error: control connection: %s\n",
		       vfd < 0 ? "vsock" : "vsock_test's TCP");
		if (vfd >= 0)
			close(vfd);
		if (*tfd >= 0)
			close(*tfd);
		return -1;
	}
	return vfd;
}

void do_vsocktest(int argc, char **argv)
{
	bool server = argc >= 2 && !strcmp(argv[0], "server");
	int tcp_lfd = -1, tfd, vfd, status = 0;
	unsigned int vport;
	pid_t pid;

	if (argc < 2 || (!server && strcmp(argv[0], "client")) || !(vport = atoi(argv[1]))) {
		printf("vsocktest error: usage: vsocktest server|client VPORT [VSOCK_TEST_ARGS]\n");
		return;
	}
	if (lo_up() < 0 || (!server && (tcp_lfd = tcp_socket(true)) < 0)) {
		printf("vsocktest error: loopback: %s\n", strerror(errno));
		return;
	}
	/* this command's child: its status, not auto-reaped as the services are */
	signal(SIGCHLD, SIG_DFL);
	pid = start_vsock_test(server, argc - 2, argv + 2);
	vfd = pid < 0 ? -1 : control(server, vport, tcp_lfd, &tfd);
	if (vfd >= 0) {
		relay(tfd, vfd);
		close(tfd);
		close(vfd);
	} else if (pid > 0) {
		kill(pid, SIGKILL);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	signal(SIGCHLD, SIG_IGN);
	printf("vsocktest exit %d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}
