// SPDX-License-Identifier: MIT
/*
 * Device-side model of split and packed virtqueues for the unit tests.
 * Available buffers are read by host/vring, the back end's device-side
 * ring code (written from the device's half of virtio 1.2 2.7 and 2.8,
 * independently of the guest's ring_split.c / ring_packed.c, so the two
 * check each other); this file adds what a test device needs on top:
 * used elements in any order, batches, deferred publishing, raw
 * (hostile) used entries and the notification decisions.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/barrier.h"
#include "kernel/dma.h"
#include "ring_model.h"

/*
 * In unit tests a buffer's "physical" address is its virtual address
 * (kernel/dma.h), so guest memory is the whole address space but 0, and
 * ring addresses (front-end "user" addresses in vhost-user) are the same.
 */
static void model_map_device_ring(struct ring_model *m, struct virtq *vq)
{
	struct device_ring *vr = &m->dev;

	m->mem.nregions = 1;
	m->mem.r[0] = (struct guest_region){
		.gpa = 1,
		.size = UINTPTR_MAX - 1,
		.uaddr = 1,
		.host = (uint8_t *)1,
	};
	vr->num = m->size;
	vr->packed = m->layout == VIRTQ_PACKED;
	vr->event_idx = m->event_idx;
	vr->indirect = m->indirect_ok;
	vr->desc_uaddr = virtq_desc_addr(vq);
	vr->avail_uaddr = virtq_driver_addr(vq);
	vr->used_uaddr = virtq_device_addr(vq);
	/* vhost-user SET_VRING_BASE: packed wrap counters start at 1 (2.8.1) */
	vring_set_base(vr, vr->packed ? 1u << 15 : 0);
	if (!vring_map(vr, &m->mem))
		m->errors++;
}

void ring_model_init(struct ring_model *m, struct virtq *vq)
{
	uint64_t f = virtq_features(vq);

	memset(m, 0, sizeof(*m));
	m->layout = virtq_layout(vq);
	m->size = virtq_size(vq);
	m->event_idx = f & VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
	m->indirect_ok = f & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC);
	m->held = calloc(m->size + 1u, sizeof(*m->held));
	m->elem = malloc(sizeof(*m->elem));
	if (m->layout == VIRTQ_SPLIT) {
		m->desc = phys_to_virt(virtq_desc_addr(vq));
		m->avail = phys_to_virt(virtq_driver_addr(vq));
		m->used = phys_to_virt(virtq_device_addr(vq));
	} else {
		m->pdesc = phys_to_virt(virtq_desc_addr(vq));
		m->driver = phys_to_virt(virtq_driver_addr(vq));
		m->device = phys_to_virt(virtq_device_addr(vq));
		m->avail_wrap = true;
		m->used_wrap = true;
	}
	model_map_device_ring(m, vq);
}

void ring_model_destroy(struct ring_model *m)
{
	unsigned int i;

	for (i = 0; i < m->n_held; i++)
		free(m->held[i].seg);
	free(m->held);
	free(m->elem);
}

/* ---- kick (available buffer notification) suppression, device side ---- */

static void model_write_kick_event(struct ring_model *m)
{
	if (m->kick_mode != MODEL_KICK_EVENT)
		return;
	/* "Notify me when you add the buffer I will look at next." */
	if (m->layout == VIRTQ_SPLIT)
		ring_model_set_avail_event(m, m->last_avail, false);
	else
		ring_model_set_avail_event(m, m->avail_pos, m->avail_wrap);
}

void ring_model_set_kick_mode(struct ring_model *m, enum model_kick_mode mode)
{
	m->kick_mode = mode;
	if (m->layout == VIRTQ_SPLIT) {
		/* 2.7.10.2: with EVENT_IDX the device uses avail_event only. */
		m->used->flags =
			mode == MODEL_KICK_NEVER && !m->event_idx ? VIRTQ_USED_F_NO_NOTIFY : 0;
		if (mode == MODEL_KICK_NEVER && m->event_idx)
			*virtq_avail_event(m->used, m->size) = (uint16_t)(m->last_avail - 1);
	} else {
		m->device->flags = mode == MODEL_KICK_NEVER ? RING_EVENT_FLAGS_DISABLE :
				   mode == MODEL_KICK_EVENT ? RING_EVENT_FLAGS_DESC :
							      RING_EVENT_FLAGS_ENABLE;
	}
	model_write_kick_event(m);
	virt_mb();
}

void ring_model_set_avail_event(struct ring_model *m, uint16_t off, bool wrap)
{
	if (m->layout == VIRTQ_SPLIT) {
		*virtq_avail_event(m->used, m->size) = off;
	} else {
		m->device->off_wrap = (uint16_t)(off | (uint16_t)wrap << RING_EVENT_WRAP_SHIFT);
	}
	virt_mb();
}

/* ---- reading available buffers: host/vring, the back end's ring code ---- */

static void model_add_segs(struct model_buf *b, const struct iovec *iov, unsigned int n, bool write)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct model_seg *s = &b->seg[b->nseg++];

		s->addr = iov[i].iov_base;
		s->len = (uint32_t)iov[i].iov_len;
		s->write = write;
	}
}

/*
 * Stricter than a device must be, to catch our driver: 2.8.19 makes WRITE
 * the only valid flag in a packed indirect table (a device ignores others).
 */
static bool model_packed_table_clean(const struct ring_model *m, const struct vq_elem *e)
{
	const struct virtq_packed_desc *head = &m->pdesc[e->prev_avail];
	const struct virtq_packed_desc *t = phys_to_virt(head->addr);
	unsigned int i;

	for (i = 0; i < head->len / sizeof(*t); i++)
		if (t[i].flags & ~VIRTQ_DESC_F_WRITE)
			return false;
	return true;
}

/* The popped chain as a held buffer; -1 if the model's own checks fail. */
static int model_take_elem(struct ring_model *m, struct model_buf *b, const struct vq_elem *e)
{
	b->id = e->id;
	b->ndescs = e->ndesc;
	b->indirect = e->indirect;
	b->out_len = (uint32_t)e->out_len;
	b->in_len = (uint32_t)e->in_len;
	b->seg = malloc((e->n_out + e->n_in + 1) * sizeof(*b->seg));
	if (!b->seg)
		return -1;
	model_add_segs(b, e->out, e->n_out, false);
	model_add_segs(b, e->in, e->n_in, true);
	if (m->layout == VIRTQ_PACKED && e->indirect && !model_packed_table_clean(m, e))
		return -1;
	return 1;
}

/*
 * The back end stops a ring the driver broke; a test device goes on (the
 * chaos tests keep traffic running over a scribbled ring): skip the head
 * that failed, as the rest of the chain may never be valid.
 */
static void model_skip_bad_head(struct ring_model *m)
{
	struct device_ring *vr = &m->dev;

	vr->broken = false;
	if (++vr->last_avail == vr->num && vr->packed) {
		vr->last_avail = 0;
		vr->avail_wrap = !vr->avail_wrap;
	}
}

int ring_model_fetch(struct ring_model *m)
{
	struct model_buf *b = &m->held[m->n_held];
	int r;

	memset(b, 0, sizeof(*b));
	r = vring_pop(&m->dev, m->elem);
	if (r < 0)
		model_skip_bad_head(m);
	if (r > 0)
		r = model_take_elem(m, b, m->elem);
	/* held[] has one spare entry: more than size in flight is a bug. */
	if (r > 0 && m->n_held == m->size)
		r = -1;
	if (m->layout == VIRTQ_SPLIT) {
		m->last_avail = m->dev.last_avail;
	} else {
		m->avail_pos = m->dev.last_avail;
		m->avail_wrap = m->dev.avail_wrap;
	}
	if (r <= 0) {
		free(b->seg);
		b->seg = NULL;
		if (r < 0)
			m->errors++;
		model_write_kick_event(m);
		return 0;
	}
	m->n_held++;
	m->fetched++;
	return 1;
}

unsigned int ring_model_fetch_all(struct ring_model *m)
{
	unsigned int n = 0;

	while (ring_model_fetch(m))
		n++;
	return n;
}

/* ---- writing used elements ---- */

void ring_model_use_raw(struct ring_model *m, uint32_t id, uint32_t len, uint16_t skip)
{
	if (m->layout == VIRTQ_SPLIT) {
		struct virtq_used_elem *e = &m->used->ring[m->used_idx & (m->size - 1)];

		e->id = id;
		e->len = len;
		m->used_idx++;
		return;
	}
	struct virtq_packed_desc *d = &m->pdesc[m->used_pos];

	d->id = (uint16_t)id;
	d->len = len;
	/* 2.8.2: id and len visible before the flags hand it over. */
	virt_wmb();
	WRITE_ONCE(d->flags, m->used_wrap ? VIRTQ_DESC_F_AVAIL | VIRTQ_DESC_F_USED : 0);
	m->used_pos += skip;
	if (m->used_pos >= m->size) {
		m->used_pos -= m->size;
		m->used_wrap = !m->used_wrap;
	}
	m->used_unpublished += skip;
}

void ring_model_drop(struct ring_model *m, unsigned int i)
{
	free(m->held[i].seg);
	m->n_held--;
	memmove(&m->held[i], &m->held[i + 1], (m->n_held - i) * sizeof(*m->held));
}

void ring_model_use(struct ring_model *m, unsigned int i, uint32_t len)
{
	struct model_buf *b = &m->held[i];

	ring_model_use_raw(m, b->id, len, b->ndescs);
	ring_model_drop(m, i);
}

void ring_model_use_batch(struct ring_model *m, unsigned int n, uint32_t len)
{
	unsigned int i, slots = 0;

	for (i = 0; i < n; i++)
		slots += m->held[i].ndescs;
	if (m->layout == VIRTQ_SPLIT) {
		/* One entry where the batch's first would go; idx moves by n. */
		ring_model_use_raw(m, m->held[n - 1].id, len, 1);
		m->used_idx += n - 1;
	} else {
		ring_model_use_raw(m, m->held[n - 1].id, len, (uint16_t)slots);
	}
	for (i = 0; i < n; i++)
		ring_model_drop(m, 0);
}

static bool model_need_interrupt_split(struct ring_model *m, uint16_t old_idx)
{
	if (m->event_idx)
		return virtq_need_event(*virtq_used_event(m->avail, m->size), m->used_idx, old_idx);
	return !(m->avail->flags & VIRTQ_AVAIL_F_NO_INTERRUPT);
}

static bool model_need_interrupt_packed(struct ring_model *m, uint32_t moved)
{
	struct virtq_packed_event ev = *m->driver;
	uint16_t event, old_pos;

	if (ev.flags == RING_EVENT_FLAGS_DISABLE)
		return false;
	if (ev.flags != RING_EVENT_FLAGS_DESC)
		return true;
	if (!m->event_idx) {
		m->errors++; /* DESC needs EVENT_IDX (2.8.14) */
		return true;
	}
	if (moved >= m->size)
		return true;
	event = ev.off_wrap & RING_EVENT_OFF_MASK;
	if ((bool)(ev.off_wrap >> RING_EVENT_WRAP_SHIFT) != m->used_wrap)
		event -= m->size;
	old_pos = (uint16_t)(m->used_pos - moved);
	return virtq_need_event(event, m->used_pos, old_pos);
}

bool ring_model_publish(struct ring_model *m)
{
	bool need;

	if (m->layout == VIRTQ_SPLIT) {
		uint16_t old_idx = m->used_published;

		if (m->used_idx == old_idx)
			return false;
		/* 2.7.8: entries visible before idx. */
		virt_wmb();
		WRITE_ONCE(m->used->idx, m->used_idx);
		m->used_published = m->used_idx;
		/* 2.7.7.2: read the driver's wish after publishing. */
		virt_mb();
		need = model_need_interrupt_split(m, old_idx);
	} else {
		if (!m->used_unpublished)
			return false;
		virt_mb();
		need = model_need_interrupt_packed(m, m->used_unpublished);
		m->used_unpublished = 0;
	}
	if (need)
		m->interrupts++;
	return need;
}

bool ring_model_complete(struct ring_model *m, unsigned int i, uint32_t len)
{
	ring_model_use(m, i, len);
	return ring_model_publish(m);
}

/* ---- buffer contents ---- */

size_t model_buf_read(const struct model_buf *b, void *dst, size_t max)
{
	size_t done = 0, n;
	unsigned int i;

	for (i = 0; i < b->nseg && done < max; i++) {
		if (b->seg[i].write)
			continue;
		n = b->seg[i].len;
		if (n > max - done)
			n = max - done;
		memcpy((char *)dst + done, b->seg[i].addr, n);
		done += n;
	}
	return done;
}

uint32_t model_buf_write(struct model_buf *b, const void *src, uint32_t len)
{
	uint32_t done = 0, n;
	unsigned int i;

	for (i = 0; i < b->nseg && done < len; i++) {
		if (!b->seg[i].write)
			continue;
		n = b->seg[i].len;
		if (n > len - done)
			n = len - done;
		memcpy(b->seg[i].addr, (const char *)src + done, n);
		done += n;
	}
	return done;
}

/* ---- fixture ---- */

static void fixture_notify(struct virtq *vq)
{
	struct ring_fixture *fx = virtq_priv(vq);

	fx->kicks++;
}

struct ring_fixture *ring_fixture_new(enum virtq_layout layout, uint16_t size, uint64_t features)
{
	struct ring_fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return NULL;
	fx->vq = virtq_create(layout, 0, size, features, fixture_notify, fx);
	if (!fx->vq) {
		free(fx);
		return NULL;
	}
	ring_model_init(&fx->m, fx->vq);
	return fx;
}

void ring_fixture_free(struct ring_fixture *fx)
{
	if (!fx)
		return;
	ring_model_destroy(&fx->m);
	virtq_destroy(fx->vq);
	free(fx);
}

unsigned int ring_fixture_cycle(struct ring_fixture *fx, unsigned int n)
{
	static uint8_t bufs[VIRTQ_MAX_SIZE][8];
	unsigned int done = 0, i, batch, added;
	uint32_t len;
	void *tok;

	while (n) {
		batch = n < virtq_free_slots(fx->vq) ? n : virtq_free_slots(fx->vq);
		if (!batch)
			return done;
		for (added = 0; added < batch; added++) {
			struct vbuf in = { bufs[added], 8 };

			if (virtq_add(fx->vq, NULL, 0, &in, 1, bufs[added]))
				break;
		}
		virtq_kick(fx->vq);
		ring_model_fetch_all(&fx->m);
		while (fx->m.n_held)
			ring_model_use(&fx->m, 0, 8);
		if (ring_model_publish(&fx->m))
			virtq_interrupt(fx->vq);
		for (i = 0; i < added; i++) {
			tok = virtq_get_used(fx->vq, &len);
			if (tok == bufs[i] && len == 8)
				done++;
		}
		n -= added;
		if (added < batch)
			return done;
	}
	return done;
}
