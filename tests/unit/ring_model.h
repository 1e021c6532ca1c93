/* SPDX-License-Identifier: MIT */
/*
 * A device-side model of both virtqueue layouts for unit tests. It reads
 * what the driver made available (chains, indirect tables) the way a
 * device must (virtio 1.2 2.7 / 2.8), checks the driver kept the rules
 * (counted in errors), writes used elements in any order the test asks,
 * and decides used-buffer notifications from the driver's suppression
 * fields. It can also misbehave on purpose (raw used elements, bogus
 * indices and flags).
 */
#ifndef TESTS_UNIT_RING_MODEL_H
#define TESTS_UNIT_RING_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/virtio/virtqueue.h"
#include "host/vring/vring.h"

struct model_seg {
	void *addr;
	uint32_t len;
	bool write;
};

/* One buffer the device took and has not completed. */
struct model_buf {
	uint16_t id; /* split: head index; packed: buffer id */
	uint16_t ndescs; /* ring slots it occupied */
	bool indirect;
	unsigned int nseg;
	struct model_seg *seg;
	uint32_t out_len; /* device-readable bytes */
	uint32_t in_len; /* device-writable bytes */
};

enum model_kick_mode {
	MODEL_KICK_ALWAYS, /* no suppression */
	MODEL_KICK_NEVER, /* NO_NOTIFY / DISABLE */
	MODEL_KICK_EVENT, /* EVENT_IDX: kick for the next new buffer */
};

struct ring_model {
	/* the device side of the ring: host/vring reads what is available */
	struct guest_mem mem;
	struct device_ring dev;
	struct vq_elem *elem;

	enum virtq_layout layout;
	uint16_t size;
	bool event_idx;
	bool indirect_ok;
	enum model_kick_mode kick_mode;

	/* split (last_avail, avail_pos, avail_wrap mirror dev after each fetch) */
	struct virtq_desc *desc;
	struct virtq_avail *avail;
	struct virtq_used *used;
	uint16_t last_avail;
	uint16_t used_idx; /* written, maybe not published */
	uint16_t used_published;

	/* packed */
	struct virtq_packed_desc *pdesc;
	struct virtq_packed_event *driver;
	struct virtq_packed_event *device;
	uint16_t avail_pos;
	bool avail_wrap;
	uint16_t used_pos;
	bool used_wrap;
	uint32_t used_unpublished; /* slots written since last publish */

	struct model_buf *held; /* in fetch order */
	unsigned int n_held;

	uint64_t fetched;
	uint64_t interrupts; /* used buffer notifications sent */
	uint64_t errors; /* driver broke a rule; tests want 0 */
};

void ring_model_init(struct ring_model *m, struct virtq *vq);
void ring_model_destroy(struct ring_model *m);

void ring_model_set_kick_mode(struct ring_model *m, enum model_kick_mode mode);
/* Raw avail_event (split) / off_wrap (packed, flags DESC). */
void ring_model_set_avail_event(struct ring_model *m, uint16_t off, bool wrap);

/* Take one available buffer into held[]; 1, or 0 if none (or error). */
int ring_model_fetch(struct ring_model *m);
unsigned int ring_model_fetch_all(struct ring_model *m);

/* Write a used element for held[i] (removed from held[]), not published. */
void ring_model_use(struct ring_model *m, unsigned int i, uint32_t len);
/*
 * IN_ORDER (2.7.9, 2.8.8): use held[0..n-1] (the oldest n, in the order
 * made available) with one used element for held[n-1] carrying @len.
 */
void ring_model_use_batch(struct ring_model *m, unsigned int n, uint32_t len);
/* Make written elements visible (split: used->idx); true = notify driver. */
bool ring_model_publish(struct ring_model *m);
/* use + publish */
bool ring_model_complete(struct ring_model *m, unsigned int i, uint32_t len);

/* Misbehaviour: forget held[i] without using it. */
void ring_model_drop(struct ring_model *m, unsigned int i);
/* Misbehaviour: a used element with any id/len, occupying @skip slots. */
void ring_model_use_raw(struct ring_model *m, uint32_t id, uint32_t len, uint16_t skip);

/* tests/unit/stub_dma.c: dma_alloc'd blocks not yet freed; make this
 * many next dma_alloc calls fail. */
extern long stub_dma_live;
extern int stub_dma_fail_next;

/* Gather the readable bytes of @b (at most @max). */
size_t model_buf_read(const struct model_buf *b, void *dst, size_t max);
/* Scatter @len bytes into the writable parts of @b; returns bytes put. */
uint32_t model_buf_write(struct model_buf *b, const void *src, uint32_t len);

/*
 * A queue and a model wired together, the transport's notify hook
 * counting kicks. NULL if the queue could not be created.
 */
struct ring_fixture {
	struct virtq *vq;
	struct ring_model m;
	unsigned long kicks;
};

struct ring_fixture *ring_fixture_new(enum virtq_layout layout, uint16_t size, uint64_t features);
void ring_fixture_free(struct ring_fixture *fx);

/*
 * Push @n one-descriptor buffers (8 writable bytes each) through the queue
 * in order: add, kick, fetch, complete with len 8, reap. Returns how many
 * came back with the right token and length.
 */
unsigned int ring_fixture_cycle(struct ring_fixture *fx, unsigned int n);

#endif
