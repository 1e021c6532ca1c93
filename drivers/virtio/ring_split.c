// SPDX-License-Identifier: MIT
/*
 * Split virtqueue (virtio 1.2, 2.7): a descriptor table, an available ring
 * the driver writes and a used ring the device writes. Free descriptors
 * form a list threaded through desc.next; we follow our own copy of those
 * links (split.next), never the table, because the table is memory the
 * device can write.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "drivers/virtio/virtqueue_priv.h"
#include "kernel/barrier.h"
#include "kernel/dma.h"

/* Rings on their own cache lines: the device polls them, we write them. */
#define SPLIT_RING_ALIGN 64

static uint16_t *split_used_event(struct virtq *vq)
{
	return virtq_used_event(vq->split.avail, vq->size);
}

static uint16_t *split_avail_event(struct virtq *vq)
{
	return virtq_avail_event(vq->split.used, vq->size);
}

/*
 * Who holds the ball (2.7.7, 2.7.10): what each side published last. For
 * a queue that went quiet: used idx past taken is a completion we were
 * not told of; avail idx past what the device took (used idx plus in
 * flight) with no kick is one the device was not told of.
 */
void virtq_print_indices_split(struct virtq *vq)
{
	struct virtq_split *s = &vq->split;

	printf("    split: avail idx %u (ours), kick wanted past %u; used idx %u, taken %u, "
	       "interrupt wanted past %u; in flight %u\n",
	       READ_ONCE(s->avail->idx), READ_ONCE(*split_avail_event(vq)), READ_ONCE(s->used->idx),
	       s->last_used, READ_ONCE(*split_used_event(vq)), s->in_flight);
}

int virtq_init_split(struct virtq *vq)
{
	struct virtq_split *s = &vq->split;
	uint16_t size = vq->size;
	unsigned int i;

	/* 2.7.5, 2.7.6, 2.7.8: three parts, each contiguous and aligned. */
	s->desc = dma_alloc(sizeof(*s->desc) * size, SPLIT_RING_ALIGN);
	s->avail = dma_alloc(virtq_split_avail_bytes(size), SPLIT_RING_ALIGN);
	s->used = dma_alloc(virtq_split_used_bytes(size), SPLIT_RING_ALIGN);
	s->next = calloc(size, sizeof(*s->next));
	if (!s->desc || !s->avail || !s->used || !s->next) {
		virtq_free_split(vq);
		return -ENOMEM;
	}
	for (i = 0; i < size; i++) {
		s->next[i] = (uint16_t)((i + 1) & (size - 1));
		s->desc[i].next = s->next[i];
	}
	s->free_head = 0;
	return 0;
}

void virtq_free_split(struct virtq *vq)
{
	struct virtq_split *s = &vq->split;

	if (s->desc)
		dma_free(s->desc);
	if (s->avail)
		dma_free(s->avail);
	if (s->used)
		dma_free(s->used);
	free(s->next);
}

static void split_fill_desc(struct virtq_desc *d, const struct vbuf *b, uint16_t flags,
			    uint16_t next)
{
	d->addr = virt_to_phys(b->addr);
	d->len = b->len;
	d->flags = flags;
	d->next = next;
}

/*
 * 2.7.5.3 Indirect Descriptors: the chain lives in a table of its own,
 * linked by next like the main table; the ring spends one descriptor.
 */
static struct virtq_desc *split_indirect_table(struct virtq *vq, uint16_t head,
					       const struct vbuf *out, unsigned int n_out,
					       const struct vbuf *in, unsigned int n_in)
{
	unsigned int total = n_out + n_in, i;
	struct virtq_desc *table;
	uint16_t flags;

	table = virtq_table_alloc(vq, head, total);
	if (!table)
		return NULL;
	for (i = 0; i < total; i++) {
		flags = i + 1 < total ? VIRTQ_DESC_F_NEXT : 0;
		if (i < n_out) {
			split_fill_desc(&table[i], &out[i], flags, i + 1);
		} else {
			flags |= VIRTQ_DESC_F_WRITE;
			split_fill_desc(&table[i], &in[i - n_out], flags, i + 1);
		}
	}
	return table;
}

/* 2.7.13.1: place the chain in free descriptors; returns its last one. */
static uint16_t split_place_chain(struct virtq_split *s, uint16_t head, const struct vbuf *out,
				  unsigned int n_out, const struct vbuf *in, unsigned int n_in)
{
	unsigned int total = n_out + n_in, k;
	uint16_t i = head, last = head, flags;

	for (k = 0; k < total; k++) {
		flags = k + 1 < total ? VIRTQ_DESC_F_NEXT : 0;
		if (k < n_out) {
			split_fill_desc(&s->desc[i], &out[k], flags, s->next[i]);
		} else {
			flags |= VIRTQ_DESC_F_WRITE;
			split_fill_desc(&s->desc[i], &in[k - n_out], flags, s->next[i]);
		}
		last = i;
		i = s->next[i];
	}
	return last;
}

/* 2.7.13.2-3: the head goes into the next available ring entry, then idx. */
static void split_publish(struct virtq *vq, uint16_t head)
{
	struct virtq_split *s = &vq->split;
	struct virtq_avail *avail = s->avail;
	uint16_t idx = s->avail_idx;

	/* Locals: after a store the compiler must reload whatever vq holds. */
	avail->ring[idx & (vq->size - 1)] = head;
	/* 2.7.13.3.1: descriptors and ring entry are visible before idx. */
	virt_wmb();
	idx++;
	WRITE_ONCE(avail->idx, idx);
	s->avail_idx = idx;
	s->in_flight++;
	vq->num_added++;
}

int virtq_add_split(struct virtq *vq, const struct vbuf *out, unsigned int n_out,
		    const struct vbuf *in, unsigned int n_in, void *token, bool indirect)
{
	struct virtq_split *s = &vq->split;
	struct virtq_desc *table = NULL;
	struct virtq_chain *c;
	unsigned int need = n_out + n_in;
	uint16_t head = s->free_head, last;

	/* Without memory for a table, fall back to a direct chain. */
	if (indirect && vq->num_free > 0)
		table = split_indirect_table(vq, head, out, n_out, in, n_in);
	if (table)
		need = 1;
	if (vq->num_free < need) {
		virtq_table_free(vq, table);
		return -ENOSPC;
	}

	if (table) {
		struct vbuf tb = { table, sizeof(*table) * (n_out + n_in) };

		split_fill_desc(&s->desc[head], &tb, VIRTQ_DESC_F_INDIRECT, s->next[head]);
		last = head;
		vq->stats.indirect++;
	} else {
		last = split_place_chain(s, head, out, n_out, in, n_in);
	}
	s->free_head = s->next[last];
	vq->num_free -= need;

	c = &vq->chain[head];
	c->token = token;
	c->indirect = table;
	c->in_len = virtq_in_len(in, n_in);
	c->ndescs = need;
	c->link = last;
	split_publish(vq, head);
	return 0;
}

/*
 * 2.7.13.1 for a buffer of one descriptor, the common case (vsock RX
 * buffers and TX packets): no chain to walk, never indirect. Without
 * VIRTQ_DESC_F_NEXT the device ignores desc.next (2.7.5), so it is left
 * as it was; chain.indirect is already NULL for a free head.
 */
void virtq_add_one_split(struct virtq *vq, void *addr, uint32_t len, uint16_t flags, void *token)
{
	struct virtq_split *s = &vq->split;
	uint16_t head = s->free_head;
	struct virtq_desc *d = &s->desc[head];
	struct virtq_chain *c = &vq->chain[head];

	d->addr = virt_to_phys(addr);
	d->len = len;
	d->flags = flags;
	s->free_head = s->next[head];
	vq->num_free--;
	c->token = token;
	c->in_len = virtq_one_in_len(len, flags);
	c->ndescs = 1;
	c->link = head;
	vq->stats.added++;
	split_publish(vq, head);
}

/* 2.7.13.4 Notifying The Device, with 2.7.10 suppression. */
static bool split_kick_needed(struct virtq *vq)
{
	struct virtq_split *s = &vq->split;
	uint16_t new_idx = s->avail_idx;
	uint16_t old_idx = (uint16_t)(new_idx - vq->num_added);

	/*
	 * 2.7.13.4.1: idx must be visible before we read avail_event or
	 * flags, or the device could go idle after reading an old idx while
	 * we read a stale "no kick needed".
	 */
	virt_mb();
	/* More adds than 16 bits can tell apart: kick to be safe. */
	if (vq->num_added > 0xffff)
		return true;
	if (vq->event_idx)
		return virtq_need_event(READ_ONCE(*split_avail_event(vq)), new_idx, old_idx);
	return !(READ_ONCE(s->used->flags) & VIRTQ_USED_F_NO_NOTIFY);
}

/* kick_prepare once something was added. */
static bool split_kick_decide(struct virtq *vq)
{
	bool need = split_kick_needed(vq);

	vq->num_added = 0;
	if (!need)
		vq->stats.kicks_suppressed++;
	return need;
}

bool virtq_kick_prepare_split(struct virtq *vq)
{
	return vq->num_added && split_kick_decide(vq);
}

/* kick_prepare + notify for the inline virtq_kick, which checked num_added. */
bool virtq_kick_split(struct virtq *vq)
{
	if (!split_kick_decide(vq))
		return false;
	virtq_notify(vq);
	return true;
}

/* Every entry the last used->idx read announced is taken. */
static bool split_batch_empty(const struct virtq *vq)
{
	return vq->split.used_shadow == vq->split.last_used;
}

/*
 * The used index may only move forward by the number of chains the device
 * holds; anything else is a broken device. Count each bogus value once so
 * a poll loop does not inflate the counter.
 */
static bool split_used_idx_ok(struct virtq *vq, uint16_t used_idx)
{
	struct virtq_split *s = &vq->split;

	if ((uint16_t)(used_idx - s->last_used) <= s->in_flight) {
		s->bad_used_idx_seen = false;
		return true;
	}
	if (!s->bad_used_idx_seen || s->bad_used_idx != used_idx) {
		s->bad_used_idx_seen = true;
		s->bad_used_idx = used_idx;
		vq->stats.bad_completions++;
	}
	return false;
}

/*
 * Read used->idx, check it and keep it as the shadow. Between the check
 * and the last entry taken, used_shadow - last_used <= in_flight holds:
 * each entry taken moves last_used up by one and in_flight down by at
 * most one. False when nothing new (or nothing believable) is there.
 */
bool virtq_has_used_split(struct virtq *vq)
{
	struct virtq_split *s = &vq->split;
	uint16_t used_idx;

	if (vq->broken)
		return false;
	used_idx = READ_ONCE(s->used->idx);
	if (used_idx == s->last_used || !split_used_idx_ok(vq, used_idx))
		return false;
	s->used_shadow = used_idx;
	/* 2.7.8: read the entries only after idx says they are there. */
	virt_rmb();
	return true;
}

/*
 * 2.7.14: return a chain's descriptors to the free list. The caller
 * checked that @id is a head in flight. Our copy of the links only:
 * desc.next matters under VIRTQ_DESC_F_NEXT alone.
 */
static inline __attribute__((always_inline)) void *split_detach(struct virtq *vq, uint32_t id,
								uint32_t used_len, uint32_t *len)
{
	struct virtq_split *s = &vq->split;
	struct virtq_chain *c = &vq->chain[id];
	void *token = c->token;

	c->token = NULL;
	used_len = virtq_used_len(vq, c, used_len);
	if (len)
		*len = used_len;
	s->next[c->link] = s->free_head;
	s->free_head = (uint16_t)id;
	vq->num_free += c->ndescs;
	s->in_flight--; /* stats.completed follows (virtq_get_stats) */
	if (c->indirect)
		return virtq_free_indirect(vq, c, token);
	return token;
}

/* 2.7.7.1: tell the device which used entry we want an interrupt for. */
static void split_update_used_event(struct virtq *vq)
{
	uint16_t *ev = split_used_event(vq);

	if (vq->cb_disabled) {
		/* Behind us: reached only after 65535 more entries. */
		WRITE_ONCE(*ev, (uint16_t)(vq->split.last_used - 1));
		return;
	}
	WRITE_ONCE(*ev, vq->split.last_used);
	vq->irqs_asked = vq->stats.interrupts;
	/* Publish before the next used->idx read, or an interrupt is lost. */
	virt_mb();
}

/*
 * Take the next entry of the batch the shadow knows of.
 *
 * used_event is written once a batch, when its last entry is taken: the
 * next look at used->idx (get_used or has_used) follows that write and
 * its full barrier, the re-check 2.7.7.2 asks for so no interrupt is
 * lost. While the batch lasts the device sees an older used_event it
 * already passed and does not interrupt for entries we are about to take.
 */
static inline void split_pop(struct virtq *vq, uint32_t *id, uint32_t *used_len)
{
	struct virtq_split *s = &vq->split;
	struct virtq_used_elem *e = &s->used->ring[s->last_used & (vq->size - 1)];

	*id = READ_ONCE(e->id);
	*used_len = READ_ONCE(e->len);
	s->last_used++;
	if (vq->event_idx && split_batch_empty(vq))
		split_update_used_event(vq);
}

/* 2.7.8: id is the head of a chain the device holds. */
static inline bool split_id_ok(const struct virtq *vq, uint32_t id)
{
	return id < vq->size && vq->chain[id].token;
}

/* The whole walk: refresh the shadow, skip lost entries (counted). */
static __attribute__((noinline)) void *split_get_used_slow(struct virtq *vq, uint32_t *len)
{
	uint32_t id, used_len;

	for (;;) {
		if (split_batch_empty(vq) && !virtq_has_used_split(vq))
			return NULL;
		split_pop(vq, &id, &used_len);
		if (split_id_ok(vq, id))
			return split_detach(vq, id, used_len, len);
		/* Its buffer is lost for good; may mark the queue broken. */
		virtq_count_lost(vq);
	}
}

static __attribute__((noinline)) void *split_lost(struct virtq *vq, uint32_t *len)
{
	virtq_count_lost(vq);
	return split_get_used_slow(vq, len);
}

/*
 * 2.7.14 Receiving Used Buffers. used->idx is read once per batch (the
 * shadow; the inline virtq_get_used returns NULL itself when neither it
 * nor used->idx has anything). An entry of a known batch naming a buffer
 * in flight, the common case, takes no call but to what it frees.
 */
void *virtq_get_used_split(struct virtq *vq, uint32_t *len)
{
	uint32_t id, used_len;

	if (split_batch_empty(vq))
		return split_get_used_slow(vq, len);
	split_pop(vq, &id, &used_len);
	if (split_id_ok(vq, id))
		return split_detach(vq, id, used_len, len);
	return split_lost(vq, len);
}

/* 2.7.7 Used Buffer Notification Suppression: polling mode. */
void virtq_disable_cb_split(struct virtq *vq)
{
	struct virtq_split *s = &vq->split;

	if (vq->event_idx) {
		/* 2.7.7.1: with EVENT_IDX flags must stay 0; move the event. */
		split_update_used_event(vq);
		return;
	}
	if (!(s->avail_flags & VIRTQ_AVAIL_F_NO_INTERRUPT)) {
		s->avail_flags |= VIRTQ_AVAIL_F_NO_INTERRUPT;
		WRITE_ONCE(s->avail->flags, s->avail_flags);
	}
}

/*
 * Interrupt mode again. The device may have written used entries while it
 * still saw notifications off; re-read used->idx after a full barrier so
 * the caller learns about them (returns false) instead of waiting for an
 * interrupt that will never come.
 */
bool virtq_enable_cb_split(struct virtq *vq)
{
	struct virtq_split *s = &vq->split;

	if (vq->event_idx) {
		WRITE_ONCE(*split_used_event(vq), s->last_used);
	} else if (s->avail_flags & VIRTQ_AVAIL_F_NO_INTERRUPT) {
		s->avail_flags &= ~VIRTQ_AVAIL_F_NO_INTERRUPT;
		WRITE_ONCE(s->avail->flags, s->avail_flags);
	}
	vq->irqs_asked = vq->stats.interrupts;
	virt_mb();
	return split_batch_empty(vq) && !virtq_has_used_split(vq);
}

/*
 * 2.7.7.2: with EVENT_IDX the device notifies when the entry it writes
 * is the one at used_event, i.e. when used->idx moves past it; without,
 * whenever flags lack NO_INTERRUPT. The entries since last_used are the
 * ones the driver has not seen; what it published is read back as the
 * device reads it.
 */
bool virtq_notification_owed_split(struct virtq *vq)
{
	struct virtq_split *s = &vq->split;
	uint16_t used_idx = READ_ONCE(s->used->idx), event;

	if (vq->broken || used_idx == s->last_used)
		return false;
	if (!vq->event_idx)
		return !(READ_ONCE(s->avail->flags) & VIRTQ_AVAIL_F_NO_INTERRUPT);
	event = READ_ONCE(*split_used_event(vq));
	return virtq_need_event(event, used_idx, s->last_used);
}

/*
 * ---- Fixed layout (virtqueue.h): descriptor i is buffer i for good ----
 *
 * The free list above is not used: the driver owns which ids are free.
 * Adding writes only available ring entries; reclaiming reads only used
 * ring ids.
 */

/* 2.7.5: one device-readable descriptor; written only while not in flight. */
void virtq_fixed_set_split(struct virtq *vq, uint16_t id, const struct virtq_fixed_buf *fb)
{
	struct virtq_desc *d = &vq->split.desc[id];

	d->addr = fb->addr;
	d->len = fb->len;
	d->flags = 0;
}

/*
 * Ids into the available ring from entry @pos on, at most @n, none past
 * the ring's end; stops before an id out of range or still in flight (a
 * driver bug: the device is never handed a buffer it owns).
 */
static unsigned int split_fixed_put(struct virtq *vq, unsigned int pos, const uint16_t *ids,
				    unsigned int n)
{
	uint16_t *ring = &vq->split.avail->ring[pos], *end = ring + n;
	struct virtq_chain *chain = vq->chain;
	unsigned int size = vq->size;
	const uint16_t *id = ids;

	for (; ring < end; ring++, id++) {
		unsigned int i = *id;

		if (i >= size || chain[i].token)
			break;
		chain[i].token = virtq_fixed_token(&chain[i]);
		*ring = (uint16_t)i;
	}
	return (unsigned int)(id - ids);
}

/* 2.7.13.2-3 for a batch: n ring entries, one barrier, one idx write. */
unsigned int virtq_fixed_add_split(struct virtq *vq, const uint16_t *ids, unsigned int n)
{
	struct virtq_split *s = &vq->split;
	unsigned int pos = s->avail_idx & (vq->size - 1), run, k;

	if (n > vq->num_free)
		n = vq->num_free;
	/* the ring wraps at most once: two runs of contiguous entries */
	run = n < vq->size - pos ? n : vq->size - pos;
	k = split_fixed_put(vq, pos, ids, run);
	if (k == run && n > run)
		k += split_fixed_put(vq, 0, ids + run, n - run);
	if (!k)
		return 0;
	/* 2.7.13.3.1: the entries are visible before idx. */
	virt_wmb();
	s->avail_idx = (uint16_t)(s->avail_idx + k);
	WRITE_ONCE(s->avail->idx, s->avail_idx);
	s->in_flight = (uint16_t)(s->in_flight + k);
	vq->num_free -= k;
	vq->num_added += k;
	return k;
}

/*
 * The fast part of 2.7.14 for a batch: used entries from @pos on with
 * good ids, at most @n, none past the ring's end; stops before a bad one.
 * Returns the ids taken.
 */
static unsigned int split_fixed_take(struct virtq *vq, unsigned int pos, uint16_t *ids,
				     unsigned int n)
{
	const struct virtq_used_elem *e = &vq->split.used->ring[pos], *end = e + n;
	struct virtq_chain *chain = vq->chain;
	unsigned int size = vq->size;
	uint16_t *out = ids;

	for (; e < end; e++) {
		uint32_t id = READ_ONCE(e->id);

		if (id >= size || !chain[id].token)
			break;
		chain[id].token = NULL;
		*out++ = (uint16_t)id;
	}
	return (unsigned int)(out - ids);
}

/*
 * 2.7.14 for a batch: used->idx read and checked once (it may move only
 * as far as the buffers in flight), then each entry's id checked: out of
 * range or not in flight is counted and dropped (virtq_count_lost).
 */
unsigned int virtq_fixed_reclaim_split(struct virtq *vq, uint16_t *ids, unsigned int max,
				       unsigned int *bad)
{
	struct virtq_split *s = &vq->split;
	uint16_t used_idx = READ_ONCE(s->used->idx);
	unsigned int n = 0, todo, pos, k;

	if (used_idx == s->last_used || !split_used_idx_ok(vq, used_idx))
		return 0;
	/* 2.7.8: entries only after idx says they are there. */
	virt_rmb();
	while (s->last_used != used_idx && n < max) {
		todo = (uint16_t)(used_idx - s->last_used);
		if (todo > max - n)
			todo = max - n;
		pos = s->last_used & (vq->size - 1);
		if (todo > vq->size - pos)
			todo = vq->size - pos; /* to the ring's end; the loop goes on */
		k = split_fixed_take(vq, pos, ids + n, todo);
		n += k;
		s->last_used = (uint16_t)(s->last_used + k);
		if (k == todo)
			continue;
		/* the entry at last_used named no buffer in flight */
		s->last_used++;
		(*bad)++;
		if (!virtq_count_lost(vq))
			break;
	}
	s->in_flight = (uint16_t)(s->in_flight - n);
	vq->num_free += n;
	/* nothing known beyond what was taken: has_used reads used->idx again */
	s->used_shadow = s->last_used;
	if (vq->event_idx)
		split_update_used_event(vq);
	return n;
}

/*
 * A chain exactly as @tmpl says (drivers/virtio/vsock_attack.c), in free
 * descriptors like any chain, so the bookkeeping stays ours: a next field
 * below @n names the chain's own k-th descriptor, any other value goes
 * into the table as it is. Completion frees the slots through our copy of
 * the links (split_detach), whatever the table says.
 */
int virtq_add_forged_split(struct virtq *vq, const struct virtq_desc *tmpl, unsigned int n,
			   void *token)
{
	struct virtq_split *s = &vq->split;
	uint16_t *slot, head = s->free_head, i = head;
	struct virtq_chain *c;
	unsigned int k;

	if (!n || vq->num_free < n)
		return -ENOSPC;
	slot = malloc(n * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		slot[k] = i;
		i = s->next[i];
	}
	for (k = 0; k < n; k++) {
		s->desc[slot[k]] = tmpl[k];
		if (tmpl[k].next < n)
			s->desc[slot[k]].next = slot[tmpl[k].next];
	}
	s->free_head = s->next[slot[n - 1]];
	vq->num_free -= n;
	c = &vq->chain[head];
	c->token = token;
	c->indirect = NULL;
	c->in_len = 0; /* nothing the device may write: any used len is ignored */
	c->ndescs = n;
	c->link = slot[n - 1];
	free(slot);
	vq->stats.added++;
	split_publish(vq, head);
	return 0;
}

/* avail->idx @ahead entries past ours, pointing at nothing (2.7.13.3). */
void virtq_forge_avail_idx_split(struct virtq *vq, uint16_t ahead)
{
	virt_wmb();
	WRITE_ONCE(vq->split.avail->idx, (uint16_t)(vq->split.avail_idx + ahead));
}

/*
 * An available ring entry naming @head, whatever it holds (the hostile
 * driver, hostile.h): a head beyond the ring, or one already in flight.
 * No chain is tracked for it, but it is one more entry the device owes
 * a used entry for (in_flight); that completion names no chain in
 * flight and is counted as garbled, and the entry stays in in_flight.
 */
void virtq_forge_publish_split(struct virtq *vq, uint16_t head)
{
	split_publish(vq, head);
}

/*
 * A fixed buffer's descriptor exactly as @d says (the hostile driver):
 * address, length, flags and next, then made available like any fixed
 * buffer. The next virtq_fixed_set of @id writes an honest one again.
 */
unsigned int virtq_fixed_add_forged_split(struct virtq *vq, uint16_t id, const struct virtq_desc *d)
{
	vq->split.desc[id] = *d;
	return virtq_fixed_add_split(vq, &id, 1);
}
