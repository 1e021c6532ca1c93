/* SPDX-License-Identifier: MIT */
/*
 * The virtqueue's private half: what virtqueue.c, ring_split.c and
 * ring_packed.c share, and drivers never include (tests/check-includes
 * says so). The _split and _packed twins of every operation, the chain
 * each buffer in flight keeps, and the helpers both layouts use. The
 * public half, with struct virtq for its inline fast paths, is
 * virtqueue.h.
 */
#ifndef DRIVERS_VIRTIO_VIRTQUEUE_PRIV_H
#define DRIVERS_VIRTIO_VIRTQUEUE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/virtqueue.h"

/* What the driver remembers about one buffer in flight. */
struct virtq_chain {
	void *token; /* NULL: not in flight */
	void *indirect; /* indirect table to free, or NULL */
	uint32_t in_len; /* device-writable bytes: bound for used len */
	uint16_t ndescs; /* ring slots the buffer occupies */
	uint16_t link; /* split: last desc of chain; packed: next free id */
};

/*
 * Twins, called by virtqueue.c (those the inline calls need are declared
 * in virtqueue.h). kick_prepare twins clear num_added and count
 * suppressed kicks; add twins check vq->broken and keep the stats
 * themselves.
 */
int virtq_init_split(struct virtq *vq);
void virtq_free_split(struct virtq *vq);
int virtq_add_split(struct virtq *vq, const struct vbuf *out, unsigned int n_out,
		    const struct vbuf *in, unsigned int n_in, void *token, bool indirect);
bool virtq_kick_prepare_split(struct virtq *vq);
void virtq_disable_cb_split(struct virtq *vq);
bool virtq_enable_cb_split(struct virtq *vq);
bool virtq_notification_owed_split(struct virtq *vq);
void virtq_print_indices_split(struct virtq *vq);

int virtq_init_packed(struct virtq *vq);
void virtq_free_packed(struct virtq *vq);
int virtq_add_packed(struct virtq *vq, const struct vbuf *out, unsigned int n_out,
		     const struct vbuf *in, unsigned int n_in, void *token, bool indirect);
bool virtq_kick_prepare_packed(struct virtq *vq);
void virtq_disable_cb_packed(struct virtq *vq);
bool virtq_enable_cb_packed(struct virtq *vq);
bool virtq_notification_owed_packed(struct virtq *vq);

int virtq_add_forged_split(struct virtq *vq, const struct virtq_desc *tmpl, unsigned int n,
			   void *token);
int virtq_add_forged_packed(struct virtq *vq, const struct virtq_desc *tmpl, unsigned int n,
			    void *token);
void virtq_forge_avail_idx_split(struct virtq *vq, uint16_t ahead);
void virtq_forge_publish_split(struct virtq *vq, uint16_t head);
unsigned int virtq_fixed_add_forged_split(struct virtq *vq, uint16_t id,
					  const struct virtq_desc *d);
unsigned int virtq_fixed_add_forged_packed(struct virtq *vq, uint16_t id,
					   const struct virtq_desc *d);

/* Fixed-layout twins. */
void virtq_fixed_set_split(struct virtq *vq, uint16_t id, const struct virtq_fixed_buf *fb);
unsigned int virtq_fixed_add_split(struct virtq *vq, const uint16_t *ids, unsigned int n);
unsigned int virtq_fixed_reclaim_split(struct virtq *vq, uint16_t *ids, unsigned int max,
				       unsigned int *bad);
unsigned int virtq_fixed_add_packed(struct virtq *vq, const struct virtq_fixed_buf *bufs,
				    const uint16_t *ids, unsigned int n);
unsigned int virtq_fixed_reclaim_packed(struct virtq *vq, uint16_t *ids, unsigned int max,
					unsigned int *bad);

/* Shared helpers (virtqueue.c). */
/* A completion named no buffer in flight: count it; false if now broken. */
bool virtq_count_lost(struct virtq *vq);
uint32_t virtq_in_len(const struct vbuf *in, unsigned int n_in);
/*
 * An indirect table of @n descriptors for the buffer under head (split)
 * or id (packed) @slot; NULL without memory. virtq_table_free gives it up.
 */
void *virtq_table_alloc(struct virtq *vq, uint16_t slot, unsigned int n);
void virtq_table_free(struct virtq *vq, void *table);
/* A completed chain's indirect table goes back; returns @token. */
void *virtq_free_indirect(struct virtq *vq, struct virtq_chain *c, void *token);

/*
 * The device-writable bytes of a one-descriptor buffer: @len if @flags
 * has VIRTQ_DESC_F_WRITE, else 0, without a branch (a mask from the bit).
 */
static inline uint32_t virtq_one_in_len(uint32_t len, uint16_t flags)
{
	_Static_assert(VIRTQ_DESC_F_WRITE == 2, "the shift below takes bit 1");
	return len & -(uint32_t)((flags >> 1) & 1);
}

/*
 * A completion's len checked against the chain's device-writable bytes
 * (2.7.8.2 / 2.8.4). A len past them is a lie: the buffer comes back with
 * no data, counted. For a chain with nothing writable len means nothing;
 * some back ends (DPDK's packed vhost, older Linux vhost) report the bytes
 * they read there, so it is ignored rather than counted as bad.
 */
static inline uint32_t virtq_used_len(struct virtq *vq, const struct virtq_chain *c,
				      uint32_t used_len)
{
	if (used_len <= c->in_len)
		return used_len;
	if (c->in_len)
		vq->stats.bad_completions++;
	return 0;
}

/*
 * The token of a fixed buffer while it is in flight: its chain entry, so
 * marking it costs no instruction beyond the store (what
 * virtq_detach_unused returns for a fixed buffer; id = entry - vq->chain).
 */
static inline void *virtq_fixed_token(struct virtq_chain *c)
{
	return c;
}

#endif
