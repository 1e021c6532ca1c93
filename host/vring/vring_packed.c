// SPDX-License-Identifier: MIT
/* Device side of the packed virtqueue (virtio 1.2, 2.8). */
#include <string.h>

#include "vring.h"

static struct vring_packed_desc *ring(struct device_ring *vr)
{
	return vr->desc;
}
/* "driver area": the driver's event suppression, read by us */
static struct vring_packed_desc_event *driver_event(struct device_ring *vr)
{
	return vr->avail;
}
/* "device area": our event suppression, read by the driver */
static struct vring_packed_desc_event *device_event(struct device_ring *vr)
{
	return vr->used;
}

bool vring_packed_map(struct device_ring *vr)
{
	vr->desc = guest_mem_uaddr(vr->mem, vr->desc_uaddr, 16 * (uint64_t)vr->num);
	vr->avail = guest_mem_uaddr(vr->mem, vr->avail_uaddr, 4);
	vr->used = guest_mem_uaddr(vr->mem, vr->used_uaddr, 4);
	if (!vr->desc || !vr->avail || !vr->used) {
		vring_violation(vr, "packed ring outside memory");
		return false;
	}
	if ((vr->desc_uaddr & 15) || (vr->avail_uaddr & 3) || (vr->used_uaddr & 3)) {
		vring_violation(vr, "misaligned packed ring");
		return false;
	}
	if (vr->last_avail >= vr->num || vr->used_idx >= vr->num) {
		vring_violation(vr, "packed base beyond ring");
		return false;
	}
	return true;
}

/* 2.8.1: available when AVAIL matches our wrap counter and USED does not */
static bool desc_is_avail(uint16_t flags, bool wrap)
{
	return !!(flags & (1 << VRING_PACKED_DESC_F_AVAIL)) == wrap &&
	       !!(flags & (1 << VRING_PACKED_DESC_F_USED)) != wrap;
}

/* 2.8.19: an indirect table is a plain array, no NEXT links */
static bool packed_walk_indirect(struct device_ring *vr, struct vq_elem *e, uint64_t addr,
				 uint32_t len)
{
	const struct vring_packed_desc *table;

	/* 2.8.19: only when VIRTIO_F_INDIRECT_DESC was negotiated */
	if (!vr->indirect) {
		vring_violation(vr, "indirect descriptor, feature not negotiated");
		return false;
	}
	e->indirect = true;
	if ((len & 15) || len == 0 || len / 16 > VQ_MAX_INDIRECT) {
		vring_violation(vr, "indirect table length %u", len);
		return false;
	}
	table = guest_mem_gpa(vr->mem, addr, len);
	if (!table) {
		vring_violation(vr, "indirect table outside memory");
		return false;
	}
	for (unsigned i = 0; i < len / 16; i++) {
		struct vring_packed_desc t;

		/* an indirect table need not be aligned */
		memcpy(&t, &table[i], sizeof(t));

		if (t.flags & VRING_DESC_F_INDIRECT) {
			vring_violation(vr, "nested indirect");
			return false;
		}
		if (!vring_elem_add(vr, e, t.addr, t.len, t.flags & VRING_DESC_F_WRITE))
			return false;
	}
	return true;
}

/* One descriptor's buffers into @e; false on a violation (counted). */
static bool packed_take_desc(struct device_ring *vr, struct vq_elem *e,
			     const struct vring_packed_desc *d, unsigned n)
{
	if (!(d->flags & VRING_DESC_F_INDIRECT))
		return vring_elem_add(vr, e, d->addr, d->len, d->flags & VRING_DESC_F_WRITE);
	/* 2.8.19: an indirect descriptor is a chain's only one */
	if (n || (d->flags & VRING_DESC_F_NEXT)) {
		vring_violation(vr, "indirect descriptor inside a chain");
		return false;
	}
	return packed_walk_indirect(vr, e, d->addr, d->len);
}

int vring_packed_pop(struct device_ring *vr, struct vq_elem *e)
{
	uint16_t i = vr->last_avail, flags, id = 0;
	bool wrap = vr->avail_wrap, bad = false;
	unsigned n = 0;

	flags = __atomic_load_n(&ring(vr)[i].flags, __ATOMIC_ACQUIRE);
	if (!desc_is_avail(flags, wrap))
		return 0;
	for (;;) {
		struct vring_packed_desc d = ring(vr)[i];

		/*
		 * The driver makes the head available last (2.8.21.1), so
		 * the rest of the chain is already written, each descriptor
		 * with the avail/used bits of its own lap (2.8.1).
		 */
		if (n && !desc_is_avail(d.flags, wrap)) {
			vring_violation(vr, "descriptor %u of a chain not available", n);
			return -1;
		}
		/*
		 * A bad buffer (outside guest memory, a bad indirect table,
		 * too many segments) spoils the chain, not the ring: its
		 * slots are still known from the flags, so the walk goes on
		 * to the chain's end, mapping nothing more.
		 */
		if (!bad && !packed_take_desc(vr, e, &d, n))
			bad = true;
		/* 2.8.6: the buffer id is in the last descriptor */
		id = d.id;
		n++;
		if (++i >= vr->num) {
			i = 0;
			wrap = !wrap;
		}
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		if (n >= vr->num) {
			vring_violation(vr, "packed chain too long");
			return -1;
		}
	}
	/* as vring_split_pop: back to the driver unread, used with length 0 */
	if (bad) {
		e->n_out = e->n_in = 0;
		e->out_len = e->in_len = 0;
		e->dropped = true;
	}
	e->id = id;
	e->ndesc = n;
	vr->last_avail = i;
	vr->avail_wrap = wrap;
	return 1;
}

/* 2.8.7/2.8.9: one used descriptor per chain, then skip the chain */
void vring_packed_push(struct device_ring *vr, const struct vq_elem *e, uint32_t len)
{
	struct vring_packed_desc *d = &ring(vr)[vr->used_idx];
	uint16_t flags = 0;

	if (vr->used_wrap)
		flags = (1 << VRING_PACKED_DESC_F_AVAIL) | (1 << VRING_PACKED_DESC_F_USED);
	if (len)
		flags |= VRING_DESC_F_WRITE;
	d->id = e->id;
	d->len = len;
	__atomic_store_n(&d->flags, flags, __ATOMIC_RELEASE);
	vr->used_idx += e->ndesc;
	if (vr->used_idx >= vr->num) {
		vr->used_idx -= vr->num;
		vr->used_wrap = !vr->used_wrap;
	}
}

/* 2.8.10/2.8.14: driver event suppression, with EVENT_IDX the DESC mode */
bool vring_packed_need_notify(struct device_ring *vr)
{
	struct vring_packed_desc_event *ev = driver_event(vr);
	uint16_t flags, off_wrap, event, new, old, advanced;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	flags = __atomic_load_n(&ev->flags, __ATOMIC_ACQUIRE);
	if (flags == VRING_PACKED_EVENT_FLAG_DISABLE)
		return false;
	if (flags != VRING_PACKED_EVENT_FLAG_DESC || !vr->event_idx)
		return true;
	off_wrap = __atomic_load_n(&ev->off_wrap, __ATOMIC_ACQUIRE);
	new = vr->used_idx;
	if (vr->used_wrap == vr->signalled_wrap)
		advanced = new - vr->signalled_used;
	else
		advanced = new + vr->num - vr->signalled_used;
	old = new - advanced;
	event = off_wrap & ~(1 << VRING_PACKED_EVENT_F_WRAP_CTR);
	/* an event index from the previous lap lies num slots back */
	if (!!(off_wrap >> VRING_PACKED_EVENT_F_WRAP_CTR) != vr->used_wrap)
		event -= vr->num;
	return vring_need_event(event, new, old);
}

bool vring_packed_set_kicks(struct device_ring *vr, bool enable)
{
	uint16_t flags;

	__atomic_store_n(&device_event(vr)->flags,
			 enable ? VRING_PACKED_EVENT_FLAG_ENABLE : VRING_PACKED_EVENT_FLAG_DISABLE,
			 __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	flags = __atomic_load_n(&ring(vr)[vr->last_avail].flags, __ATOMIC_ACQUIRE);
	return desc_is_avail(flags, vr->avail_wrap);
}

bool vring_packed_avail_pending(struct device_ring *vr)
{
	uint16_t flags = __atomic_load_n(&ring(vr)[vr->last_avail].flags, __ATOMIC_ACQUIRE);

	return desc_is_avail(flags, vr->avail_wrap);
}
