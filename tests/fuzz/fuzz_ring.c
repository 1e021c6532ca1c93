// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the guest's virtqueues (drivers/virtio/ring_split.c,
 * ring_packed.c) against a hostile device the input drives. The device
 * completes buffers honestly (virtio 1.2 2.7.8 / 2.8.21: at its own used
 * position, in any order), garbles completions
 * (an id that is not in flight, a slot's flags wrong, any len) while
 * keeping its own position right, or scribbles anywhere it may write.
 *
 * Invariants, besides ASan/UBSan's bounds: a token comes back only while
 * in flight, once, with len <= its writable bytes. While the device has
 * not scribbled (it may garble), an honest completion is never lost in
 * silence: get_used returns a buffer, or counts a bad completion, or the
 * queue is marked broken. At the end, an honest device completes what is
 * left and every buffer it did not garble comes back, or the queue is
 * broken.
 */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the ring from inside: the chains it keeps for the buffers in flight */
#include "drivers/virtio/virtqueue_priv.h"
#include "kernel/dma.h"

#define MAX_TOKENS 64

void *dma_alloc(size_t size, size_t align)
{
	void *p;

	if (align < sizeof(void *))
		align = sizeof(void *);
	size = (size + align - 1) & ~(align - 1);
	p = aligned_alloc(align, size ? size : align);
	if (p)
		memset(p, 0, size);
	return p;
}

void dma_free(void *p)
{
	free(p);
}

struct input {
	const uint8_t *p;
	size_t left;
};

static unsigned int take(struct input *in, unsigned int bytes)
{
	unsigned int v = 0;

	while (bytes-- && in->left) {
		v = v << 8 | *in->p++;
		in->left--;
	}
	return v;
}

enum tok_state { TOK_FREE, TOK_FLIGHT, TOK_GARBLED };

struct tok {
	enum tok_state state;
	uint32_t in_len;
};

struct dev {
	struct virtq *vq;
	struct tok toks[MAX_TOKENS];
	uint16_t used_idx; /* split: the device's used index */
	uint16_t used_pos; /* packed: the device's next used slot */
	bool used_wrap;
	bool scribbled; /* the device broke the ring: only safety holds */
};

static uint8_t mem[4096];

static struct tok *tok_of(struct dev *d, void *token)
{
	uintptr_t i = (uintptr_t)((struct tok *)token - d->toks);

	assert((struct tok *)token >= d->toks && i < MAX_TOKENS);
	return &d->toks[i];
}

static void driver_add(struct dev *d, struct input *in)
{
	unsigned int n = 1 + take(in, 1) % 4, n_out = take(in, 1) % (n + 1);
	struct vbuf bufs[4];
	struct tok *t = NULL;
	uint32_t in_len = 0;

	for (unsigned int i = 0; i < MAX_TOKENS && !t; i++)
		if (d->toks[i].state == TOK_FREE)
			t = &d->toks[i];
	if (!t)
		return;
	for (unsigned int i = 0; i < n; i++) {
		bufs[i].addr = mem + 64 * i;
		bufs[i].len = 1 + take(in, 1) % 64;
		if (i >= n_out)
			in_len += bufs[i].len;
	}
	if (virtq_add(d->vq, bufs, n_out, bufs + n_out, n - n_out, t) == 0) {
		t->state = TOK_FLIGHT;
		t->in_len = in_len;
	}
}

/* The chain (head or id) of the i-th buffer the device may complete. */
static int device_pick(struct dev *d, unsigned int i)
{
	struct virtq *vq = d->vq;
	unsigned int n = 0;

	for (unsigned int j = 0; j < vq->size; j++)
		if (vq->chain[j].token && tok_of(d, vq->chain[j].token)->state == TOK_FLIGHT)
			n++;
	if (!n)
		return -1;
	i %= n;
	for (unsigned int j = 0; j < vq->size; j++)
		if (vq->chain[j].token && tok_of(d, vq->chain[j].token)->state == TOK_FLIGHT &&
		    !i--)
			return j;
	return -1;
}

/* Write one used element at the device's position; it moves @slots on. */
static void device_write(struct dev *d, uint32_t id, uint32_t len, uint16_t slots, bool bad_flags)
{
	struct virtq *vq = d->vq;

	if (vq->layout == VIRTQ_SPLIT) {
		struct virtq_used_elem *e = &vq->split.used->ring[d->used_idx & (vq->size - 1)];

		e->id = id;
		e->len = len;
		d->used_idx++;
		__atomic_store_n(&vq->split.used->idx, d->used_idx, __ATOMIC_RELEASE);
		return;
	}
	struct virtq_packed_desc *pd = &vq->packed.desc[d->used_pos];
	uint16_t flags = d->used_wrap ? VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED : 0;

	pd->id = (uint16_t)id;
	pd->len = len;
	if (bad_flags)
		flags = d->used_wrap ? 0 : VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED;
	__atomic_store_n(&pd->flags, flags, __ATOMIC_RELEASE);
	d->used_pos += slots;
	if (d->used_pos >= vq->size) {
		d->used_pos -= vq->size;
		d->used_wrap = !d->used_wrap;
	}
}

/*
 * Complete a chain in flight the input picks. @garble: the element names
 * no buffer (or has flags for the wrong lap), the device moves on as if it
 * were right. Returns false if there was nothing to complete.
 */
static bool device_complete(struct dev *d, struct input *in, bool garble)
{
	struct virtq *vq = d->vq;
	unsigned int k = take(in, 1);
	int j = device_pick(d, k);
	uint16_t slots;
	uint32_t id, len;

	if (j < 0)
		return false;
	/* 2.8.6: the device skips the rest of the chain (split: one entry) */
	slots = vq->chain[j].ndescs;
	id = (uint32_t)j;
	len = take(in, 2) % (vq->chain[j].in_len + 1);
	if (garble) {
		id = take(in, 2);
		len = take(in, 4);
		tok_of(d, vq->chain[j].token)->state = TOK_GARBLED;
		/*
		 * An id in range names a buffer in flight now or once it is
		 * reused before the driver reads the element: a lie the
		 * driver cannot see through.
		 */
		if (id < vq->size)
			d->scribbled = true;
	}
	device_write(d, id, len, slots, garble && (k & 0x80));
	return true;
}

/* Any byte the device may write, anywhere in its areas. */
static void device_scribble(struct dev *d, struct input *in)
{
	struct virtq *vq = d->vq;
	unsigned int what = take(in, 1) % 3, off = take(in, 2);
	uint8_t *area;
	size_t len;

	if (vq->layout == VIRTQ_SPLIT) {
		area = what == 0 ? (uint8_t *)vq->split.used : (uint8_t *)vq->split.desc;
		len = what == 0 ? virtq_split_used_bytes(vq->size) :
				  sizeof(*vq->split.desc) * vq->size;
	} else {
		area = what == 0 ? (uint8_t *)vq->packed.device : (uint8_t *)vq->packed.desc;
		len = what == 0 ? sizeof(*vq->packed.device) : sizeof(*vq->packed.desc) * vq->size;
	}
	area[off % len] = (uint8_t)take(in, 1);
	/* the device's event area is a hint only; the rest can desync us */
	if (what != 0 || vq->layout == VIRTQ_SPLIT)
		d->scribbled = true;
}

/* Reap everything; true if anything came back. */
static bool driver_reap(struct dev *d)
{
	bool got = false;
	uint32_t len;
	void *token;

	for (unsigned int guard = 0; guard < 4 * MAX_TOKENS; guard++) {
		struct tok *t;

		token = virtq_get_used(d->vq, &len);
		if (!token)
			return got;
		t = tok_of(d, token);
		/*
		 * In flight, once. A garbled one only after the device named
		 * it in another element (a lie the driver cannot see through).
		 */
		assert(t->state == TOK_FLIGHT || (t->state == TOK_GARBLED && d->scribbled));
		assert(len <= t->in_len);
		t->state = TOK_FREE;
		got = true;
	}
	assert(!"get_used never ran dry");
	return got;
}

static uint64_t bad_and_broken(struct virtq *vq)
{
	struct virtq_stats st;

	virtq_get_stats(vq, &st);
	return st.bad_completions + st.broken;
}

/* An honest completion is returned, counted or breaks the queue. */
static void honest_step(struct dev *d, struct input *in)
{
	uint64_t before;
	bool scribbled = d->scribbled;

	driver_reap(d);
	before = bad_and_broken(d->vq);
	if (!device_complete(d, in, false))
		return;
	if (driver_reap(d) || scribbled || d->scribbled)
		return;
	assert(bad_and_broken(d->vq) > before || virtq_is_broken(d->vq));
}

static void finish(struct dev *d)
{
	struct input none = { NULL, 0 };
	unsigned int guard = 0;

	driver_reap(d);
	while (!d->scribbled && !virtq_is_broken(d->vq) && guard++ < 4 * MAX_TOKENS)
		if (!device_complete(d, &none, false))
			break;
		else
			driver_reap(d);
	if (d->scribbled || virtq_is_broken(d->vq))
		return;
	for (unsigned int i = 0; i < MAX_TOKENS; i++)
		assert(d->toks[i].state != TOK_FLIGHT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	unsigned int cfg = take(&in, 2);
	enum virtq_layout layout = cfg & 1 ? VIRTQ_PACKED : VIRTQ_SPLIT;
	uint16_t qsize = layout == VIRTQ_SPLIT ? 1u << (cfg >> 1 & 3) << 1 : 2 + (cfg >> 1 & 15);
	uint64_t features = 0;
	struct dev d = { .used_wrap = true };

	if (cfg & 0x100)
		features |= VIRTIO_F_EVENT_IDX;
	if (cfg & 0x200)
		features |= VIRTIO_F_INDIRECT_DESC;
	d.vq = virtq_create(layout, 0, qsize, features, NULL, NULL);
	assert(d.vq);
	if (cfg & 0x800)
		virtq_set_indirect_min(d.vq, 3);
	while (in.left) {
		switch (take(&in, 1) % 8) {
		case 0:
		case 1:
			driver_add(&d, &in);
			break;
		case 2:
		case 3:
			honest_step(&d, &in);
			break;
		case 4:
			device_complete(&d, &in, true);
			break;
		case 5:
			if (take(&in, 1) % 4 == 0)
				device_scribble(&d, &in);
			break;
		case 6:
			driver_reap(&d);
			break;
		default:
			switch (take(&in, 1) % 4) {
			case 0:
				virtq_kick_prepare(d.vq);
				break;
			case 1:
				virtq_disable_cb(d.vq);
				break;
			case 2:
				virtq_enable_cb(d.vq);
				break;
			default:
				virtq_has_used(d.vq);
				break;
			}
		}
	}
	finish(&d);
	virtq_destroy(d.vq);
	return 0;
}
