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
#ifndef VV_VRING_H
#define VV_VRING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "guest_mem.h"

#define VRING_MAX_SIZE 32768	/* virtio 1.2, 2.7: Queue Size <= 32768 */
#define VQ_MAX_SEGS 64		/* longest chain we accept (out + in) */
#define VQ_MAX_INDIRECT 1024	/* entries in one indirect table */

/* virtio 1.2, 2.7.5 / 2.8.x descriptor flags */
#define VRING_DESC_F_NEXT 1
#define VRING_DESC_F_WRITE 2
#define VRING_DESC_F_INDIRECT 4
#define VRING_PACKED_DESC_F_AVAIL (1 << 7)
#define VRING_PACKED_DESC_F_USED (1 << 15)

/* Feature bits (virtio 1.2, 6) */
#define VIRTIO_RING_F_INDIRECT_DESC 28
#define VIRTIO_RING_F_EVENT_IDX 29
#define VIRTIO_F_VERSION_1 32
#define VIRTIO_F_RING_PACKED 34

struct vq_elem {
	uint16_t id;		/* split: head index; packed: buffer id */
	uint16_t ndesc;		/* packed: ring slots the chain used */
	uint16_t prev_avail;	/* ring position before the pop (vring_unpop) */
	bool prev_wrap;
	unsigned n_out, n_in;
	uint64_t out_len, in_len;
	struct iovec out[VQ_MAX_SEGS];
	struct iovec in[VQ_MAX_SEGS];
};

struct vring {
	/* set up by vhost-user messages */
	unsigned num;
	bool packed, event_idx;
	uint64_t desc_uaddr, avail_uaddr, used_uaddr;
	bool addr_set, started, enabled, broken;
	bool seen_avail;	/* the driver ever made a buffer available */
	int kick_fd, call_fd, err_fd;

	/* valid while started: host pointers to the three areas */
	void *desc, *avail, *used;
	const struct guest_mem *mem;

	/* device state */
	uint16_t last_avail;	/* split: free running; packed: slot */
	bool avail_wrap;	/* packed only */
	uint16_t used_idx;	/* split: free running; packed: slot */
	bool used_wrap;		/* packed only */
	uint16_t signalled_used;	/* used_idx at the last notify decision */
	bool signalled_wrap;
	bool want_notify;	/* something was pushed since the last decision */
};

/* Translate the ring areas; false (and counted) when they are not valid. */
bool vring_map(struct vring *vr, const struct guest_mem *mem);
/* 1: one chain in *e; 0: nothing available; -1: the ring is broken. */
int vring_pop(struct vring *vr, struct vq_elem *e);
/* Give back the most recently popped chain (it was not used). */
void vring_unpop(struct vring *vr, const struct vq_elem *e);
/* Mark a chain used with len bytes written into its in segments. */
void vring_push(struct vring *vr, const struct vq_elem *e, uint32_t len);
/* After a batch of pushes: does the driver want an interrupt? */
bool vring_need_notify(struct vring *vr);
/* Ask for (or suppress) driver kicks; returns true if buffers are waiting. */
bool vring_set_kicks(struct vring *vr, bool enable);
/* Is a buffer available (no side effects)? */
bool vring_avail_pending(struct vring *vr);
/* State for SET_VRING_BASE / GET_VRING_BASE (vhost-user.rst). */
void vring_set_base(struct vring *vr, uint32_t num);
uint32_t vring_get_base(const struct vring *vr);

/* Copy between a flat buffer and an iovec list, starting at byte off. */
size_t iov_to_buf(const struct iovec *iov, unsigned n, size_t off, void *buf,
		  size_t len);
size_t buf_to_iov(const struct iovec *iov, unsigned n, size_t off,
		  const void *buf, size_t len);
/* Fill dst with the part of iov that starts at off and is at most len long. */
unsigned iov_slice(struct iovec *dst, const struct iovec *iov, unsigned n,
		   size_t off, size_t len);

/* internal: the two layouts */
bool vring_split_map(struct vring *vr);
int vring_split_pop(struct vring *vr, struct vq_elem *e);
void vring_split_push(struct vring *vr, const struct vq_elem *e, uint32_t len);
bool vring_split_need_notify(struct vring *vr);
bool vring_split_set_kicks(struct vring *vr, bool enable);
bool vring_split_avail_pending(struct vring *vr);
bool vring_packed_map(struct vring *vr);
int vring_packed_pop(struct vring *vr, struct vq_elem *e);
void vring_packed_push(struct vring *vr, const struct vq_elem *e, uint32_t len);
bool vring_packed_need_notify(struct vring *vr);
bool vring_packed_set_kicks(struct vring *vr, bool enable);
bool vring_packed_avail_pending(struct vring *vr);
/* internal: append a descriptor's buffer to e; false on a violation */
bool vring_elem_add(struct vring *vr, struct vq_elem *e, uint64_t addr,
		    uint32_t len, bool writable);

#endif
