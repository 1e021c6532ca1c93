// SPDX-License-Identifier: MIT
/*
 * The back-end half of the vhost-user protocol (QEMU docs/interop/
 * vhost-user.rst) for a vsock device: the messages QEMU 7.2's
 * vhost-user-vsock-pci sends. Every message is checked for its size and
 * fds; a bad one is counted and answered with an error when the front
 * end asked for a reply, the connection stays up. Only a payload larger
 * than any valid message (the stream cannot be resynchronised) or a
 * socket error drops the front end; we then wait for the next one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/vhost_types.h>

#include "dev.h"
#include "stats.h"
#include "vhost_user.h"

#define VU_VRING_NOFD (1u << 8) /* SET_VRING_KICK/CALL/ERR: no fd */

#define VU_F_PROTOCOL_FEATURES 30
#define VU_PROTOCOL_F_MQ 0
#define VU_PROTOCOL_F_REPLY_ACK 3
#define VU_PROTOCOL_F_CONFIG 9

#define VIRTIO_VSOCK_QUEUES 2 /* rx, tx; QEMU keeps the event queue */

#define OUR_FEATURES                                                      \
	(1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_VSOCK_F_SEQPACKET |  \
	 1ull << VIRTIO_F_RING_PACKED | 1ull << VIRTIO_RING_F_EVENT_IDX | \
	 1ull << VIRTIO_RING_F_INDIRECT_DESC | 1ull << VU_F_PROTOCOL_FEATURES)
/* QEMU 7.2 refuses vhost-user-vsock without CONFIG */
#define OUR_PROTOCOL_FEATURES \
	(1ull << VU_PROTOCOL_F_MQ | 1ull << VU_PROTOCOL_F_REPLY_ACK | 1ull << VU_PROTOCOL_F_CONFIG)

/* vhost-user's ring state and addresses are the kernel vhost ones */
_Static_assert(sizeof(struct vhost_vring_state) == 8, "vhost_vring_state layout");
_Static_assert(sizeof(struct vhost_vring_addr) == 40, "vhost_vring_addr layout");

static void close_fds(struct vu_msg *m)
{
	for (unsigned i = 0; i < m->nfds; i++)
		if (m->fds[i] >= 0)
			close(m->fds[i]);
	m->nfds = 0;
}

/* Take fd i out of the message (the caller owns it then). */
static int take_fd(struct vu_msg *m, unsigned i)
{
	int fd = m->fds[i];

	m->fds[i] = -1;
	return fd;
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = recv(fd, (char *)buf + done, len - done, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

/* 0: message read; -1: the front end is gone or the stream is broken. */
static int vu_read_msg(int fd, struct vu_msg *m)
{
	char control[CMSG_SPACE(VU_MAX_FDS * sizeof(int))];
	struct iovec iov = { &m->h, sizeof(m->h) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = sizeof(control),
	};
	struct cmsghdr *cm;
	ssize_t n;

	m->nfds = 0;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		unsigned k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (unsigned i = 0; i < k && m->nfds < VU_MAX_FDS; i++)
			memcpy(&m->fds[m->nfds++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
	}
	if (mh.msg_flags & MSG_CTRUNC)
		vv_violation(&stats.vu_bad_msgs, "too many fds in a message");
	if ((size_t)n < sizeof(m->h) && read_full(fd, (char *)&m->h + n, sizeof(m->h) - n) < 0)
		goto broken;
	if (m->h.size > VU_MAX_PAYLOAD) {
		vv_violation(&stats.vu_bad_msgs, "request %u: payload of %u bytes", m->h.request,
			     m->h.size);
		goto broken;
	}
	if (m->h.size && read_full(fd, &m->p, m->h.size) < 0)
		goto broken;
	return 0;
broken:
	close_fds(m);
	return -1;
}

static void vu_send(struct vsock_dev *d, const struct vu_msg *req, const void *payload,
		    uint32_t size)
{
	struct vu_hdr h = {
		.request = req->h.request,
		.flags = VU_VERSION | VU_FLAG_REPLY,
		.size = size,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)payload, size } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	if (sendmsg(d->vu_fd, &mh, MSG_NOSIGNAL) != (ssize_t)(sizeof(h) + size))
		vv_log("vhost-user reply to %u failed", req->h.request);
}

static void vu_reply_u64(struct vsock_dev *d, const struct vu_msg *m, uint64_t v)
{
	vu_send(d, m, &v, sizeof(v));
}

/* ------------------------------------------------------------ rings */

static bool vu_rings_enabled_by_default(struct vsock_dev *d)
{
	/* vhost-user.rst "Ring states": without F_PROTOCOL_FEATURES rings
	 * start enabled, with it they wait for SET_VRING_ENABLE */
	return !(d->features & (1ull << VU_F_PROTOCOL_FEATURES));
}

void vu_update_ready(struct vsock_dev *d, unsigned idx)
{
	struct device_ring *vr = &d->vq[idx];
	bool ready = vr->started && vr->enabled && vr->addr_set && d->mem.nregions;

	if (ready && !vring_map(vr, &d->mem)) {
		vr->broken = true;
		ready = false;
	}
	if (d->vq_ready[idx] && !ready)
		vsock_stop_ring(d, idx);
	if (ready && !d->vq_ready[idx])
		d->vq_ready_ms[idx] = now_ms();
	d->vq_ready[idx] = ready;
	if (ready)
		vring_set_kicks(vr, !d->poll);
}

/*
 * A ring the guest broke (vring.h) cannot go on: the device needs a reset
 * (virtio 1.2, 2.1.2 DEVICE_NEEDS_RESET). vhost-user gives a back end no
 * status bit of its own; its channel for this is the ring's error
 * eventfd (vhost-user.rst, VHOST_USER_SET_VRING_ERR), which the front end
 * reports. The ring works again once the guest resets the device and the
 * front end sets the ring up anew (vring_set_base clears broken).
 */
void vu_ring_broken(struct device_ring *vr)
{
	uint64_t one = 1;

	stats.rings_broken++;
	vv_log("ring broken by the guest after %llu violations: the device needs a reset",
	       (unsigned long long)vr->errors);
	if (vr->err_fd >= 0 && write(vr->err_fd, &one, sizeof(one)) != sizeof(one))
		stats.host_io_errors++;
}

void vu_notify(struct vsock_dev *d, unsigned idx)
{
	uint64_t one = 1;

	if (d->vq[idx].call_fd < 0)
		return;
	if (write(d->vq[idx].call_fd, &one, sizeof(one)) == sizeof(one))
		stats.calls++;
}

static void set_kick_fd(struct vsock_dev *d, unsigned idx, int fd)
{
	struct device_ring *vr = &d->vq[idx];
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &d->ep_kick[idx] };

	if (vr->kick_fd >= 0) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, vr->kick_fd, NULL);
		close(vr->kick_fd);
	}
	vr->kick_fd = fd;
	d->vq_kicked[idx] = false;
	if (fd >= 0 && epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		vv_violation(&stats.vu_bad_msgs, "kick fd %d: %s", fd, strerror(errno));
		close(fd);
		vr->kick_fd = -1;
	}
}

static void replace_fd(int *slot, int fd)
{
	if (*slot >= 0)
		close(*slot);
	*slot = fd;
}

/* Stop a ring as GET_VRING_BASE asks; its state goes back to the caller. */
static void stop_ring(struct vsock_dev *d, unsigned idx)
{
	struct device_ring *vr = &d->vq[idx];

	if (d->vq_ready[idx])
		vsock_stop_ring(d, idx);
	d->vq_ready[idx] = false;
	vr->started = false;
	set_kick_fd(d, idx, -1);
}

static void reset_rings(struct vsock_dev *d)
{
	for (unsigned i = 0; i < VIRTIO_VSOCK_QUEUES; i++) {
		struct device_ring *vr = &d->vq[i];

		stop_ring(d, i);
		replace_fd(&vr->call_fd, -1);
		replace_fd(&vr->err_fd, -1);
		memset(vr, 0, sizeof(*vr));
		vr->kick_fd = vr->call_fd = vr->err_fd = -1;
	}
}

/* ------------------------------------------------------------ messages */

static bool want_size(struct vu_msg *m, uint32_t size)
{
	if (m->h.size == size)
		return true;
	vv_violation(&stats.vu_bad_msgs, "request %u: size %u, want %u", m->h.request, m->h.size,
		     size);
	return false;
}

static bool want_index(struct vu_msg *m, uint32_t index)
{
	if (index < VIRTIO_VSOCK_QUEUES)
		return true;
	vv_violation(&stats.vu_bad_msgs, "request %u: queue %u", m->h.request, index);
	return false;
}

/*
 * A shared mapping past the end of its file faults (SIGBUS) on the first
 * access, so a region must lie inside the file the front end sent (memfd,
 * tmpfs or hugetlbfs: regular files). One that shrinks the file later can
 * still fault us; that needs a SIGBUS handler, not a check.
 */
static bool region_in_file(int fd, const struct vu_region *r, unsigned i)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		vv_violation(&stats.vu_bad_msgs, "region %u: fd is not a memory file", i);
		return false;
	}
	if (r->mmap_offset + r->size > (uint64_t)st.st_size) {
		vv_violation(&stats.vu_bad_msgs,
			     "region %u: 0x%llx bytes at 0x%llx, file of 0x%llx", i,
			     (unsigned long long)r->size, (unsigned long long)r->mmap_offset,
			     (unsigned long long)st.st_size);
		return false;
	}
	return true;
}

static int vu_set_mem_table(struct vsock_dev *d, struct vu_msg *m)
{
	struct vu_mem *vm = &m->p.mem;
	struct guest_mem mem = { 0 };
	long page = sysconf(_SC_PAGESIZE);

	if (m->h.size < 8 || vm->nregions == 0 || vm->nregions > GUEST_MEM_MAX_REGIONS ||
	    m->h.size != 8 + vm->nregions * sizeof(struct vu_region)) {
		vv_violation(&stats.vu_bad_msgs, "SET_MEM_TABLE: size %u", m->h.size);
		return -1;
	}
	if (m->nfds != vm->nregions) {
		vv_log("SET_MEM_TABLE: %u regions but %u fds: guest memory must "
		       "be shared (memory-backend-memfd/file with share=on)",
		       vm->nregions, m->nfds);
		stats.vu_bad_msgs++;
		return -1;
	}
	for (unsigned i = 0; i < vm->nregions; i++) {
		struct vu_region *r = &vm->r[i];
		uint64_t delta = r->mmap_offset & (page - 1);
		void *p;

		if (r->size == 0 || r->gpa + r->size < r->gpa || r->uaddr + r->size < r->uaddr ||
		    r->mmap_offset + r->size < r->mmap_offset || r->size + delta < r->size) {
			vv_violation(&stats.vu_bad_msgs, "region %u bounds", i);
			goto fail;
		}
		/* ring and descriptor alignment is checked on guest addresses:
		 * it must carry over to our mapping (virtio 1.2, 2.7 and 2.8) */
		if (((r->gpa ^ r->mmap_offset) | (r->uaddr ^ r->mmap_offset)) & (page - 1)) {
			vv_violation(&stats.vu_bad_msgs, "region %u: addresses not page congruent",
				     i);
			goto fail;
		}
		if (!region_in_file(m->fds[i], r, i))
			goto fail;
		/* honour mmap_offset: QEMU maps regions above 1 MiB at one */
		p = mmap(NULL, r->size + delta, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
			 m->fds[i], r->mmap_offset - delta);
		if (p == MAP_FAILED) {
			vv_violation(&stats.vu_bad_msgs, "region %u mmap: %s", i, strerror(errno));
			goto fail;
		}
		mem.r[i] = (struct guest_region){
			.gpa = r->gpa,
			.size = r->size,
			.uaddr = r->uaddr,
			.host = (uint8_t *)p + delta,
			.map_base = p,
			.map_len = r->size + delta,
		};
		mem.nregions = i + 1;
		if (vv_verbose)
			vv_log("region %u: gpa 0x%llx size 0x%llx uaddr 0x%llx "
			       "offset 0x%llx",
			       i, (unsigned long long)r->gpa, (unsigned long long)r->size,
			       (unsigned long long)r->uaddr, (unsigned long long)r->mmap_offset);
	}
	close_fds(m);
	/* a held RX chain points into the old mapping: give it back */
	if (d->rx_held_valid) {
		vring_unpop(&d->vq[VQ_RX], &d->rx_held);
		d->rx_held_valid = false;
	}
	guest_mem_unmap(&d->mem);
	d->mem = mem;
	/* rings that were running move to the new mapping */
	for (unsigned i = 0; i < VIRTIO_VSOCK_QUEUES; i++)
		vu_update_ready(d, i);
	return 0;
fail:
	guest_mem_unmap(&mem);
	return -1;
}

static int vu_vring_fd(struct vsock_dev *d, struct vu_msg *m)
{
	unsigned idx;
	int fd = -1;

	if (!want_size(m, 8))
		return -1;
	idx = m->p.u64 & 0xff;
	if (!want_index(m, idx))
		return -1;
	/* vhost-user.rst: bits 0-7 the index, bit 8 "no fd", the rest 0 */
	if (m->p.u64 >> 9) {
		vv_violation(&stats.vu_bad_msgs, "request %u: payload 0x%llx", m->h.request,
			     (unsigned long long)m->p.u64);
		return -1;
	}
	if (!(m->p.u64 & VU_VRING_NOFD)) {
		if (m->nfds != 1) {
			vv_violation(&stats.vu_bad_msgs, "request %u: %u fds", m->h.request,
				     m->nfds);
			return -1;
		}
		fd = take_fd(m, 0);
	}
	switch (m->h.request) {
	case VU_SET_VRING_KICK:
		/* vhost-user.rst: the ring starts when its kick fd arrives */
		set_kick_fd(d, idx, fd);
		d->vq[idx].started = true;
		if (vu_rings_enabled_by_default(d))
			d->vq[idx].enabled = true;
		vu_update_ready(d, idx);
		break;
	case VU_SET_VRING_CALL:
		/* QEMU swaps call fds often: always signal the newest */
		replace_fd(&d->vq[idx].call_fd, fd);
		break;
	default:
		replace_fd(&d->vq[idx].err_fd, fd);
		break;
	}
	return 0;
}

static int vu_get_config(struct vsock_dev *d, struct vu_msg *m)
{
	struct vu_config *c = &m->p.cfg;
	uint8_t cfg[8]; /* virtio 1.2, 5.10.4: le64 guest_cid */

	if (m->h.size < 12 || m->h.size > sizeof(*c) || c->size > sizeof(c->data) ||
	    c->size != m->h.size - 12 || c->offset > sizeof(c->data)) {
		vv_violation(&stats.vu_bad_msgs, "GET_CONFIG: bad sizes");
		return -1;
	}
	memcpy(cfg, &d->guest_cid, sizeof(cfg));
	memset(c->data, 0, c->size);
	for (uint32_t i = 0; i < c->size; i++)
		if (c->offset + i < sizeof(cfg))
			c->data[i] = cfg[c->offset + i];
	vu_send(d, m, c, m->h.size);
	return 0;
}

/* Returns 0 or -1; *replied when the message was answered already. */
static int vu_handle(struct vsock_dev *d, struct vu_msg *m, bool *replied)
{
	struct device_ring *vr;

	*replied = false;
	switch (m->h.request) {
	case VU_GET_FEATURES:
		*replied = true;
		vu_reply_u64(d, m, OUR_FEATURES);
		return 0;
	case VU_SET_FEATURES:
		if (!want_size(m, 8))
			return -1;
		if (m->p.u64 & ~OUR_FEATURES) {
			vv_violation(&stats.vu_bad_msgs, "features 0x%llx",
				     (unsigned long long)m->p.u64);
			return -1;
		}
		d->features = m->p.u64;
		d->seqpacket = d->features >> VIRTIO_VSOCK_F_SEQPACKET & 1;
		for (unsigned i = 0; i < VIRTIO_VSOCK_QUEUES; i++) {
			d->vq[i].packed = d->features >> VIRTIO_F_RING_PACKED & 1;
			d->vq[i].event_idx = d->features >> VIRTIO_RING_F_EVENT_IDX & 1;
			d->vq[i].indirect = d->features >> VIRTIO_RING_F_INDIRECT_DESC & 1;
			/* a running ring changing layout is mapped anew (a split
			 * ring's areas are larger than a packed one's) */
			if (d->vq_ready[i])
				vu_update_ready(d, i);
		}
		if (vv_verbose)
			vv_log("features 0x%llx", (unsigned long long)m->p.u64);
		return 0;
	case VU_GET_PROTOCOL_FEATURES:
		*replied = true;
		vu_reply_u64(d, m, OUR_PROTOCOL_FEATURES);
		return 0;
	case VU_SET_PROTOCOL_FEATURES:
		if (!want_size(m, 8))
			return -1;
		d->protocol_features = m->p.u64 & OUR_PROTOCOL_FEATURES;
		return 0;
	case VU_SET_OWNER:
		d->owner = true;
		return 0;
	case VU_RESET_OWNER:
		reset_rings(d);
		d->owner = false;
		d->features = 0;
		return 0;
	case VU_GET_QUEUE_NUM:
		*replied = true;
		vu_reply_u64(d, m, VIRTIO_VSOCK_QUEUES);
		return 0;
	case VU_SET_MEM_TABLE:
		return vu_set_mem_table(d, m);
	case VU_SET_VRING_NUM:
		if (!want_size(m, sizeof(struct vhost_vring_state)) ||
		    !want_index(m, m->p.state.index))
			return -1;
		if (m->p.state.num == 0 || m->p.state.num > VRING_MAX_SIZE) {
			vv_violation(&stats.vu_bad_msgs, "ring size %u", m->p.state.num);
			return -1;
		}
		d->vq[m->p.state.index].num = m->p.state.num;
		/* a running ring is mapped for its old size: map it again */
		if (d->vq_ready[m->p.state.index])
			vu_update_ready(d, m->p.state.index);
		return 0;
	case VU_SET_VRING_ADDR:
		if (!want_size(m, sizeof(struct vhost_vring_addr)) ||
		    !want_index(m, m->p.addr.index))
			return -1;
		vr = &d->vq[m->p.addr.index];
		vr->desc_uaddr = m->p.addr.desc_user_addr;
		vr->avail_uaddr = m->p.addr.avail_user_addr;
		vr->used_uaddr = m->p.addr.used_user_addr;
		vr->addr_set = true;
		if (d->vq_ready[m->p.addr.index])
			vu_update_ready(d, m->p.addr.index);
		return 0;
	case VU_SET_VRING_BASE:
		if (!want_size(m, sizeof(struct vhost_vring_state)) ||
		    !want_index(m, m->p.state.index))
			return -1;
		vring_set_base(&d->vq[m->p.state.index], m->p.state.num);
		return 0;
	case VU_GET_VRING_BASE:
		if (!want_size(m, sizeof(struct vhost_vring_state)) ||
		    !want_index(m, m->p.state.index))
			return -1;
		stop_ring(d, m->p.state.index);
		m->p.state.num = vring_get_base(&d->vq[m->p.state.index]);
		*replied = true;
		vu_send(d, m, &m->p.state, sizeof(m->p.state));
		return 0;
	case VU_SET_VRING_KICK:
	case VU_SET_VRING_CALL:
	case VU_SET_VRING_ERR:
		return vu_vring_fd(d, m);
	case VU_SET_VRING_ENABLE:
		if (!want_size(m, sizeof(struct vhost_vring_state)) ||
		    !want_index(m, m->p.state.index))
			return -1;
		d->vq[m->p.state.index].enabled = m->p.state.num != 0;
		vu_update_ready(d, m->p.state.index);
		return 0;
	case VU_GET_CONFIG:
		*replied = true;
		if (vu_get_config(d, m) < 0) {
			/* vhost-user.rst: a failed GET_CONFIG replies size 0 */
			vu_send(d, m, NULL, 0);
			return -1;
		}
		return 0;
	default:
		vv_violation(&stats.vu_bad_msgs, "unsupported request %u", m->h.request);
		return -1;
	}
}

int vu_dispatch(struct vsock_dev *d, struct vu_msg *m)
{
	bool replied;
	int ret;

	stats.vu_msgs++;
	if (vv_verbose > 1)
		vv_log("request %u flags 0x%x size %u fds %u", m->h.request, m->h.flags, m->h.size,
		       m->nfds);
	if ((m->h.flags & 3) != VU_VERSION) {
		vv_violation(&stats.vu_bad_msgs, "request %u: version flags 0x%x", m->h.request,
			     m->h.flags);
		close_fds(m);
		return -1;
	}
	ret = vu_handle(d, m, &replied);
	if (m->nfds && m->h.request != VU_SET_MEM_TABLE && ret == 0) {
		for (unsigned i = 0; i < m->nfds; i++)
			if (m->fds[i] >= 0) {
				vv_violation(&stats.vu_bad_msgs, "request %u: unexpected fd",
					     m->h.request);
				break;
			}
	}
	close_fds(m);
	/* REPLY_ACK: status 0 for success, anything else for failure */
	if (!replied && (m->h.flags & VU_FLAG_NEED_REPLY) &&
	    (d->protocol_features & (1ull << VU_PROTOCOL_F_REPLY_ACK)))
		vu_reply_u64(d, m, ret == 0 ? 0 : 1);
	return ret;
}

/* ------------------------------------------------------------ recording */

static int record_fd = -1;

/* RINGSIDE_VU_RECORD (vhost_user.h): one file per front-end connection. */
static void record_open(void)
{
	const char *prefix = getenv(VU_RECORD_ENV);
	char path[4096];

	if (!prefix || !*prefix)
		return;
	snprintf(path, sizeof(path), "%s-%llu", prefix, (unsigned long long)stats.vu_connects);
	record_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (record_fd < 0)
		vv_log("%s: %s", path, strerror(errno));
}

static void record_msg(const struct vu_msg *m)
{
	uint8_t nfds = m->nfds;

	if (record_fd < 0)
		return;
	if (write(record_fd, &m->h, sizeof(m->h)) != sizeof(m->h) ||
	    write(record_fd, &nfds, 1) != 1 ||
	    write(record_fd, &m->p, m->h.size) != (ssize_t)m->h.size) {
		vv_log("recording: %s", strerror(errno));
		close(record_fd);
		record_fd = -1;
	}
}

void vu_readable(struct vsock_dev *d)
{
	struct vu_msg m;

	if (vu_read_msg(d->vu_fd, &m) < 0) {
		vu_disconnect(d);
		return;
	}
	record_msg(&m);
	vu_dispatch(d, &m);
}

void vu_accept(struct vsock_dev *d)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &d->ep_vu_conn };
	struct timeval tv = { .tv_sec = 2 };
	int fd = accept4(d->vu_listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (d->vu_fd >= 0) {
		vv_log("a second front end connected; closing it");
		stats.vu_rejected++;
		close(fd);
		return;
	}
	/* a front end that stops mid-message must not hang the loop */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return;
	}
	d->vu_fd = fd;
	stats.vu_connects++;
	record_open();
	if (vv_verbose)
		vv_log("front end connected");
}

/* The front end went away: forget everything, wait for the next one. */
void vu_disconnect(struct vsock_dev *d)
{
	if (d->vu_fd < 0)
		return;
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->vu_fd, NULL);
	close(d->vu_fd);
	d->vu_fd = -1;
	reset_rings(d);
	vsock_reset(d);
	guest_mem_unmap(&d->mem);
	d->features = d->protocol_features = 0;
	d->owner = false;
	stats.vu_disconnects++;
	if (record_fd >= 0) {
		close(record_fd);
		record_fd = -1;
	}
	if (vv_verbose)
		vv_log("front end disconnected");
}
