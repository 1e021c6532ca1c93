// SPDX-License-Identifier: MIT
/*
 * Packed virtqueue (virtio 1.2, 2.8): one descriptor ring both sides write,
 * ownership told by the AVAIL/USED flag bits against a wrap counter each
 * side keeps (2.8.1), plus two event suppression structures (2.8.10). A
 * buffer is named by a buffer id, independent of the slots it occupies;
 * free ids form a list through virtq_chain.link.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio/virtqueue_priv.h"
#include "kernel/barrier.h"
#include "kernel/dma.h"

#define PACKED_RING_ALIGN 64

/* 2.8.1: the driver marks a descriptor available with AVAIL = its wrap
 * counter and USED = the inverse. */
static uint16_t packed_avail_flags(bool wrap)
{
	return wrap ? VIRTQ_DESC_F_AVAIL : VIRTQ_DESC_F_USED;
}

/* 2.8.1: past the last slot the driver's wrap counter flips. */
static inline __attribute__((always_inline)) void packed_next_avail(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;

	if (++p->next_avail == vq->size) {
		p->next_avail = 0;
		p->avail_wrap = !p->avail_wrap;
	}
}

/* The device marks it used with both bits equal to its wrap counter. */
static uint16_t packed_used_flags(bool wrap)
{
	return wrap ? VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED : 0;
}

#define PACKED_OWNER_MASK (VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED)

int virtq_init_packed(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;
	unsigned int i;

	/* 2.8.10.1 Structure Size and Alignment */
	p->desc = dma_alloc(sizeof(*p->desc) * vq->size, PACKED_RING_ALIGN);
	p->driver = dma_alloc(sizeof(*p->driver), PACKED_RING_ALIGN);
	p->device = dma_alloc(sizeof(*p->device), PACKED_RING_ALIGN);
	if (!p->desc || !p->driver || !p->device) {
		virtq_free_packed(vq);
		return -ENOMEM;
	}
	for (i = 0; i < vq->size; i++)
		vq->chain[i].link = (uint16_t)(i + 1);
	p->free_id = 0;
	/* 2.8.1: both wrap counters start at 1; zeroed flags read "not
	 * available" and "not used" against them. */
	p->avail_wrap = true;
	p->used_wrap = true;
	/* Interrupt mode from the start; with EVENT_IDX, for slot 0. */
	p->event_flags = RING_EVENT_FLAGS_ENABLE;
	if (vq->event_idx) {
		p->driver->off_wrap = 1 << RING_EVENT_WRAP_SHIFT;
		p->event_flags = RING_EVENT_FLAGS_DESC;
		p->driver->flags = p->event_flags;
	}
	return 0;
}

void virtq_free_packed(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;

	if (p->desc)
		dma_free(p->desc);
	if (p->driver)
		dma_free(p->driver);
	if (p->device)
		dma_free(p->device);
}

static void packed_fill_desc(struct virtq_packed_desc *d, const struct vbuf *b, uint16_t id)
{
	d->addr = virt_to_phys(b->addr);
	d->len = b->len;
	d->id = id;
}

/*
 * 2.8.7 Indirect Flag: the table holds packed descriptors read in order;
 * WRITE is the only flag allowed in it (2.8.19), ids are ignored.
 */
static struct virtq_packed_desc *packed_indirect_table(struct virtq *vq, uint16_t id,
						       const struct vbuf *out, unsigned int n_out,
						       const struct vbuf *in, unsigned int n_in)
{
	unsigned int total = n_out + n_in, i;
	struct virtq_packed_desc *table;

	table = virtq_table_alloc(vq, id, total);
	if (!table)
		return NULL;
	/* a table is reused (virtq_table_alloc): every flag is written */
	for (i = 0; i < n_out; i++) {
		packed_fill_desc(&table[i], &out[i], 0);
		table[i].flags = 0;
	}
	for (i = 0; i < n_in; i++) {
		packed_fill_desc(&table[n_out + i], &in[i], 0);
		table[n_out + i].flags = VIRTQ_DESC_F_WRITE;
	}
	return table;
}

/*
 * 2.8.21.1 Placing Available Buffers Into The Descriptor Ring. Every
 * descriptor but the head gets its flags now; the head's flags are
 * returned for the caller to write last, so the device never sees part of
 * a chain (2.8.6). A chain may wrap the ring; descriptors after the wrap
 * carry the flipped counter.
 */
static uint16_t packed_place_chain(struct virtq_packed *p, uint16_t size, uint16_t id,
				   const struct vbuf *out, unsigned int n_out,
				   const struct vbuf *in, unsigned int n_in)
{
	unsigned int total = n_out + n_in, k;
	uint16_t slot = p->next_avail, flags, head_flags = 0;
	bool wrap = p->avail_wrap;

	for (k = 0; k < total; k++) {
		flags = packed_avail_flags(wrap);
		if (k + 1 < total)
			flags |= VIRTQ_DESC_F_NEXT;
		if (k < n_out) {
			packed_fill_desc(&p->desc[slot], &out[k], id);
		} else {
			packed_fill_desc(&p->desc[slot], &in[k - n_out], id);
			flags |= VIRTQ_DESC_F_WRITE;
		}
		if (k == 0)
			head_flags = flags;
		else
			WRITE_ONCE(p->desc[slot].flags, flags);
		if (++slot == size) {
			slot = 0;
			wrap = !wrap;
		}
	}
	p->next_avail = slot;
	p->avail_wrap = wrap;
	return head_flags;
}

int virtq_add_packed(struct virtq *vq, const struct vbuf *out, unsigned int n_out,
		     const struct vbuf *in, unsigned int n_in, void *token, bool indirect)
{
	struct virtq_packed *p = &vq->packed;
	struct virtq_packed_desc *table = NULL;
	unsigned int need = n_out + n_in;
	uint16_t id = p->free_id, head = p->next_avail, head_flags;
	struct virtq_chain *c;

	if (indirect && vq->num_free > 0)
		table = packed_indirect_table(vq, id, out, n_out, in, n_in);
	if (table)
		need = 1;
	/* Every buffer takes a slot, so a free slot implies a free id. */
	if (vq->num_free < need) {
		virtq_table_free(vq, table);
		return -ENOSPC;
	}

	if (table) {
		struct vbuf tb = { table, sizeof(*table) * (n_out + n_in) };

		packed_fill_desc(&p->desc[head], &tb, id);
		head_flags = packed_avail_flags(p->avail_wrap) | VIRTQ_DESC_F_INDIRECT;
		packed_next_avail(vq);
		vq->stats.indirect++;
	} else {
		head_flags = packed_place_chain(p, vq->size, id, out, n_out, in, n_in);
	}

	c = &vq->chain[id];
	p->free_id = c->link;
	c->token = token;
	c->indirect = table;
	c->in_len = virtq_in_len(in, n_in);
	c->ndescs = need;
	if (need > 1)
		p->multi_slot++;
	vq->num_free -= need;
	p->pending += need;
	vq->num_added += need;

	/* 2.8.21.1.1: the rest of the chain is visible before the head. */
	virt_wmb();
	WRITE_ONCE(p->desc[head].flags, head_flags);
	return 0;
}

/*
 * 2.8.21.1 for a buffer of one descriptor, the common case (vsock RX
 * buffers and TX packets): no chain to place, never indirect
 * (chain.indirect is already NULL for a free id).
 */
void virtq_add_one_packed(struct virtq *vq, void *addr, uint32_t len, uint16_t flags, void *token)
{
	struct virtq_packed *p = &vq->packed;
	uint16_t id = p->free_id, head = p->next_avail;
	struct virtq_packed_desc *d = &p->desc[head];
	struct virtq_chain *c;

	d->addr = virt_to_phys(addr);
	d->len = len;
	d->id = id;
	flags |= packed_avail_flags(p->avail_wrap);
	packed_next_avail(vq);
	c = &vq->chain[id];
	p->free_id = c->link;
	c->token = token;
	c->in_len = virtq_one_in_len(len, flags);
	c->ndescs = 1;
	vq->num_free--;
	p->pending++;
	vq->num_added++;
	vq->stats.added++;
	/* 2.8.21.1.1: addr, len and id are visible before the flags. */
	virt_wmb();
	WRITE_ONCE(d->flags, flags);
}

/* 2.8.21.2 Sending Available Buffer Notifications, with 2.8.10. */
static bool packed_kick_needed(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;
	uint16_t new_idx = p->next_avail;
	uint16_t old_idx = (uint16_t)(new_idx - vq->num_added);
	struct virtq_packed_event ev;
	uint32_t word;
	uint16_t event;

	/* 2.8.21.3.1: descriptors visible before reading the device's wish. */
	virt_mb();
	/* One 32-bit read so off_wrap and flags belong together. */
	word = *(const volatile uint32_t *)(uintptr_t)p->device;
	memcpy(&ev, &word, sizeof(ev));
	if (ev.flags == RING_EVENT_FLAGS_DISABLE)
		return false;
	/* ENABLE, the reserved value, or DESC without EVENT_IDX: kick. */
	if (ev.flags != RING_EVENT_FLAGS_DESC || !vq->event_idx)
		return true;
	/* More than a lap since the last check: positions are ambiguous. */
	if (vq->num_added >= vq->size)
		return true;
	/*
	 * Place the event on the same line as old..new: an event in the lap
	 * before the current wrap counter sits size slots further back
	 * (new_idx - num_added is negative, modulo 2^16, the same way).
	 */
	event = ev.off_wrap & RING_EVENT_OFF_MASK;
	if ((bool)(ev.off_wrap >> RING_EVENT_WRAP_SHIFT) != p->avail_wrap)
		event -= vq->size;
	return virtq_need_event(event, new_idx, old_idx);
}

/* kick_prepare once something was added. */
static bool packed_kick_decide(struct virtq *vq)
{
	bool need = packed_kick_needed(vq);

	vq->num_added = 0;
	if (!need)
		vq->stats.kicks_suppressed++;
	return need;
}

bool virtq_kick_prepare_packed(struct virtq *vq)
{
	return vq->num_added && packed_kick_decide(vq);
}

/* kick_prepare + notify for the inline virtq_kick, which checked num_added. */
bool virtq_kick_packed(struct virtq *vq)
{
	if (!packed_kick_decide(vq))
		return false;
	virtq_notify(vq);
	return true;
}

static void packed_skip(struct virtq *vq, uint16_t n)
{
	struct virtq_packed *p = &vq->packed;

	p->pending -= n;
	p->last_used += n;
	if (p->last_used >= vq->size) {
		p->last_used -= vq->size;
		p->used_wrap = !p->used_wrap;
	}
}

/*
 * 2.8.10: with EVENT_IDX, ask for an interrupt when the device writes the
 * next used element (off_wrap = where it will appear).
 */
static void packed_update_used_event(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;

	WRITE_ONCE(p->driver->off_wrap,
		   (uint16_t)(p->last_used | (uint16_t)p->used_wrap << RING_EVENT_WRAP_SHIFT));
	vq->irqs_asked = vq->stats.interrupts;
}

/* Hand buffer @id back: its slots are already skipped. Inline: a call per buffer less. */
static inline __attribute__((always_inline)) void *packed_release(struct virtq *vq, uint16_t id,
								  uint32_t used_len, uint32_t *len)
{
	struct virtq_chain *c = &vq->chain[id];
	void *token = c->token;

	c->token = NULL;
	used_len = virtq_used_len(vq, c, used_len);
	if (len)
		*len = used_len;
	vq->num_free += c->ndescs;
	if (c->ndescs > 1)
		vq->packed.multi_slot--;
	c->link = vq->packed.free_id;
	vq->packed.free_id = id;
	vq->stats.completed++;
	if (c->indirect)
		return virtq_free_indirect(vq, c, token);
	return token;
}

/*
 * A used element at last_used that names no buffer we can account for.
 * 2.8.6: the device writes the next element after the slots of the chain
 * it completed; with only one-slot buffers that is the next slot, so skip
 * one (the buffer is lost, counted: virtq_count_lost). With a multi-slot chain in flight
 * the next element may sit anywhere up to that chain's length further on:
 * skipping one slot lands inside the chain, on a descriptor still marked
 * available, and the queue would wait there forever. Stop the queue
 * instead and let the driver reset the device. False: broken.
 */
static bool packed_skip_garbled(struct virtq *vq)
{
	if (vq->packed.multi_slot) {
		virtq_mark_broken(vq);
		return false;
	}
	packed_skip(vq, 1);
	return virtq_count_lost(vq);
}

/*
 * The slot at last_used when the device holds nothing: flags other than
 * "used in the previous lap" mean the device wrote a used element for a
 * buffer that does not exist. The slot is ours, so reset it to the stale
 * pattern and count the write once.
 */
static void packed_check_idle_slot(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;
	struct virtq_packed_desc *d = &p->desc[p->last_used];
	uint16_t own = READ_ONCE(d->flags) & PACKED_OWNER_MASK;

	if (own != packed_used_flags(p->used_wrap))
		return;
	vq->stats.bad_completions++;
	WRITE_ONCE(d->flags, packed_used_flags(!p->used_wrap));
}

/*
 * 2.8.2: is there a used element at last_used? Flags that are neither
 * "available" nor "used" for our wrap counter are broken: count, skip
 * the slot and look again.
 */
static bool packed_next_used(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;
	uint16_t own;

	for (;;) {
		if (!p->pending) {
			packed_check_idle_slot(vq);
			return false;
		}
		own = READ_ONCE(p->desc[p->last_used].flags) & PACKED_OWNER_MASK;
		if (own == packed_used_flags(p->used_wrap))
			break;
		if (own == packed_avail_flags(p->used_wrap))
			return false; /* still the device's */
		if (!packed_skip_garbled(vq))
			return false;
	}
	/* Read id and len only after the flags say used. */
	virt_rmb();
	return true;
}

/* 2.8.10: with EVENT_IDX, the interrupt we want is for the next slot. */
static void packed_after_used(struct virtq *vq)
{
	if (vq->event_idx && vq->packed.event_flags == RING_EVENT_FLAGS_DESC) {
		packed_update_used_event(vq);
		/* Before the next flags read, or an interrupt is lost. */
		virt_mb();
	}
}

/* The whole walk: garbled elements, the idle slot check. */
static __attribute__((noinline)) void *packed_get_used_slow(struct virtq *vq, uint32_t *len)
{
	struct virtq_packed *p = &vq->packed;
	struct virtq_packed_desc *d;
	uint32_t used_len;
	void *token;
	uint16_t id;

	for (;;) {
		if (!packed_next_used(vq))
			return NULL;
		d = &p->desc[p->last_used];
		id = READ_ONCE(d->id);
		used_len = READ_ONCE(d->len);
		/* The id must be in flight and its slots must all be pending. */
		if (id >= vq->size || !vq->chain[id].token || vq->chain[id].ndescs > p->pending) {
			if (!packed_skip_garbled(vq))
				return NULL;
			token = NULL;
		} else {
			/* 2.8.6: the device skips the rest of the chain; so do we. */
			packed_skip(vq, vq->chain[id].ndescs);
			token = packed_release(vq, id, used_len, len);
		}
		packed_after_used(vq);
		if (token)
			return token;
	}
}

/*
 * 2.8.22 Receiving Used Buffers From The Device. The common cases, a
 * used element naming a buffer in flight and the slot still the
 * device's, take no call but to what they free; anything else (nothing
 * pending, flags neither used nor available, an id not in flight) is
 * looked at again by the whole walk, which counts and skips.
 */
void *virtq_get_used_packed(struct virtq *vq, uint32_t *len)
{
	struct virtq_packed *p = &vq->packed;
	struct virtq_packed_desc *d = &p->desc[p->last_used];
	const struct virtq_chain *c;
	uint32_t used_len;
	uint16_t own, id;

	if (vq->broken)
		return NULL;
	if (!p->pending)
		return packed_get_used_slow(vq, len);
	own = READ_ONCE(d->flags) & PACKED_OWNER_MASK;
	if (own == packed_avail_flags(p->used_wrap))
		return NULL; /* still the device's */
	if (own != packed_used_flags(p->used_wrap))
		return packed_get_used_slow(vq, len);
	/* Read id and len only after the flags say used. */
	virt_rmb();
	id = READ_ONCE(d->id);
	used_len = READ_ONCE(d->len);
	if (id >= vq->size)
		return packed_get_used_slow(vq, len);
	c = &vq->chain[id];
	if (!c->token || c->ndescs > p->pending)
		return packed_get_used_slow(vq, len);
	/* 2.8.6: the device skips the rest of the chain; so do we. */
	packed_skip(vq, c->ndescs);
	packed_after_used(vq);
	return packed_release(vq, id, used_len, len);
}

bool virtq_has_used_packed(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;
	uint16_t own;

	if (vq->broken)
		return false;
	own = READ_ONCE(p->desc[p->last_used].flags) & PACKED_OWNER_MASK;
	/* With buffers pending, anything but "available" needs a look. */
	if (p->pending)
		return own != packed_avail_flags(p->used_wrap);
	return own == packed_used_flags(p->used_wrap);
}

/* 2.8.10: driver event flags DISABLE = no used buffer notifications. */
void virtq_disable_cb_packed(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;

	if (p->event_flags != RING_EVENT_FLAGS_DISABLE) {
		p->event_flags = RING_EVENT_FLAGS_DISABLE;
		WRITE_ONCE(p->driver->flags, p->event_flags);
	}
}

/*
 * Interrupt mode again (DESC at the next used slot with EVENT_IDX, else
 * ENABLE), then re-check after a full barrier for elements the device
 * wrote while it still saw DISABLE.
 */
bool virtq_enable_cb_packed(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;
	uint16_t want = RING_EVENT_FLAGS_ENABLE;

	if (vq->event_idx) {
		packed_update_used_event(vq);
		/* off_wrap before the flags that make the device read it. */
		virt_wmb();
		want = RING_EVENT_FLAGS_DESC;
	}
	if (p->event_flags != want) {
		p->event_flags = want;
		WRITE_ONCE(p->driver->flags, want);
	}
	vq->irqs_asked = vq->stats.interrupts;
	virt_mb();
	return !virtq_has_used_packed(vq);
}

/*
 * 2.8.10: the device notifies for a used element while the driver's
 * flags say ENABLE, or DESC with off_wrap naming the element it writes:
 * the one at last_used, the first the driver has not taken.
 */
bool virtq_notification_owed_packed(struct virtq *vq)
{
	struct virtq_packed *p = &vq->packed;
	uint16_t flags, at;

	if (!virtq_has_used_packed(vq))
		return false;
	flags = READ_ONCE(p->driver->flags);
	if (flags == RING_EVENT_FLAGS_ENABLE)
		return true;
	at = (uint16_t)(p->last_used | (uint16_t)p->used_wrap << RING_EVENT_WRAP_SHIFT);
	return flags == RING_EVENT_FLAGS_DESC && READ_ONCE(p->driver->off_wrap) == at;
}

/*
 * ---- Fixed layout (virtqueue.h): buffer id i is the driver's slot i ----
 *
 * Every buffer is one slot, so a garbled element is always skippable
 * (multi_slot stays 0). The id free list above is not used: the driver
 * owns which ids are free, and @bufs says what each id's descriptor holds.
 */

/*
 * Buffer @id into descriptor @d, flags included (@flags_word: the flags
 * shifted to bits 48..63): len, id and the zero pad of @b are the
 * descriptor's second word (little-endian, as the ring is: 2.8.13), one
 * load and one store.
 */
static void packed_fixed_put(struct virtq_packed_desc *d, const struct virtq_fixed_buf *b,
			     uint64_t flags_word)
{
	uint64_t w;

	__builtin_memcpy(&w, &b->len, sizeof(w));
	d->addr = b->addr;
	WRITE_ONCE(d->len_id_flags, w | flags_word);
}

/*
 * Ids into the descriptors from @d on, at most @n, none past the ring's
 * end, their flags @flags_word; stops before an id out of range or still
 * in flight (a driver bug: the device is never handed a buffer it owns).
 */
static unsigned int packed_fixed_put_run(struct virtq *vq, struct virtq_packed_desc *d,
					 const struct virtq_fixed_buf *bufs, const uint16_t *ids,
					 unsigned int n, uint64_t flags_word)
{
	struct virtq_packed_desc *end = d + n;
	struct virtq_chain *chain = vq->chain;
	unsigned int size = vq->size;
	const uint16_t *id = ids;

	for (; d < end; d++, id++) {
		unsigned int i = *id;

		if (i >= size || chain[i].token)
			break;
		chain[i].token = virtq_fixed_token(&chain[i]);
		packed_fixed_put(d, &bufs[i], flags_word);
	}
	return (unsigned int)(id - ids);
}

/*
 * 2.8.21.1 for a batch: every descriptor but the first is written whole,
 * flags included; the device cannot look past the first before its flags
 * say available, and those go last, after one barrier (2.8.21.1.1), so
 * the device sees the batch whole or not at all. The ring wraps at most
 * once: two runs of contiguous slots, the second with the flipped wrap
 * counter.
 */
unsigned int virtq_fixed_add_packed(struct virtq *vq, const struct virtq_fixed_buf *bufs,
				    const uint16_t *ids, unsigned int n)
{
	struct virtq_packed *p = &vq->packed;
	unsigned int head = p->next_avail, size = vq->size, run, k;
	struct virtq_packed_desc *d = &p->desc[head];
	uint16_t head_flags = packed_avail_flags(p->avail_wrap), id = ids[0];

	if (n > vq->num_free)
		n = vq->num_free;
	if (!n || id >= size || vq->chain[id].token)
		return 0;
	/* the head: its flags stay as they are until the end */
	vq->chain[id].token = virtq_fixed_token(&vq->chain[id]);
	d->addr = bufs[id].addr;
	d->len = bufs[id].len;
	d->id = id;
	k = 1;
	run = n < size - head ? n : size - head;
	if (run > 1)
		k += packed_fixed_put_run(vq, d + 1, bufs, ids + 1, run - 1,
					  (uint64_t)head_flags << 48);
	if (k == run && n > run)
		k += packed_fixed_put_run(vq, p->desc, bufs, ids + run, n - run,
					  (uint64_t)packed_avail_flags(!p->avail_wrap) << 48);
	p->next_avail = (uint16_t)(head + k);
	if (p->next_avail >= size) {
		p->next_avail = (uint16_t)(p->next_avail - size);
		p->avail_wrap = !p->avail_wrap;
	}
	vq->num_free -= k;
	p->pending = (uint16_t)(p->pending + k);
	vq->num_added += k;
	virt_wmb();
	WRITE_ONCE(p->desc[head].flags, head_flags);
	return k;
}

/*
 * The fast part of 2.8.22 for a batch: used elements with good ids from
 * @d on, at most @n, none past the ring's end, @used their flags exactly
 * (what QEMU and DPDK write for a device-readable buffer; other bits go
 * the slow way). Stops before anything else (not used yet, other flags,
 * a bad id), leaving it for the caller. Returns the ids taken.
 */
static unsigned int packed_fixed_take(struct virtq *vq, const struct virtq_packed_desc *d,
				      uint16_t used, uint16_t *ids, unsigned int n)
{
	const struct virtq_packed_desc *end = d + n;
	struct virtq_chain *chain = vq->chain;
	unsigned int size = vq->size, id;
	uint16_t *out = ids;

	for (; d < end; d++) {
		if (READ_ONCE(d->flags) != used)
			break;
		/* Read id only after the flags say used. */
		virt_rmb();
		id = READ_ONCE(d->id);
		if (id >= size || !chain[id].token)
			break;
		chain[id].token = NULL;
		*out++ = (uint16_t)id;
	}
	return (unsigned int)(out - ids);
}

/*
 * What stopped packed_fixed_take at last_used, looked at again, one slot
 * at most so every call makes progress: the device may have written the
 * element since, or set flag bits besides AVAIL and USED; then it is
 * taken as any other (into *@out, returns 1).
 * An element with broken flags or with an id out of range or not in
 * flight is counted and its slot skipped (virtq_count_lost; returns 0).
 * -1: nothing more to look at (the device's, or the queue broke).
 */
static int packed_fixed_slow(struct virtq *vq, uint16_t *out, unsigned int *bad)
{
	struct virtq_packed *p = &vq->packed;
	struct virtq_packed_desc *d = &p->desc[p->last_used];
	uint16_t own = READ_ONCE(d->flags) & PACKED_OWNER_MASK, id;

	if (own == packed_avail_flags(p->used_wrap))
		return -1; /* still the device's */
	if (own != packed_used_flags(p->used_wrap)) {
		(*bad)++;
		return packed_skip_garbled(vq) ? 0 : -1;
	}
	virt_rmb();
	id = READ_ONCE(d->id);
	packed_skip(vq, 1);
	if (id < vq->size && vq->chain[id].token) {
		vq->chain[id].token = NULL; /* it arrived after the first look */
		*out = id;
		return 1;
	}
	(*bad)++;
	return virtq_count_lost(vq) ? 0 : -1;
}

/*
 * 2.8.22 for a batch: one slot per used element (fixed buffers are one
 * descriptor each, 2.8.6).
 */
unsigned int virtq_fixed_reclaim_packed(struct virtq *vq, uint16_t *ids, unsigned int max,
					unsigned int *bad)
{
	struct virtq_packed *p = &vq->packed;
	unsigned int n = 0, todo, k;

	while (n < max && p->pending) {
		todo = max - n < p->pending ? max - n : p->pending;
		if (todo > (unsigned int)(vq->size - p->last_used))
			todo = vq->size - p->last_used; /* to the ring's end; the loop goes on */
		k = packed_fixed_take(vq, &p->desc[p->last_used], packed_used_flags(p->used_wrap),
				      ids + n, todo);
		n += k;
		packed_skip(vq, (uint16_t)k);
		if (k < todo) {
			int r = packed_fixed_slow(vq, ids + n, bad);

			if (r < 0)
				break;
			n += (unsigned int)r;
		}
	}
	vq->num_free += n;
	if (!p->pending && !vq->broken)
		packed_check_idle_slot(vq);
	if (n)
		packed_after_used(vq);
	return n;
}

/*
 * A chain exactly as @tmpl says (drivers/virtio/vsock_attack.c), in the
 * next @n slots under one buffer id, tracked like any chain so its
 * completion frees it. Each descriptor's flags are the template's
 * (NEXT, WRITE, INDIRECT: the same bits as split) with the avail and used
 * bits of our wrap counter (2.8.1), or of the other one when the
 * template's next is VIRTQ_FORGE_WRAP_LIE; next means nothing else here.
 * The head's flags go last (2.8.21.1.1).
 */
int virtq_add_forged_packed(struct virtq *vq, const struct virtq_desc *tmpl, unsigned int n,
			    void *token)
{
	struct virtq_packed *p = &vq->packed;
	uint16_t id = p->free_id, head = p->next_avail, head_flags = 0;
	struct virtq_chain *c;

	if (!n || n > vq->size || vq->num_free < n)
		return -ENOSPC;
	for (unsigned int k = 0; k < n; k++) {
		struct virtq_packed_desc *d = &p->desc[p->next_avail];
		bool wrap = p->avail_wrap ^ (tmpl[k].next == VIRTQ_FORGE_WRAP_LIE);
		uint16_t flags = (tmpl[k].flags & ~(VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED)) |
				 packed_avail_flags(wrap);

		d->addr = tmpl[k].addr;
		d->len = tmpl[k].len;
		d->id = id;
		if (k)
			d->flags = flags;
		else
			head_flags = flags;
		packed_next_avail(vq);
	}
	c = &vq->chain[id];
	p->free_id = c->link;
	c->token = token;
	c->indirect = NULL;
	c->in_len = 0; /* nothing the device may write: any used len is ignored */
	c->ndescs = n;
	if (n > 1)
		p->multi_slot++;
	vq->num_free -= n;
	p->pending += n;
	vq->num_added += n;
	vq->stats.added++;
	virt_wmb();
	WRITE_ONCE(p->desc[head].flags, head_flags);
	return 0;
}

/*
 * A fixed buffer in the next slot exactly as @d says (the hostile
 * driver): its flags with our wrap counter's avail/used bits, or the
 * other one's when @d's next is VIRTQ_FORGE_WRAP_LIE (2.8.1), flags last
 * (2.8.21.1.1). Tracked like any fixed buffer.
 */
unsigned int virtq_fixed_add_forged_packed(struct virtq *vq, uint16_t id,
					   const struct virtq_desc *d)
{
	struct virtq_packed *p = &vq->packed;
	struct virtq_packed_desc *slot = &p->desc[p->next_avail];
	bool wrap = p->avail_wrap ^ (d->next == VIRTQ_FORGE_WRAP_LIE);
	uint16_t flags = (uint16_t)((d->flags & ~(VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED)) |
				    packed_avail_flags(wrap));

	vq->chain[id].token = virtq_fixed_token(&vq->chain[id]);
	slot->addr = d->addr;
	slot->len = d->len;
	slot->id = id;
	packed_next_avail(vq);
	vq->num_free--;
	p->pending++;
	vq->num_added++;
	virt_wmb();
	WRITE_ONCE(slot->flags, flags);
	return 1;
}
