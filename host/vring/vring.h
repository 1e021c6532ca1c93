/* SPDX-License-Identifier: MIT */
/*
 * The device side of one virtqueue, split (virtio 1.2, 2.7) or packed
 * (virtio 1.2, 2.8), behind one interface: pop a descriptor chain as
 * iovecs into guest memory, push it back as used, decide whether the
 * driver wants a notification. Everything the driver wrote is checked:
 * indices, descriptor addresses and lengths, chain length (no loops),
 * indirect tables. A violation marks the ring broken; it is not touched
 * again until the front end sets it up anew.
 */
#ifndef HOST_VRING_VRING_H
#define HOST_VRING_VRING_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * The ring layouts, flags and feature bits are Linux's uapi definitions
 * (Debian's linux-libc-dev), so a name means what it means in Linux,
 * QEMU and DPDK. No legacy struct device_ring / vring_init.
 */
#define VIRTIO_RING_NO_LEGACY
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "guest_mem.h"
#include "iov.h"

#define VRING_MAX_SIZE 32768 /* virtio 1.2, 2.7: Queue Size <= 32768 */
/*
 * Longest chain we accept (out + in): IOV_MAX, the most one readv/sendmsg
 * takes, and what Linux's vhost allows (UIO_MAXIOV).
 */
#define VQ_MAX_SEGS 1024
#define VQ_MAX_INDIRECT 1024 /* entries in one indirect table */

struct vq_elem {
	uint16_t id; /* split: head index; packed: buffer id */
	uint16_t ndesc; /* ring descriptors the chain used (1 if indirect) */
	bool indirect; /* the chain was an indirect table */
	/*
	 * The chain broke a rule where the ring can still tell where the
	 * next one starts (a bad buffer or table behind a valid split head,
	 * or inside a packed chain whose slots are intact): it has no
	 * segments and goes back used with length 0.
	 */
	bool dropped;
	uint16_t prev_avail; /* ring position before the pop (vring_unpop) */
	bool prev_wrap;
	unsigned n_out, n_in;
	uint64_t out_len, in_len;
	struct iovec out[VQ_MAX_SEGS];
	struct iovec in[VQ_MAX_SEGS];
};

struct device_ring {
	/* set up by the front end (vhost-user messages, or a test) */
	unsigned num;
	bool packed, event_idx;
	bool indirect; /* VIRTIO_F_INDIRECT_DESC negotiated (else INDIRECT is a violation) */
	uint64_t desc_uaddr, avail_uaddr, used_uaddr;
	bool addr_set, started, enabled, broken;
	bool seen_avail; /* the driver ever made a buffer available */
	int kick_fd, call_fd, err_fd;

	/* valid while started: host pointers to the three areas */
	void *desc, *avail, *used;
	const struct guest_mem *mem;

	/* device state */
	uint16_t last_avail; /* split: free running; packed: slot */
	bool avail_wrap; /* packed only */
	uint16_t used_idx; /* split: free running; packed: slot */
	bool used_wrap; /* packed only */
	uint16_t signalled_used; /* used_idx at the last notify decision */
	bool signalled_wrap;
	bool want_notify; /* something was pushed since the last decision */
	uint64_t errors; /* driver violations seen on this ring */
};

/*
 * Every violation bumps the ring's errors and, when set, calls this hook
 * (the back end counts and logs them; tests leave it NULL).
 */
extern void (*vring_violation_hook)(const char *fmt, va_list ap);
/*
 * Called once each time a ring becomes broken (NULL: nothing), so the
 * back end can tell the front end the device needs a reset.
 */
extern void (*vring_broken_hook)(struct device_ring *vr);

/* Translate the ring areas; false (and counted) when they are not valid. */
bool vring_map(struct device_ring *vr, const struct guest_mem *mem);
/*
 * 1: one chain in *e (e->dropped: a bad one to push back with length 0);
 * 0: nothing available; -1: the ring is broken.
 */
int vring_pop(struct device_ring *vr, struct vq_elem *e);
/* Give back the most recently popped chain (it was not used). */
void vring_unpop(struct device_ring *vr, const struct vq_elem *e);
/* Mark a chain used with len bytes written into its in segments. */
void vring_push(struct device_ring *vr, const struct vq_elem *e, uint32_t len);
/* After a batch of pushes: does the driver want an interrupt? */
bool vring_need_notify(struct device_ring *vr);
/* Ask for (or suppress) driver kicks; returns true if buffers are waiting. */
bool vring_set_kicks(struct device_ring *vr, bool enable);
/* Is a buffer available (no side effects)? */
bool vring_avail_pending(struct device_ring *vr);
/* State for SET_VRING_BASE / GET_VRING_BASE (vhost-user.rst). */
void vring_set_base(struct device_ring *vr, uint32_t num);
uint32_t vring_get_base(const struct device_ring *vr);

/* internal: the two layouts */
bool vring_split_map(struct device_ring *vr);
int vring_split_pop(struct device_ring *vr, struct vq_elem *e);
void vring_split_push(struct device_ring *vr, const struct vq_elem *e, uint32_t len);
bool vring_split_need_notify(struct device_ring *vr);
bool vring_split_set_kicks(struct device_ring *vr, bool enable);
bool vring_split_avail_pending(struct device_ring *vr);
bool vring_packed_map(struct device_ring *vr);
int vring_packed_pop(struct device_ring *vr, struct vq_elem *e);
void vring_packed_push(struct device_ring *vr, const struct vq_elem *e, uint32_t len);
bool vring_packed_need_notify(struct device_ring *vr);
bool vring_packed_set_kicks(struct device_ring *vr, bool enable);
bool vring_packed_avail_pending(struct device_ring *vr);
/* internal: append a descriptor's buffer to e; false on a violation */
bool vring_elem_add(struct device_ring *vr, struct vq_elem *e, uint64_t addr, uint32_t len,
		    bool writable);
/* internal: count (and report) a driver violation on vr */
void vring_violation(struct device_ring *vr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
