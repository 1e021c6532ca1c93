// SPDX-License-Identifier: MIT
/*
 * Device-side model of split and packed virtqueues for the unit tests.
 * Written from the device's half of virtio 1.2 2.7 and 2.8, independently
 * of ring_split.c / ring_packed.c, so the two check each other.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/barrier.h"
#include "kernel/dma.h"
#include "ring_model.h"

void ring_model_init(struct ring_model *m, struct virtq *vq)
{
	uint64_t f = virtq_features(vq);

	memset(m, 0, sizeof(*m));
	m->layout = virtq_layout(vq);
	m->size = virtq_size(vq);
	m->event_idx = f & VIRTIO_BIT(VIRTIO_F_EVENT_IDX);
	m->indirect_ok = f & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC);
	m->held = calloc(m->size + 1u, sizeof(*m->held));
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
}

void ring_model_destroy(struct ring_model *m)
{
	unsigned int i;

	for (i = 0; i < m->n_held; i++)
		free(m->held[i].seg);
	free(m->held);
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

/* ---- reading available buffers ---- */

static void model_add_seg(struct ring_model *m, struct model_buf *b, uint64_t addr, uint32_t len,
			  bool write)
{
	struct model_seg *s;

	/* 2.7.4.2 / 2.8.17: readable parts come before writable ones. */
	if (!write && b->in_len)
		m->errors++;
	b->seg = realloc(b->seg, (b->nseg + 1) * sizeof(*b->seg));
	s = &b->seg[b->nseg++];
	s->addr = phys_to_virt(addr);
	s->len = len;
	s->write = write;
	if (write)
		b->in_len += len;
	else
		b->out_len += len;
}

/* 2.7.5.3.2: the device reads a split indirect table by its next links. */
static int model_split_indirect(struct ring_model *m, struct model_buf *b,
				const struct virtq_desc *d)
{
	const struct virtq_desc *t = phys_to_virt(d->addr);
	unsigned int n = d->len / sizeof(*t), i = 0, count = 0;

	if (!m->indirect_ok || d->len % sizeof(*t) || n == 0 || (d->flags & VIRTQ_DESC_F_NEXT))
		return -1;
	b->indirect = true;
	for (;;) {
		if (i >= n || ++count > n || (t[i].flags & VIRTQ_DESC_F_INDIRECT))
			return -1;
		model_add_seg(m, b, t[i].addr, t[i].len, t[i].flags & VIRTQ_DESC_F_WRITE);
		if (!(t[i].flags & VIRTQ_DESC_F_NEXT))
			return 0;
		i = t[i].next;
	}
}

static int model_split_chain(struct ring_model *m, struct model_buf *b, uint16_t head)
{
	unsigned int count = 0;
	uint16_t i = head;

	for (;;) {
		const struct virtq_desc *d;

		if (i >= m->size || ++count > m->size)
			return -1;
		d = &m->desc[i];
		b->ndescs = (uint16_t)count;
		if (d->flags & VIRTQ_DESC_F_INDIRECT)
			return count == 1 ? model_split_indirect(m, b, d) : -1;
		model_add_seg(m, b, d->addr, d->len, d->flags & VIRTQ_DESC_F_WRITE);
		if (!(d->flags & VIRTQ_DESC_F_NEXT))
			return 0;
		i = d->next;
	}
}

static int model_fetch_split(struct ring_model *m, struct model_buf *b)
{
	uint16_t idx = READ_ONCE(m->avail->idx), head;

	if (idx == m->last_avail)
		return 0;
	/* 2.7.13.3.1 from the other side: idx at most size ahead. */
	if ((uint16_t)(idx - m->last_avail) > m->size)
		return -1;
	virt_rmb();
	head = m->avail->ring[m->last_avail & (m->size - 1)];
	m->last_avail++;
	b->id = head;
	return model_split_chain(m, b, head) ? -1 : 1;
}

static bool model_slot_avail(const struct ring_model *m, uint16_t flags, bool wrap)
{
	bool a = flags & VIRTQ_DESC_F_AVAIL, u = flags & VIRTQ_DESC_F_USED;

	/* 2.8.1: available when AVAIL == wrap counter and USED != it. */
	return a == wrap && u != wrap;
}

static int model_packed_indirect(struct ring_model *m, struct model_buf *b,
				 const struct virtq_packed_desc *d)
{
	const struct virtq_packed_desc *t = phys_to_virt(d->addr);
	unsigned int n = d->len / sizeof(*t), i;

	if (!m->indirect_ok || d->len % sizeof(*t) || n == 0 || (d->flags & VIRTQ_DESC_F_NEXT))
		return -1;
	b->indirect = true;
	for (i = 0; i < n; i++) {
		/* 2.8.19: WRITE is the only flag in an indirect table. */
		if (t[i].flags & ~VIRTQ_DESC_F_WRITE)
			return -1;
		model_add_seg(m, b, t[i].addr, t[i].len, t[i].flags & VIRTQ_DESC_F_WRITE);
	}
	return 0;
}

static int model_fetch_packed(struct ring_model *m, struct model_buf *b)
{
	const struct virtq_packed_desc *d = &m->pdesc[m->avail_pos];
	uint16_t flags = READ_ONCE(d->flags);

	if (!model_slot_avail(m, flags, m->avail_wrap))
		return 0;
	virt_rmb();
	for (;;) {
		d = &m->pdesc[m->avail_pos];
		flags = READ_ONCE(d->flags);
		/* Every descriptor of the chain carries valid avail bits. */
		if (!model_slot_avail(m, flags, m->avail_wrap) || ++b->ndescs > m->size)
			return -1;
		if (flags & VIRTQ_DESC_F_INDIRECT) {
			if (b->ndescs != 1 || model_packed_indirect(m, b, d))
				return -1;
		} else {
			model_add_seg(m, b, d->addr, d->len, flags & VIRTQ_DESC_F_WRITE);
		}
		/* 2.8.6: Buffer ID is in the last descriptor. */
		b->id = d->id;
		if (++m->avail_pos == m->size) {
			m->avail_pos = 0;
			m->avail_wrap = !m->avail_wrap;
		}
		if (!(flags & VIRTQ_DESC_F_NEXT))
			return 1;
	}
}

int ring_model_fetch(struct ring_model *m)
{
	struct model_buf *b = &m->held[m->n_held];
	int r;

	memset(b, 0, sizeof(*b));
	if (m->layout == VIRTQ_SPLIT)
		r = model_fetch_split(m, b);
	else
		r = model_fetch_packed(m, b);
	/* held[] has one spare entry: more than size in flight is a bug. */
	if (r > 0 && m->n_held == m->size)
		r = -1;
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
