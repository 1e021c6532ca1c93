// SPDX-License-Identifier: MIT
/*
 * The virtqueue interface: argument checks, counters and the choice between
 * the split (ring_split.c) and packed (ring_packed.c) twin of each call.
 */
#include <errno.h>
#include <stdlib.h>

#include "drivers/virtio/virtqueue_priv.h"
#include "kernel/poll.h"
#include "kernel/dma.h"

static bool virtq_size_ok(enum virtq_layout layout, uint16_t size)
{
	if (size == 0 || size > VIRTQ_MAX_SIZE)
		return false;
	/* 2.7: split Queue Size is a power of two; 2.8.10.1: packed need not be. */
	if (layout == VIRTQ_SPLIT)
		return (size & (size - 1)) == 0;
	return layout == VIRTQ_PACKED;
}

static void slot_tables_create(struct virtq *vq);

struct virtq *virtq_create(enum virtq_layout layout, uint16_t index, uint16_t size,
			   uint64_t features, void (*notify)(struct virtq *), void *priv)
{
	struct virtq *vq;
	int err;

	if (!virtq_size_ok(layout, size))
		return NULL;
	vq = calloc(1, sizeof(*vq));
	if (!vq)
		return NULL;
	vq->chain = calloc(size, sizeof(*vq->chain));
	if (!vq->chain)
		goto fail;
	vq->layout = layout;
	vq->index = index;
	vq->size = size;
	vq->features = features & ~VIRTIO_BIT(VIRTIO_F_IN_ORDER); /* not implemented */
	vq->event_idx = features & VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
	vq->indirect_min = (features & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC)) ? 2 : 0;
	vq->num_free = size;
	vq->notify = notify;
	vq->priv = priv;
	vq->owner = virtq_this_cpu();
	if (layout == VIRTQ_SPLIT)
		err = virtq_init_split(vq);
	else
		err = virtq_init_packed(vq);
	if (err)
		goto fail;
	slot_tables_create(vq); /* no memory now: tried again at first use */
	return vq;
fail:
	free(vq->chain);
	free(vq);
	return NULL;
}

/*
 * Indirect tables of up to SLOT_TABLE_DESCS descriptors live in one block
 * per queue, one table per head (split) or id (packed): a head or id names
 * one buffer in flight, so its table is free whenever it is, and no list
 * is needed. A table from the heap per packet cost about 170 of the 1,200
 * instructions of a 64 KiB guest-to-host packet (dma_alloc, malloc and
 * free). Longer tables, or a queue too large for a block of
 * SLOT_TABLES_MAX bytes: the heap; no memory for the block: a
 * direct chain, as for any table. The block is allocated with the queue
 * when indirect descriptors are negotiated, so the heap in use does not
 * grow the first time a table is needed (the soak compares it), and goes
 * when a driver turns indirect off (virtq_set_indirect_min).
 */
#define SLOT_TABLE_DESCS 4
#define SLOT_TABLE_BYTES (SLOT_TABLE_DESCS * sizeof(struct virtq_desc))
#define SLOT_TABLES_MAX (64u << 10)

_Static_assert(sizeof(struct virtq_desc) == sizeof(struct virtq_packed_desc),
	       "one table block serves both layouts");

static size_t slot_tables_bytes(const struct virtq *vq)
{
	return (size_t)vq->size * SLOT_TABLE_BYTES;
}

static bool in_slot_tables(const struct virtq *vq, const void *table)
{
	const uint8_t *base = vq->slot_tables, *t = table;

	return base && t >= base && t < base + slot_tables_bytes(vq);
}

static void slot_tables_create(struct virtq *vq)
{
	if (vq->indirect_min && slot_tables_bytes(vq) <= SLOT_TABLES_MAX)
		vq->slot_tables = dma_alloc(slot_tables_bytes(vq), VIRTQ_DESC_ALIGN);
}

/* Only while no table in it is in flight. */
static void slot_tables_destroy(struct virtq *vq)
{
	for (unsigned int i = 0; i < vq->size; i++)
		if (in_slot_tables(vq, vq->chain[i].indirect))
			return;
	dma_free(vq->slot_tables);
	vq->slot_tables = NULL;
}

void *virtq_table_alloc(struct virtq *vq, uint16_t slot, unsigned int n)
{
	size_t bytes = slot_tables_bytes(vq);

	if (n > SLOT_TABLE_DESCS || slot >= vq->size || bytes > SLOT_TABLES_MAX)
		return dma_alloc(n * sizeof(struct virtq_desc), VIRTQ_DESC_ALIGN);
	if (!vq->slot_tables)
		slot_tables_create(vq); /* none at creation, or turned off and on */
	if (!vq->slot_tables)
		return NULL; /* no memory: the caller places a direct chain */
	return (uint8_t *)vq->slot_tables + (size_t)slot * SLOT_TABLE_BYTES;
}

void virtq_table_free(struct virtq *vq, void *table)
{
	if (table && !in_slot_tables(vq, table))
		dma_free(table);
}

/* The caller has reset the device: nothing it owned is touched again. */
void virtq_destroy(struct virtq *vq)
{
	unsigned int i;

	if (!vq)
		return;
	for (i = 0; i < vq->size; i++)
		virtq_table_free(vq, vq->chain[i].indirect);
	if (vq->slot_tables)
		dma_free(vq->slot_tables);
	if (vq->layout == VIRTQ_SPLIT)
		virtq_free_split(vq);
	else
		virtq_free_packed(vq);
	free(vq->chain);
	free(vq);
}

void *virtq_detach_unused(struct virtq *vq)
{
	for (unsigned int i = 0; i < vq->size; i++) {
		struct virtq_chain *c = &vq->chain[i];
		void *token = c->token;

		if (!token)
			continue;
		c->token = NULL;
		virtq_table_free(vq, c->indirect);
		c->indirect = NULL;
		return token;
	}
	return NULL;
}

void *virtq_free_indirect(struct virtq *vq, struct virtq_chain *c, void *token)
{
	virtq_table_free(vq, c->indirect);
	c->indirect = NULL;
	return token;
}

uint32_t virtq_in_len(const struct vbuf *in, unsigned int n_in)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < n_in; i++)
		sum += in[i].len;
	return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

int virtq_add_refused(struct virtq *vq, const void *token)
{
	if (!token)
		return -EINVAL;
	if (!virtq_owned(vq)) {
		virtq_wrong_cpu(vq);
		return -EPERM;
	}
	if (vq->broken)
		return -EIO;
	vq->stats.full++;
	return -ENOSPC;
}

#ifndef __RINGSIDE_KERNEL__
const struct percpu *virtq_test_cpu;
#endif

void *virtq_wrong_cpu(struct virtq *vq)
{
	__atomic_fetch_add(&vq->stats.wrong_cpu, 1, __ATOMIC_RELAXED);
	return NULL;
}

void virtq_set_owner(struct virtq *vq, const struct percpu *cpu)
{
	__atomic_store_n(&vq->owner, cpu, __ATOMIC_RELEASE);
}

unsigned int virtq_owner_index(const struct virtq *vq)
{
#ifdef __RINGSIDE_KERNEL__
	return vq->owner ? vq->owner->index : 0;
#else
	return 0;
#endif
}

bool virtq_notification_owed(struct virtq *vq)
{
	if (vq->layout == VIRTQ_SPLIT)
		return virtq_notification_owed_split(vq);
	return virtq_notification_owed_packed(vq);
}

enum poll_verdict virtq_watch(struct virtq *vq, bool interrupts, bool count)
{
	if (!virtq_has_used(vq))
		return POLL_IDLE;
	/* owed, and it did interrupt since: the guest took the notice and left the work */
	if (!interrupts || !virtq_notification_owed(vq) || vq->stats.interrupts != vq->irqs_asked)
		return POLL_LOST;
	if (count)
		vq->stats.missed_notifications++;
	return POLL_OWED;
}

/*
 * The inline virtq_add takes one-descriptor buffers straight to the twins;
 * everything else (chains, and what no ring can take) comes here.
 */
int virtq_add_chain(struct virtq *vq, const struct vbuf *out, unsigned int n_out,
		    const struct vbuf *in, unsigned int n_in, void *token)
{
	unsigned int total = n_out + n_in;
	bool indirect;
	int err;

	/* 2.7.5.3.1 / 2.8.19: no chain longer than the Queue Size. */
	if (!token || total == 0 || total > vq->size || total < n_out)
		return -EINVAL;
	if (!virtq_owned(vq))
		return virtq_add_refused(vq, token);
	if (total == 1)
		return virtq_add_one(vq, n_out ? out : in, !n_out, token);
	if (vq->broken)
		return -EIO;
	indirect = vq->indirect_min && total >= vq->indirect_min;
	if (vq->layout == VIRTQ_SPLIT)
		err = virtq_add_split(vq, out, n_out, in, n_in, token, indirect);
	else
		err = virtq_add_packed(vq, out, n_out, in, n_in, token, indirect);
	if (err == -ENOSPC)
		vq->stats.full++;
	else if (!err)
		vq->stats.added++;
	return err;
}

bool virtq_kick_prepare(struct virtq *vq)
{
	if (vq->layout == VIRTQ_SPLIT)
		return virtq_kick_prepare_split(vq);
	return virtq_kick_prepare_packed(vq);
}

void virtq_disable_cb(struct virtq *vq)
{
	vq->cb_disabled = true;
	if (vq->layout == VIRTQ_SPLIT)
		virtq_disable_cb_split(vq);
	else
		virtq_disable_cb_packed(vq);
}

bool virtq_enable_cb(struct virtq *vq)
{
	vq->cb_disabled = false;
	if (vq->layout == VIRTQ_SPLIT)
		return virtq_enable_cb_split(vq);
	return virtq_enable_cb_packed(vq);
}

/* Set once by the transport at boot, read by every CPU's rings after. */
static void (*broken_hook)(void);

void virtq_on_broken(void (*fn)(void))
{
	broken_hook = fn;
}

void virtq_mark_broken(struct virtq *vq)
{
	if (vq->broken)
		return;
	vq->broken = true;
	/* The inline has_used trusts the shadow: no entry is known any more. */
	if (vq->layout == VIRTQ_SPLIT)
		vq->split.used_shadow = vq->split.last_used;
	vq->stats.broken++;
	vq->stats.bad_completions++;
	if (broken_hook)
		broken_hook();
}

/*
 * The buffer the device really completed under a garbled id never comes
 * back (it may still own it): the ring has lost it for good. A device
 * that keeps doing so drains the ring until nothing can be added or
 * received, a stall no completion ends. Once half the buffers the ring
 * holds are lost, a reset is worth more than what is left: mark the
 * queue broken, and the device reset returns every buffer.
 */
bool virtq_count_lost(struct virtq *vq)
{
	if (++vq->lost * 2 < vq->size) {
		vq->stats.bad_completions++;
		return true;
	}
	virtq_mark_broken(vq);
	return false;
}

bool virtq_is_broken(const struct virtq *vq)
{
	return vq->broken;
}

void virtq_interrupt(struct virtq *vq)
{
	vq->stats.interrupts++;
}

uint64_t *virtq_interrupt_counter(struct virtq *vq)
{
	return &vq->stats.interrupts;
}

void virtq_set_indirect_min(struct virtq *vq, unsigned int min_descs)
{
	if (!(vq->features & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC)) || min_descs > vq->size)
		min_descs = 0;
	/* A table of one descriptor saves nothing: 1 means 2. */
	vq->indirect_min = min_descs == 1 ? 2 : min_descs;
	if (!vq->indirect_min && vq->slot_tables)
		slot_tables_destroy(vq);
}

uint64_t virtq_desc_addr(const struct virtq *vq)
{
	if (vq->layout == VIRTQ_SPLIT)
		return virt_to_phys(vq->split.desc);
	return virt_to_phys(vq->packed.desc);
}

uint64_t virtq_driver_addr(const struct virtq *vq)
{
	if (vq->layout == VIRTQ_SPLIT)
		return virt_to_phys(vq->split.avail);
	return virt_to_phys(vq->packed.driver);
}

uint64_t virtq_device_addr(const struct virtq *vq)
{
	if (vq->layout == VIRTQ_SPLIT)
		return virt_to_phys(vq->split.used);
	return virt_to_phys(vq->packed.device);
}

enum virtq_layout virtq_layout(const struct virtq *vq)
{
	return vq->layout;
}

uint16_t virtq_size(const struct virtq *vq)
{
	return vq->size;
}

uint64_t virtq_features(const struct virtq *vq)
{
	return vq->features;
}

/*
 * Split: every buffer added is in flight until it completes, and one
 * whose completion was garbled stays in flight (lost), so what completed
 * is what was added less what is in flight: a count the hot path need not
 * keep.
 */
void virtq_get_stats(const struct virtq *vq, struct virtq_stats *st)
{
	*st = vq->stats;
	if (vq->layout == VIRTQ_SPLIT)
		st->completed = vq->stats.added - vq->split.in_flight;
}

/* ---- Fixed layout (virtqueue.h): ids are slots, set once, added in batches ---- */

int virtq_fixed_set(struct virtq *vq, struct virtq_fixed_buf *bufs, uint16_t id,
		    const struct vbuf *b)
{
	struct virtq_chain *c;

	if (id >= vq->size || !b->len)
		return -EINVAL;
	c = &vq->chain[id];
	if (c->token)
		return -EBUSY;
	bufs[id].addr = virt_to_phys(b->addr);
	bufs[id].len = b->len;
	bufs[id].id = id;
	bufs[id].pad = 0;
	/* device-readable only: a used length means nothing (2.7.8, 2.8.4) */
	c->in_len = 0;
	c->ndescs = 1;
	if (vq->layout == VIRTQ_SPLIT)
		virtq_fixed_set_split(vq, id, &bufs[id]);
	return 0;
}

unsigned int virtq_fixed_add(struct virtq *vq, const struct virtq_fixed_buf *bufs,
			     const uint16_t *ids, unsigned int n)
{
	unsigned int added;

	if (vq->broken || !n)
		return 0;
	if (!virtq_owned(vq)) {
		virtq_wrong_cpu(vq);
		return 0;
	}
	if (vq->layout == VIRTQ_SPLIT)
		added = virtq_fixed_add_split(vq, ids, n);
	else
		added = virtq_fixed_add_packed(vq, bufs, ids, n);
	if (added < n)
		vq->stats.full++;
	vq->stats.added += added;
	return added;
}

unsigned int virtq_fixed_reclaim(struct virtq *vq, uint16_t *ids, unsigned int max,
				 unsigned int *bad)
{
	unsigned int n, dummy;

	if (!bad)
		bad = &dummy;
	*bad = 0;
	if (vq->broken)
		return 0;
	if (vq->layout == VIRTQ_SPLIT)
		n = virtq_fixed_reclaim_split(vq, ids, max, bad);
	else
		n = virtq_fixed_reclaim_packed(vq, ids, max, bad);
	vq->stats.completed += n; /* split: unused (virtq_get_stats) */
	return n;
}

void virtq_print_indices(struct virtq *vq)
{
	if (vq->layout == VIRTQ_SPLIT)
		virtq_print_indices_split(vq);
}

int virtq_add_forged(struct virtq *vq, const struct virtq_desc *tmpl, unsigned int n, void *token)
{
	if (!token || vq->broken)
		return -EIO;
	if (!virtq_owned(vq))
		return virtq_add_refused(vq, token);
	if (vq->layout == VIRTQ_PACKED)
		return virtq_add_forged_packed(vq, tmpl, n, token);
	return virtq_add_forged_split(vq, tmpl, n, token);
}

bool virtq_forge_avail_idx(struct virtq *vq, uint16_t ahead)
{
	if (vq->layout != VIRTQ_SPLIT || vq->broken)
		return false;
	if (!virtq_owned(vq))
		return virtq_wrong_cpu(vq) != NULL;
	virtq_forge_avail_idx_split(vq, ahead);
	return true;
}

bool virtq_forge_publish(struct virtq *vq, uint16_t head)
{
	if (vq->layout != VIRTQ_SPLIT || vq->broken)
		return false;
	if (!virtq_owned(vq))
		return virtq_wrong_cpu(vq) != NULL;
	virtq_forge_publish_split(vq, head);
	return true;
}

int virtq_fixed_add_forged(struct virtq *vq, struct virtq_fixed_buf *bufs, uint16_t id,
			   const struct virtq_desc *d)
{
	struct virtq_chain *c;
	unsigned int added;

	if (vq->broken)
		return -EIO;
	if (!virtq_owned(vq)) {
		virtq_wrong_cpu(vq);
		return -EPERM;
	}
	if (id >= vq->size)
		return -EINVAL;
	c = &vq->chain[id];
	if (c->token)
		return -EBUSY;
	if (!vq->num_free)
		return -ENOSPC;
	bufs[id] = (struct virtq_fixed_buf){ d->addr, d->len, id, 0 };
	c->in_len = 0; /* nothing the device may write: any used len is ignored */
	c->ndescs = 1;
	if (vq->layout == VIRTQ_SPLIT)
		added = virtq_fixed_add_forged_split(vq, id, d);
	else
		added = virtq_fixed_add_forged_packed(vq, id, d);
	vq->stats.added += added;
	return added ? 0 : -ENOSPC;
}

uint16_t virtq_forge_next_slot(const struct virtq *vq)
{
	if (vq->layout == VIRTQ_PACKED)
		return vq->packed.next_avail;
	return vq->split.avail_idx & (vq->size - 1);
}
