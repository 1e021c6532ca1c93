// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the back end's vhost-user front-end protocol
 * (host/vhost-vsock/vhost_user.c, QEMU docs/interop/vhost-user.rst) driven
 * by a hostile front end. The input is a stream of messages in the format
 * RINGSIDE_VU_RECORD writes (vhost_user.h): a 12-byte header, one byte
 * whose low nibble is the number of fds (bit 7 swaps their kinds), then
 * header.size payload bytes. Each message goes through vu_dispatch(), the
 * code the daemon runs once vu_readable() has read it; between messages
 * the target does what the daemon's loop does (process both rings, arm
 * kicks). A payload over VU_MAX_PAYLOAD or one the input cuts short ends
 * the connection as the socket reader would; the rest of the input is a
 * new front end on the same device.
 *
 * fds are real: a sparse memfd (dup'ed) for SET_MEM_TABLE, so the mmap
 * path runs, eventfds for the rest. Checked: no OOB or UB (ASan, UBSan);
 * every rejected message counted in vu_bad_msgs; every reply well formed
 * and the ones the protocol promises sent exactly once; after a
 * disconnect the device holds nothing: every fd handed over is closed and
 * no mapping of the guest memory is left.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host/vhost-vsock/dev.h"
#include "host/vhost-vsock/stats.h"
#include "host/vhost-vsock/vhost_user.h"

/* as large as the guests the seeds were recorded from (-m 512M) */
#define GUEST_MEM_SIZE (512ull << 20)
#define MAX_FDS_PER_INPUT 4096
#define REPLY_ACK_BIT (1ull << 3) /* VHOST_USER_PROTOCOL_F_REPLY_ACK */

static struct vsock_dev dev;

/* one front-end connection */
struct session {
	int peer; /* our end of the vhost-user socket: replies arrive here */
	int memfd; /* guest memory */
	int fds[MAX_FDS_PER_INPUT]; /* every fd handed to the device */
	unsigned nfds;
};

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

/*
 * The leak checks must be able to fail: a writable shared mapping blocks
 * F_SEAL_WRITE, a closed fd reads as closed.
 */
static void check_the_checks(void)
{
	int fd = memfd_create("fuzz-vu-check", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int copy = dup(fd);
	void *p;

	assert(fd >= 0 && copy >= 0 && ftruncate(fd, 4096) == 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, copy, 0);
	assert(p != MAP_FAILED);
	close(copy);
	assert(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) != 0 && errno == EBUSY);
	assert(fd_open(fd) && !fd_open(copy));
	munmap(p, 4096);
	assert(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) == 0);
	close(fd);
}

static void dev_init(void)
{
	check_the_checks();
	dev.epfd = epoll_create1(EPOLL_CLOEXEC);
	assert(dev.epfd >= 0);
	dev.vu_fd = dev.vu_listen_fd = dev.uds_fd = dev.uds_seq_fd = dev.sig_fd = -1;
	for (unsigned i = 0; i < 2; i++)
		dev.vq[i].kick_fd = dev.vq[i].call_fd = dev.vq[i].err_fd = -1;
	dev.guest_cid = 3;
	dev.buf_alloc = 256 * 1024;
	vring_violation_hook = stats_ring_violation;
	vsock_init(&dev);
}

static void session_start(struct session *s)
{
	int sv[2];

	assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	dev.vu_fd = sv[0];
	s->peer = sv[1];
	/* sealing (session_end) tells whether a writable mapping is left */
	s->memfd = memfd_create("fuzz-vu-guest", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert(s->memfd >= 0);
	assert(ftruncate(s->memfd, GUEST_MEM_SIZE) == 0);
	s->nfds = 0;
}

static int new_fd(struct session *s, bool memory)
{
	int fd = memory ? dup(s->memfd) : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	assert(fd >= 0 && s->nfds < MAX_FDS_PER_INPUT);
	s->fds[s->nfds++] = fd;
	return fd;
}

/* The front end went away: the device must hold nothing of it. */
static void session_end(struct session *s)
{
	vu_disconnect(&dev);
	assert(dev.vu_fd == -1 && dev.mem.nregions == 0);
	for (unsigned i = 0; i < 2; i++) {
		assert(!dev.vq_ready[i]);
		assert(dev.vq[i].kick_fd == -1 && dev.vq[i].call_fd == -1 &&
		       dev.vq[i].err_fd == -1);
	}
	close(s->peer);
	/* F_SEAL_WRITE fails with EBUSY while a shared writable mapping exists */
	if (fcntl(s->memfd, F_ADD_SEALS, F_SEAL_WRITE) != 0) {
		fprintf(stderr, "guest memory still mapped after disconnect: %s\n",
			strerror(errno));
		abort();
	}
	close(s->memfd);
	for (unsigned i = 0; i < s->nfds; i++)
		if (fd_open(s->fds[i])) {
			fprintf(stderr, "fd %d leaked after disconnect\n", s->fds[i]);
			abort();
		}
	assert(fd_open(dev.epfd));
}

/* The requests whose answer is a reply of their own (vhost-user.rst). */
static bool is_get(uint32_t request)
{
	return request == VU_GET_FEATURES || request == VU_GET_PROTOCOL_FEATURES ||
	       request == VU_GET_QUEUE_NUM || request == VU_GET_CONFIG;
}

/* Read what the device answered to m and check it. */
static void check_replies(struct session *s, const struct vu_msg *m, int ret)
{
	static uint8_t buf[2 * (sizeof(struct vu_hdr) + VU_MAX_PAYLOAD)];
	bool version_ok = (m->h.flags & 3) == VU_VERSION;
	bool ack = version_ok && !is_get(m->h.request) && m->h.request != VU_GET_VRING_BASE &&
		   (m->h.flags & VU_FLAG_NEED_REPLY) && (dev.protocol_features & REPLY_ACK_BIT);
	ssize_t n = recv(s->peer, buf, sizeof(buf), MSG_DONTWAIT);
	struct vu_hdr h;
	uint64_t status;

	if (n <= 0) {
		assert(!(version_ok && is_get(m->h.request)) && !ack);
		return;
	}
	/* one reply per message at most, whole */
	assert((size_t)n >= sizeof(h));
	memcpy(&h, buf, sizeof(h));
	assert(h.request == m->h.request && h.flags == (VU_VERSION | VU_FLAG_REPLY));
	assert((size_t)n == sizeof(h) + h.size);
	assert(version_ok);
	if (m->h.request == VU_GET_FEATURES || m->h.request == VU_GET_PROTOCOL_FEATURES ||
	    m->h.request == VU_GET_QUEUE_NUM)
		assert(h.size == 8);
	if (m->h.request == VU_GET_CONFIG)
		assert(h.size == 0 ? ret < 0 : h.size == m->h.size);
	if (ack) {
		assert(h.size == 8);
		memcpy(&status, buf + sizeof(h), 8);
		assert((status == 0) == (ret == 0));
	}
}

/* A ready ring's areas, as its layout uses them, lie in the current mapping. */
static void check_ring(unsigned i)
{
	struct device_ring *vr = &dev.vq[i];
	uint64_t n = vr->num;

	if (!dev.vq_ready[i])
		return;
	assert(vr->mem == &dev.mem && n && n <= VRING_MAX_SIZE);
	assert(vr->desc == guest_mem_uaddr(&dev.mem, vr->desc_uaddr, 16 * n));
	/* virtio 1.2, 2.7.6 and 2.7.8; 2.8.14: two 4-byte event suppression areas */
	assert(vr->avail == guest_mem_uaddr(&dev.mem, vr->avail_uaddr, vr->packed ? 4 : 6 + 2 * n));
	assert(vr->used == guest_mem_uaddr(&dev.mem, vr->used_uaddr, vr->packed ? 4 : 6 + 8 * n));
}

/* Between messages, what the daemon's loop does with ready rings. */
static void loop_pass(void)
{
	check_ring(VQ_RX);
	check_ring(VQ_TX);
	vsock_process(&dev);
	if (dev.vq_ready[VQ_RX] && dev.vq_ready[VQ_TX]) {
		vring_set_kicks(&dev.vq[VQ_TX], true);
		vring_set_kicks(&dev.vq[VQ_RX], vsock_rx_waiting(&dev));
	}
	if (dev.vq_ready[VQ_RX])
		vring_avail_pending(&dev.vq[VQ_RX]);
	vsock_reap(&dev);
}

/* One message from the input; false when the connection ends. */
static bool one_msg(struct session *s, const uint8_t **data, size_t *size)
{
	static struct vu_msg m;
	uint64_t bad;
	uint8_t fdb;
	int ret;

	if (*size < sizeof(m.h) + 1) {
		*size = 0; /* a header cut short: the reader sees end of file */
		return false;
	}
	memcpy(&m.h, *data, sizeof(m.h));
	fdb = (*data)[sizeof(m.h)];
	*data += sizeof(m.h) + 1;
	*size -= sizeof(m.h) + 1;
	/* vu_read_msg drops the front end for these two */
	if (m.h.size > *size)
		*size = 0;
	if (m.h.size > VU_MAX_PAYLOAD || *size == 0)
		return false;
	memset(&m.p, 0, sizeof(m.p));
	memcpy(&m.p, *data, m.h.size);
	*data += m.h.size;
	*size -= m.h.size;
	m.nfds = fdb & 15;
	if (m.nfds > VU_MAX_FDS)
		m.nfds = VU_MAX_FDS; /* recvmsg truncates the same way */
	for (unsigned i = 0; i < m.nfds; i++)
		m.fds[i] = new_fd(s, (m.h.request == VU_SET_MEM_TABLE) != !!(fdb & 0x80));
	bad = stats.vu_bad_msgs;
	ret = vu_dispatch(&dev, &m);
	assert(ret == 0 || ret == -1);
	if (ret < 0 && stats.vu_bad_msgs == bad) {
		fprintf(stderr, "request %u rejected but not counted\n", m.h.request);
		abort();
	}
	check_replies(s, &m, ret);
	loop_pass();
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct session s;

	if (!ready) {
		dev_init();
		ready = true;
	}
	while (size) {
		session_start(&s);
		while (one_msg(&s, &data, &size))
			;
		session_end(&s);
	}
	return 0;
}
