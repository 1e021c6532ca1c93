// SPDX-License-Identifier: MIT
/* Device side of the split virtqueue (virtio 1.2, 2.7). */
#include <string.h>

#include "vring.h"

/* The guest writes these concurrently: read each field once. */
static uint16_t load16(const void *p)
{
	return __atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE);
}

static void store16(void *p, uint16_t v)
{
	__atomic_store_n((uint16_t *)p, v, __ATOMIC_RELEASE);
}

static uint16_t *avail_flags(struct device_ring *vr)
{
	return vr->avail;
}
static uint16_t *avail_idx(struct device_ring *vr)
{
	return (uint16_t *)vr->avail + 1;
}
static uint16_t *avail_ring(struct device_ring *vr, unsigned i)
{
	return (uint16_t *)vr->avail + 2 + i;
}
/* virtio 1.2, 2.7.10: used_event follows the avail ring (Linux: vring_used_event) */
static uint16_t *used_event(struct device_ring *vr)
{
	return (uint16_t *)vr->avail + 2 + vr->num;
}
static uint16_t *used_flags(struct device_ring *vr)
{
	return vr->used;
}
static uint16_t *used_idx(struct device_ring *vr)
{
	return (uint16_t *)vr->used + 1;
}
static struct vring_used_elem *used_ring(struct device_ring *vr, unsigned i)
{
	return (struct vring_used_elem *)((uint16_t *)vr->used + 2) + i;
}
/* ... and avail_event follows the used ring */
static uint16_t *avail_event(struct device_ring *vr)
{
	return (uint16_t *)((char *)vr->used + 4 + 8 * vr->num);
}

bool vring_split_map(struct device_ring *vr)
{
	uint64_t n = vr->num;

	vr->desc = guest_mem_uaddr(vr->mem, vr->desc_uaddr, 16 * n);
	vr->avail = guest_mem_uaddr(vr->mem, vr->avail_uaddr, 6 + 2 * n);
	vr->used = guest_mem_uaddr(vr->mem, vr->used_uaddr, 6 + 8 * n);
	if (!vr->desc || !vr->avail || !vr->used) {
		vring_violation(vr, "split ring outside memory");
		return false;
	}
	/* virtio 1.2, 2.7: alignment 16/2/4 */
	if ((vr->desc_uaddr & 15) || (vr->avail_uaddr & 1) || (vr->used_uaddr & 3)) {
		vring_violation(vr, "misaligned split ring");
		return false;
	}
	return true;
}

/* Walk an indirect table (virtio 1.2, 2.7.5.3); nesting is not allowed. */
static bool split_walk_indirect(struct device_ring *vr, struct vq_elem *e,
				const struct vring_desc *d)
{
	const struct vring_desc *table;
	unsigned n, i, count = 0;

	/* 2.7.5.3.1: only when VIRTIO_F_INDIRECT_DESC was negotiated */
	if (!vr->indirect) {
		vring_violation(vr, "indirect descriptor, feature not negotiated");
		return false;
	}
	e->indirect = true;
	if ((d->len & 15) || d->len == 0 || d->len / 16 > VQ_MAX_INDIRECT) {
		vring_violation(vr, "indirect table length %u", d->len);
		return false;
	}
	n = d->len / 16;
	table = guest_mem_gpa(vr->mem, d->addr, d->len);
	if (!table) {
		vring_violation(vr, "indirect table outside memory");
		return false;
	}
	for (i = 0;;) {
		struct vring_desc t;

		/* an indirect table need not be aligned */
		memcpy(&t, &table[i], sizeof(t));

		if (t.flags & VRING_DESC_F_INDIRECT) {
			vring_violation(vr, "nested indirect");
			return false;
		}
		if (!vring_elem_add(vr, e, t.addr, t.len, t.flags & VRING_DESC_F_WRITE))
			return false;
		if (!(t.flags & VRING_DESC_F_NEXT))
			return true;
		/* n entries at most: a longer walk means a loop */
		if (++count >= n || t.next >= n) {
			vring_violation(vr, "bad indirect chain");
			return false;
		}
		i = t.next;
	}
}

/* Walk the chain from @head into @e; false on a violation (counted). */
static bool split_walk_chain(struct device_ring *vr, struct vq_elem *e, uint16_t head,
			     unsigned *count)
{
	const struct vring_desc *table = vr->desc;
	uint16_t i;

	for (i = head;;) {
		struct vring_desc d = table[i];

		if (d.flags & VRING_DESC_F_INDIRECT) {
			/*
			 * 2.7.5.3.1: INDIRECT and NEXT together are invalid,
			 * and an indirect descriptor is a chain's only one.
			 */
			if ((d.flags & VRING_DESC_F_NEXT) || *count) {
				vring_violation(vr, "indirect descriptor inside a chain");
				return false;
			}
			return split_walk_indirect(vr, e, &d);
		}
		if (!vring_elem_add(vr, e, d.addr, d.len, d.flags & VRING_DESC_F_WRITE))
			return false;
		if (!(d.flags & VRING_DESC_F_NEXT))
			return true;
		if (++*count >= vr->num || d.next >= vr->num) {
			vring_violation(vr, "bad chain from %u", head);
			return false;
		}
		i = d.next;
	}
}

int vring_split_pop(struct device_ring *vr, struct vq_elem *e)
{
	uint16_t avail = load16(avail_idx(vr));
	uint16_t head;
	unsigned count = 0;

	if (avail == vr->last_avail)
		return 0;
	/* virtio 1.2, 2.7.13.3: the driver cannot be more than num ahead */
	if ((uint16_t)(avail - vr->last_avail) > vr->num) {
		vring_violation(vr, "avail idx %u, last %u", avail, vr->last_avail);
		return -1;
	}
	head = load16(avail_ring(vr, vr->last_avail & (vr->num - 1)));
	if (head >= vr->num) {
		vring_violation(vr, "head %u >= %u", head, vr->num);
		return -1;
	}
	/*
	 * A bad chain behind a good head (a loop, a buffer outside guest
	 * memory, a bad indirect table): the index and the head still say
	 * where the next chain is, so the ring goes on. The chain comes
	 * back to the driver unread, used with length 0 (2.7.8), and the
	 * other connections keep their queue; only a bad index or head,
	 * which leave nothing to resynchronise on, stop the ring.
	 */
	if (!split_walk_chain(vr, e, head, &count)) {
		e->n_out = e->n_in = 0;
		e->out_len = e->in_len = 0;
		e->dropped = true;
	}
	e->id = head;
	e->ndesc = count + 1;
	vr->last_avail++;
	return 1;
}

void vring_split_push(struct device_ring *vr, const struct vq_elem *e, uint32_t len)
{
	struct vring_used_elem *u = used_ring(vr, vr->used_idx & (vr->num - 1));

	u->id = e->id;
	u->len = len;
	/* 2.7.8.2: the element is visible before the index moves */
	vr->used_idx++;
	store16(used_idx(vr), vr->used_idx);
}

/* virtio 1.2, 2.7.7.2: notify if used_event lies in (old, new] */
bool vring_split_need_notify(struct device_ring *vr)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!vr->event_idx)
		return !(load16(avail_flags(vr)) & VRING_AVAIL_F_NO_INTERRUPT);
	return vring_need_event(load16(used_event(vr)), vr->used_idx, vr->signalled_used);
}

bool vring_split_set_kicks(struct device_ring *vr, bool enable)
{
	if (vr->event_idx) {
		if (enable)
			store16(avail_event(vr), vr->last_avail);
	} else {
		store16(used_flags(vr), enable ? 0 : VRING_USED_F_NO_NOTIFY);
	}
	/* the flag must be visible before we look at avail idx again */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return load16(avail_idx(vr)) != vr->last_avail;
}

bool vring_split_avail_pending(struct device_ring *vr)
{
	return load16(avail_idx(vr)) != vr->last_avail;
}
