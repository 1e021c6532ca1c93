// SPDX-License-Identifier: MIT
/*
 * The layout-independent half of the device-side virtqueue: a thin
 * dispatcher to the vring_split/vring_packed twins, and the checks both share.
 */
#include <stdio.h>
#include <string.h>

#include "vring.h"

void (*vring_violation_hook)(const char *fmt, va_list ap);
void (*vring_broken_hook)(struct device_ring *vr);

/* From here on the ring is not touched until the front end sets it up anew. */
static void vring_mark_broken(struct device_ring *vr)
{
	if (vr->broken)
		return;
	vr->broken = true;
	if (vring_broken_hook)
		vring_broken_hook(vr);
}

void vring_violation(struct device_ring *vr, const char *fmt, ...)
{
	va_list ap;

	vr->errors++;
	if (!vring_violation_hook)
		return;
	va_start(ap, fmt);
	vring_violation_hook(fmt, ap);
	va_end(ap);
}

bool vring_map(struct device_ring *vr, const struct guest_mem *mem)
{
	vr->mem = mem;
	if (vr->num == 0 || vr->num > VRING_MAX_SIZE) {
		vring_violation(vr, "ring size %u", vr->num);
		return false;
	}
	/* virtio 1.2, 2.7: a split ring's size is a power of 2 */
	if (!vr->packed && (vr->num & (vr->num - 1))) {
		vring_violation(vr, "split ring size %u", vr->num);
		return false;
	}
	return vr->packed ? vring_packed_map(vr) : vring_split_map(vr);
}

/*
 * The front end may move the base or the size of a running ring: packed
 * positions must stay inside the ring before anything is indexed.
 */
static bool vring_usable(struct device_ring *vr)
{
	if (vr->broken)
		return false;
	if (vr->packed && (vr->last_avail >= vr->num || vr->used_idx >= vr->num)) {
		vring_violation(vr, "packed position beyond ring");
		vring_mark_broken(vr);
		return false;
	}
	return true;
}

int vring_pop(struct device_ring *vr, struct vq_elem *e)
{
	int ret;

	if (!vring_usable(vr))
		return -1;
	e->n_out = e->n_in = 0;
	e->out_len = e->in_len = 0;
	e->indirect = false;
	e->dropped = false;
	e->prev_avail = vr->last_avail;
	e->prev_wrap = vr->avail_wrap;
	ret = vr->packed ? vring_packed_pop(vr, e) : vring_split_pop(vr, e);
	if (ret > 0)
		vr->seen_avail = true;
	if (ret < 0) {
		vring_mark_broken(vr);
		vr->last_avail = e->prev_avail;
		vr->avail_wrap = e->prev_wrap;
	}
	return ret;
}

void vring_unpop(struct device_ring *vr, const struct vq_elem *e)
{
	vr->last_avail = e->prev_avail;
	vr->avail_wrap = e->prev_wrap;
}

void vring_push(struct device_ring *vr, const struct vq_elem *e, uint32_t len)
{
	if (!vring_usable(vr))
		return;
	if (vr->packed)
		vring_packed_push(vr, e, len);
	else
		vring_split_push(vr, e, len);
	vr->want_notify = true;
}

bool vring_need_notify(struct device_ring *vr)
{
	bool ret;

	if (!vr->want_notify || !vring_usable(vr))
		return false;
	vr->want_notify = false;
	ret = vr->packed ? vring_packed_need_notify(vr) : vring_split_need_notify(vr);
	vr->signalled_used = vr->used_idx;
	vr->signalled_wrap = vr->used_wrap;
	return ret;
}

bool vring_set_kicks(struct device_ring *vr, bool enable)
{
	if (!vring_usable(vr))
		return false;
	return vr->packed ? vring_packed_set_kicks(vr, enable) : vring_split_set_kicks(vr, enable);
}

bool vring_avail_pending(struct device_ring *vr)
{
	if (!vring_usable(vr))
		return false;
	return vr->packed ? vring_packed_avail_pending(vr) : vring_split_avail_pending(vr);
}

/*
 * vhost-user.rst, "Vring descriptor indices for packed virtqueues": bits
 * 0-14 last avail index, bit 15 its wrap counter, bits 16-30 the used
 * index, bit 31 its wrap counter. QEMU 7.2 sends only the low 16 bits;
 * then the used index equals the avail index (nothing was in flight).
 */
void vring_set_base(struct device_ring *vr, uint32_t num)
{
	if (!vr->packed) {
		vr->last_avail = (uint16_t)num;
		vr->used_idx = (uint16_t)num;
		vr->avail_wrap = vr->used_wrap = false;
	} else {
		vr->last_avail = num & 0x7fff;
		vr->avail_wrap = (num >> 15) & 1;
		if (num >> 16) {
			vr->used_idx = (num >> 16) & 0x7fff;
			vr->used_wrap = (num >> 31) & 1;
		} else {
			vr->used_idx = vr->last_avail;
			vr->used_wrap = vr->avail_wrap;
		}
	}
	vr->signalled_used = vr->used_idx;
	vr->signalled_wrap = vr->used_wrap;
	vr->broken = false;
}

uint32_t vring_get_base(const struct device_ring *vr)
{
	if (!vr->packed)
		return vr->last_avail;
	return (uint32_t)(vr->last_avail & 0x7fff) | (uint32_t)vr->avail_wrap << 15 |
	       (uint32_t)(vr->used_idx & 0x7fff) << 16 | (uint32_t)vr->used_wrap << 31;
}

bool vring_elem_add(struct device_ring *vr, struct vq_elem *e, uint64_t addr, uint32_t len,
		    bool writable)
{
	void *p;

	if (len == 0)
		return true;
	/* virtio 1.2, 2.7.4.2: device-writable buffers follow readable ones */
	if (!writable && e->n_in) {
		vring_violation(vr, "readable descriptor after a writable one");
		return false;
	}
	if (e->n_out + e->n_in >= VQ_MAX_SEGS) {
		vring_violation(vr, "chain over %u segments", VQ_MAX_SEGS);
		return false;
	}
	p = guest_mem_gpa(vr->mem, addr, len);
	if (!p) {
		vring_violation(vr, "buffer 0x%llx+%u outside guest memory",
				(unsigned long long)addr, len);
		return false;
	}
	if (writable) {
		e->in[e->n_in].iov_base = p;
		e->in[e->n_in++].iov_len = len;
		e->in_len += len;
	} else {
		e->out[e->n_out].iov_base = p;
		e->out[e->n_out++].iov_len = len;
		e->out_len += len;
	}
	return true;
}
