/* SPDX-License-Identifier: MIT */
/*
 * One virtqueue interface over two layouts: the split ring (virtio 1.2,
 * 2.7; ring_split.c) and the packed ring (2.8; ring_packed.c). The layout
 * is chosen when the queue is created; every operation below has a _split
 * and a _packed twin and virtqueue.c picks one. The twins are in
 * virtqueue_priv.h, the ring's private half, which drivers do not
 * include; only those the inline fast paths call are at the end here.
 *
 * Usage (driver side, one CPU, no locking):
 *	vq = virtq_create(VIRTQ_PACKED, 0, 256, features, notify, priv);
 *	program virtq_desc_addr/driver_addr/device_addr into the transport;
 *	virtq_add(vq, out, n_out, in, n_in, token);   ... more adds ...
 *	virtq_kick(vq);                 (or kick_prepare now, notify later)
 *	while ((token = virtq_get_used(vq, &len))) ...;
 *
 * Interrupt mode vs. polling mode is per queue: virtq_disable_cb() asks the
 * device for no used-buffer notifications (polling), virtq_enable_cb()
 * asks for them again and returns false if used buffers raced in, in which
 * case the caller polls once more.
 *
 * Everything the device writes is untrusted: a completion with an id that
 * is out of range or not in flight, a length larger than the device-
 * writable buffers, inconsistent packed flags or a used index that moves
 * further than the buffers in flight is counted in bad_completions and
 * dropped; the queue keeps working. A too-large length returns the buffer
 * with len 0. A buffer whose completion was garbled is never handed back
 * nor reused (the device may still own it): the ring shrinks by its slots.
 * A packed-ring element the driver cannot skip safely (garbled while a
 * multi-slot chain is in flight) marks the queue broken instead of
 * stalling it (virtq_is_broken), and so does losing half the ring's
 * buffers to garbled completions (split or packed) before the device
 * drains it: the transport then resets the device (virtio_pci.c, the
 * virtio-recover context).
 *
 * VIRTIO_F_IN_ORDER (2.7.9, 2.8.8) is not implemented: a device offering it
 * is not asked for it (3.1.1: the driver accepts the features it knows).
 */
#ifndef DRIVERS_VIRTIO_VIRTQUEUE_H
#define DRIVERS_VIRTIO_VIRTQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/virtio/virtio_ring_defs.h"
#include "kernel/barrier.h"
#include "kernel/percpu.h"
#include "kernel/poll.h"

enum virtq_layout {
	VIRTQ_SPLIT,
	VIRTQ_PACKED,
};

/* Ring features this code implements; a transport offers only these. */
#define VIRTQ_FEATURES                                                         \
	(VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC) | VIRTIO_BIT(VIRTIO_F_EVENT_IDX) | \
	 VIRTIO_BIT(VIRTIO_F_RING_PACKED))

/* One guest buffer; the ring hands virt_to_phys(addr) to the device. */
struct vbuf {
	void *addr;
	uint32_t len;
};

struct virtq_stats {
	uint64_t added; /* buffers (chains) made available */
	uint64_t completed; /* buffers returned by virtq_get_used (split: derived) */
	uint64_t kicks; /* available buffer notifications sent */
	uint64_t kicks_suppressed; /* adds the device said need no kick */
	uint64_t interrupts; /* used buffer notifications received */
	uint64_t bad_completions; /* device wrote nonsense, dropped */
	uint64_t full; /* virtq_add failed with -ENOSPC */
	uint64_t indirect; /* buffers that went into an indirect table */
	uint64_t broken; /* completions no resync could follow: queue stopped */
	uint64_t wrong_cpu; /* operations refused: not on the queue's owner */
	uint64_t missed_notifications; /* owed by the device, found by the watchdog */
};

struct virtq;

/*
 * @size: split: a power of two up to 32768; packed: 1..32768.
 * @features: the negotiated features; only VIRTQ_FEATURES matter here.
 * Returns NULL if the size is invalid or memory runs out.
 */
struct virtq *virtq_create(enum virtq_layout layout, uint16_t index, uint16_t size,
			   uint64_t features, void (*notify)(struct virtq *), void *priv);
void virtq_destroy(struct virtq *vq);

/*
 * Make one buffer available: @n_out device-readable parts followed by
 * @n_in device-writable parts. @token (non-NULL) comes back from
 * virtq_get_used. Returns 0, -ENOSPC when the ring has no room now, or
 * -EINVAL for a buffer no ring can take (empty, longer than the queue).
 */
static inline int virtq_add(struct virtq *vq, const struct vbuf *out, unsigned int n_out,
			    const struct vbuf *in, unsigned int n_in, void *token);

/* True if the device wants a notification for what was added since. */
bool virtq_kick_prepare(struct virtq *vq);
/* Send the notification (calls the transport's notify hook). */
static inline void virtq_notify(struct virtq *vq);
/* kick_prepare + notify; returns whether a notification was sent. */
static inline bool virtq_kick(struct virtq *vq);

/* One completed buffer's token and used length (@len may be NULL), or NULL if none. */
static inline void *virtq_get_used(struct virtq *vq, uint32_t *len);
/* True if virtq_get_used has something (or a bad entry) to look at. */
static inline bool virtq_has_used(struct virtq *vq);
/* Polling mode: ask for no used buffer notifications (a hint, 2.7.7/2.8.10). */
void virtq_disable_cb(struct virtq *vq);
/* Interrupt mode; false if used buffers are already there: poll again. */
bool virtq_enable_cb(struct virtq *vq);

/*
 * True once the device wrote a completion the driver cannot resynchronise
 * after (packed ring: a garbled element while a multi-slot chain is in
 * flight, so where the next element sits is unknown). From then on
 * get_used returns NULL, has_used false and add -EIO: the queue never
 * stalls silently; the driver resets the device and sets up new queues.
 */
bool virtq_is_broken(const struct virtq *vq);
/*
 * @fn is called each time a queue is marked broken (the transport's
 * recovery), on the CPU that owns the queue; set once at boot.
 */
void virtq_on_broken(void (*fn)(void));

/*
 * Ownership: a queue belongs to one CPU, the one that created it until
 * virtq_set_owner hands it on (at probe, before the device runs it).
 * What code elsewhere may call, the producer's side (add, kick), checks
 * it runs there: from another CPU it is refused and counted in
 * stats.wrong_cpu, never done. The consumer's side (get_used, reclaim)
 * runs in the queue's own poll context, which only its owner runs
 * (kernel/poll.h).
 */
void virtq_set_owner(struct virtq *vq, const struct percpu *cpu);
/* The owner's CPU index (0 before any CPU state exists). */
unsigned int virtq_owner_index(const struct virtq *vq);

/*
 * The watchdog's question: used entries are there that the device had to
 * notify about, given what the driver published (2.7.7.2: used_event
 * passed or interrupts on; 2.8.10: flags ENABLE, or DESC at the element
 * written). Read as the device reads it now: a driver that turned
 * notifications back on re-checked the ring then (virtq_enable_cb), so
 * an entry still waiting came after it was on.
 */
bool virtq_notification_owed(struct virtq *vq);
/*
 * The watchdog's verdict on @vq (kernel/poll.h): POLL_IDLE with nothing
 * used; POLL_OWED when its notification (@interrupts: it has them) was
 * owed and none came since the driver asked for it, counted in
 * stats.missed_notifications when @count; POLL_LOST for any other work
 * waiting (one that did interrupt was left by the guest).
 */
enum poll_verdict virtq_watch(struct virtq *vq, bool interrupts, bool count);

/* The transport calls this on each interrupt for this queue (counts it). */
void virtq_interrupt(struct virtq *vq);
/* What virtq_interrupt counts, for an interrupt entry that counts itself. */
uint64_t *virtq_interrupt_counter(struct virtq *vq);

/*
 * After the device was reset: the token of one buffer still made
 * available, or NULL when none is left, so the driver can free what it
 * posted (Linux's virtqueue_detach_unused_buf). Only before virtq_destroy,
 * and never while the device runs: the ring is not updated.
 */
void *virtq_detach_unused(struct virtq *vq);

/* Descriptor slots free now (a chain of n takes n, or 1 if indirect). */
static inline unsigned int virtq_free_slots(const struct virtq *vq);

/*
 * Chains of at least @min_descs descriptors go into an indirect table when
 * VIRTIO_F_INDIRECT_DESC is negotiated; 0 turns indirect off. Default 2.
 */
void virtq_set_indirect_min(struct virtq *vq, unsigned int min_descs);

/*
 * Hostile-driver support (hostile.h: the attack modes and the fuzzer),
 * never on a data path: a chain of @n descriptors written as @tmpl says (a next below @n is the
 * chain's own k-th descriptor; packed rings: the next @n slots, and a next
 * of VIRTQ_FORGE_WRAP_LIE gives that descriptor the other wrap counter's
 * avail/used bits), tracked like any buffer so its completion frees it;
 * and the split avail index published @ahead past ours (false on a
 * packed ring). Producer-side writes like virtq_add: on the queue's
 * owner only (elsewhere -EPERM or false, counted in stats.wrong_cpu).
 */
#define VIRTQ_FORGE_WRAP_LIE 0xfffe
int virtq_add_forged(struct virtq *vq, const struct virtq_desc *tmpl, unsigned int n, void *token);
bool virtq_forge_avail_idx(struct virtq *vq, uint16_t ahead);
/*
 * Stop the queue for good (counted in stats.broken), as if the device
 * had garbled it: an attack whose device went silent has the transport
 * reset it (virtio-recover). The ring marks its own queues this way.
 */
void virtq_mark_broken(struct virtq *vq);
/* The slot the next buffer starts in (packed: next_avail; split: the avail ring entry). */
uint16_t virtq_forge_next_slot(const struct virtq *vq);
/*
 * Split: an available ring entry naming @head, which names no chain of
 * ours (beyond the ring, or in flight already); false on a packed ring.
 */
bool virtq_forge_publish(struct virtq *vq, uint16_t head);
/*
 * A fixed-layout queue (below): buffer @id made available with a
 * descriptor exactly as @d says (packed: VIRTQ_FORGE_WRAP_LIE as @d's
 * next lies about the wrap counter). 0, -EBUSY while @id is in flight,
 * -ENOSPC, -EIO on a broken queue.
 */
struct virtq_fixed_buf;
int virtq_fixed_add_forged(struct virtq *vq, struct virtq_fixed_buf *bufs, uint16_t id,
			   const struct virtq_desc *d);

/* Guest-physical addresses of the three areas (4.1.4.3 queue_desc etc.). */
uint64_t virtq_desc_addr(const struct virtq *vq);
uint64_t virtq_driver_addr(const struct virtq *vq);
uint64_t virtq_device_addr(const struct virtq *vq);

enum virtq_layout virtq_layout(const struct virtq *vq);
uint16_t virtq_size(const struct virtq *vq);
static inline uint16_t virtq_index(const struct virtq *vq);
uint64_t virtq_features(const struct virtq *vq);
static inline void *virtq_priv(const struct virtq *vq);
void virtq_get_stats(const struct virtq *vq, struct virtq_stats *st);
/* One console line of ring indices, each side's (split; nothing for packed). */
void virtq_print_indices(struct virtq *vq);

/*
 * ---- Fixed layout: a queue whose buffers never move ----
 *
 * For a transmit queue whose every buffer is one device-readable
 * descriptor in a buffer the driver keeps for good (virtio-net TX slots):
 * buffer id i is slot i, so adding is writing ids, not descriptors, and a
 * completion needs only its id checked. A queue either uses these calls
 * for all its buffers from creation on, or never; virtq_add on it is a
 * bug. detach_unused, has_used, kick and the broken-queue rules behave as
 * for any queue (an id that comes back out of range or not in flight is
 * counted in bad_completions and dropped, virtq_count_lost).
 *
 * @bufs is the driver's table, one entry per id (virtq_size of them),
 * written only by virtq_fixed_set: what the descriptor of each id holds.
 */
struct virtq_fixed_buf {
	uint64_t addr; /* guest-physical */
	uint32_t len;
	uint16_t id; /* packed: len, id and a zero pad are copied as one word */
	uint16_t pad;
};

/*
 * Point buffer @id at @b (device-readable). Only while @id is not in
 * flight; -EINVAL for an id out of range or an empty buffer, -EBUSY if
 * the device owns it.
 */
int virtq_fixed_set(struct virtq *vq, struct virtq_fixed_buf *bufs, uint16_t id,
		    const struct vbuf *b);
/*
 * Make @n buffers available, ids[0..n-1] (each set, none in flight), with
 * one barrier and one index or head-flags publish for the batch. Returns
 * how many were added: fewer when the ring is full or an id is in flight
 * already (counted in stats.full), 0 on a broken queue.
 */
unsigned int virtq_fixed_add(struct virtq *vq, const struct virtq_fixed_buf *bufs,
			     const uint16_t *ids, unsigned int n);
/*
 * Take back up to @max completed buffers: their ids into @ids. The used
 * index (split) is read once per call; used lengths mean nothing here.
 * @bad (if not NULL) gets the garbled completions dropped by this call.
 */
unsigned int virtq_fixed_reclaim(struct virtq *vq, uint16_t *ids, unsigned int max,
				 unsigned int *bad);

/*
 * ---- Inline fast paths ----
 *
 * struct virtq is complete here, with both layouts' state, only because
 * the inline calls below read it: the choice between the twins then
 * costs a compare instead of a call through virtqueue.c on every buffer
 * (the 64 B round trip's instruction count depends on it). Drivers use
 * the functions above and never the fields. The rest of the ring (its
 * chains, the other twins, the helpers) is in virtqueue_priv.h, which
 * only virtqueue.c, ring_split.c and ring_packed.c include.
 */

struct virtq_chain; /* virtqueue_priv.h */

struct virtq_split {
	struct virtq_desc *desc;
	struct virtq_avail *avail;
	struct virtq_used *used;
	/* desc[i].next as we wrote it; the table is device-visible memory */
	uint16_t *next;
	uint16_t free_head;
	uint16_t avail_idx; /* our copy of avail->idx */
	uint16_t last_used; /* next used->ring entry to look at */
	/*
	 * used->idx as last read and checked: entries up to it are there to
	 * take without reading the index again (one read per batch). Equal
	 * to last_used when none are known, and always on a broken queue.
	 */
	uint16_t used_shadow;
	uint16_t avail_flags; /* our copy of avail->flags */
	uint16_t in_flight; /* chains the device owns */
	uint16_t bad_used_idx; /* last bogus used->idx counted */
	bool bad_used_idx_seen;
};

struct virtq_packed {
	struct virtq_packed_desc *desc;
	struct virtq_packed_event *driver; /* we write: interrupts */
	struct virtq_packed_event *device; /* device writes: kicks */
	uint16_t next_avail; /* slot the next buffer starts in */
	bool avail_wrap; /* driver ring wrap counter, 2.8.1 */
	uint16_t last_used; /* slot the next used element appears in */
	bool used_wrap;
	uint16_t free_id; /* head of the buffer id free list */
	uint16_t event_flags; /* our copy of driver->flags */
	uint16_t pending; /* slots made available, not yet seen used */
	/* Chains of more than one slot in flight or leaked: while there are
	 * any, a garbled element cannot be skipped (its size is unknown). */
	uint16_t multi_slot;
};

struct virtq {
	const struct percpu *owner; /* the CPU every change runs on */
	enum virtq_layout layout;
	uint16_t index;
	uint16_t size;
	uint64_t features;
	bool event_idx;
	bool cb_disabled;
	bool broken; /* see virtq_is_broken */
	uint16_t indirect_min; /* 0: never indirect */
	/* num_free and num_added apart: gcc -O2 would merge the two updates
	 * of an add into one vector add costing twice the instructions. */
	unsigned int num_free; /* free descriptor slots */
	unsigned int lost; /* buffers lost to garbled completions */
	uint32_t num_added; /* slots (packed) / chains (split) since kick */
	void (*notify)(struct virtq *vq);
	void *priv;
	struct virtq_chain *chain; /* by head index (split) or id (packed) */
	void *slot_tables; /* indirect tables by head or id (virtq_table_alloc) */
	struct virtq_stats stats;
	/*
	 * stats.interrupts when the driver last asked for one (used_event,
	 * flags): more since means the device did notify (virtq_watch).
	 */
	uint64_t irqs_asked;
	union {
		struct virtq_split split;
		struct virtq_packed packed;
	};
};

/*
 * The twins and helpers the inline calls below go to; nothing else calls
 * them. The _one adds take a single descriptor (never indirect) the
 * inline virtq_add_one has checked (a token, room, a queue not broken),
 * as values: @flags is 0 or VIRTQ_DESC_F_WRITE (the same bit in both
 * layouts: device-writable, @len bounds the used length). The get_used
 * and has_used twins check vq->broken and keep the stats themselves.
 */
void virtq_add_one_split(struct virtq *vq, void *addr, uint32_t len, uint16_t flags, void *token);
void virtq_add_one_packed(struct virtq *vq, void *addr, uint32_t len, uint16_t flags, void *token);
bool virtq_kick_split(struct virtq *vq);
bool virtq_kick_packed(struct virtq *vq);
void *virtq_get_used_split(struct virtq *vq, uint32_t *len);
void *virtq_get_used_packed(struct virtq *vq, uint32_t *len);
/* used->idx moved past last_used: check it and take it as the shadow. */
bool virtq_has_used_split(struct virtq *vq);
bool virtq_has_used_packed(struct virtq *vq);
/* Buffers of more or fewer than one descriptor (virtqueue.c). */
int virtq_add_chain(struct virtq *vq, const struct vbuf *out, unsigned int n_out,
		    const struct vbuf *in, unsigned int n_in, void *token);
/* Why a one-descriptor add cannot go ahead: its error, counted like virtq_add_chain. */
int virtq_add_refused(struct virtq *vq, const void *token);

/*
 * Read on every round trip (the RX repost and its kick decision, the
 * transport's notify): a load each, not a call.
 */
static inline unsigned int virtq_free_slots(const struct virtq *vq)
{
	return vq->num_free;
}

static inline uint16_t virtq_index(const struct virtq *vq)
{
	return vq->index;
}

static inline void *virtq_priv(const struct virtq *vq)
{
	return vq->priv;
}

/*
 * The calling CPU, for the owner check. The guest's through %gs; unit
 * tests and fuzzers, which link the rings into a host program, name one
 * (virtqueue.c).
 */
#ifdef __RINGSIDE_KERNEL__
static inline const struct percpu *virtq_this_cpu(void)
{
	return this_cpu();
}
#else
extern const struct percpu *virtq_test_cpu;
static inline const struct percpu *virtq_this_cpu(void)
{
	return virtq_test_cpu;
}
#endif

/* An operation from a CPU that does not own @vq: counted, and refused. */
void *virtq_wrong_cpu(struct virtq *vq);

static inline bool virtq_owned(const struct virtq *vq)
{
	return vq->owner == virtq_this_cpu();
}

/*
 * The checks are made here, where a caller's token it already knows is
 * not NULL and its constant @write cost nothing, and the twin gets the
 * buffer as values, not through memory.
 */
static inline int virtq_add_one(struct virtq *vq, const struct vbuf *b, bool write, void *token)
{
	uint16_t flags = write ? VIRTQ_DESC_F_WRITE : 0;

	if (!token || vq->broken || !vq->num_free || !virtq_owned(vq))
		return virtq_add_refused(vq, token);
	if (vq->layout == VIRTQ_SPLIT)
		virtq_add_one_split(vq, b->addr, b->len, flags, token);
	else
		virtq_add_one_packed(vq, b->addr, b->len, flags, token);
	return 0;
}

static inline int virtq_add(struct virtq *vq, const struct vbuf *out, unsigned int n_out,
			    const struct vbuf *in, unsigned int n_in, void *token)
{
	/* One descriptor, the common case (never indirect: indirect_min >= 2). */
	if (n_out == 1 && n_in == 0)
		return virtq_add_one(vq, out, false, token);
	if (n_out == 0 && n_in == 1)
		return virtq_add_one(vq, in, true, token);
	return virtq_add_chain(vq, out, n_out, in, n_in, token);
}

static inline void virtq_notify(struct virtq *vq)
{
	vq->stats.kicks++;
	if (vq->notify)
		vq->notify(vq);
}

static inline bool virtq_kick(struct virtq *vq)
{
	if (!vq->num_added)
		return false;
	if (!virtq_owned(vq))
		return virtq_wrong_cpu(vq) != NULL;
	if (vq->layout == VIRTQ_SPLIT)
		return virtq_kick_split(vq);
	return virtq_kick_packed(vq);
}

/* Split: the end of every reap (nothing known, used->idx unchanged) costs no call. */
static inline void *virtq_get_used(struct virtq *vq, uint32_t *len)
{
	const struct virtq_split *s = &vq->split;

	if (vq->layout != VIRTQ_SPLIT)
		return virtq_get_used_packed(vq, len);
	if (s->used_shadow == s->last_used && READ_ONCE(s->used->idx) == s->last_used)
		return NULL;
	return virtq_get_used_split(vq, len);
}

/*
 * Packed, buffers pending, the slot at last_used still marked available
 * (2.8.1; the idle case): one read, no call. Everything else, a broken
 * queue included, is looked at by virtq_has_used_packed.
 */
static inline bool virtq_has_used_packed_inline(struct virtq *vq)
{
	const struct virtq_packed *p = &vq->packed;
	uint16_t own = READ_ONCE(p->desc[p->last_used].flags) &
		       (VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED);

	if (p->pending && own == (p->used_wrap ? VIRTQ_DESC_F_AVAIL : VIRTQ_DESC_F_USED))
		return false;
	return virtq_has_used_packed(vq);
}

/*
 * Split: entries known from the last index read need no memory access of
 * the device's; an unchanged used->idx (the idle case) needs one read and
 * no call. An index moved by no more than the buffers in flight (the
 * check of virtq_has_used_split) becomes the shadow here; anything else
 * (a broken queue, a bogus index, or the first good one after a bogus
 * one) goes to virtq_has_used_split to be counted.
 */
static inline bool virtq_has_used(struct virtq *vq)
{
	struct virtq_split *s = &vq->split;
	uint16_t used_idx;

	if (vq->layout != VIRTQ_SPLIT)
		return virtq_has_used_packed_inline(vq);
	if (s->used_shadow != s->last_used)
		return true;
	used_idx = READ_ONCE(s->used->idx);
	if (used_idx == s->last_used)
		return false;
	if (vq->broken || s->bad_used_idx_seen ||
	    (uint16_t)(used_idx - s->last_used) > s->in_flight)
		return virtq_has_used_split(vq);
	s->used_shadow = used_idx;
	/* 2.7.8: read the entries only after idx says they are there. */
	virt_rmb();
	return true;
}

#endif
