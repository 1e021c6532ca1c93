// SPDX-License-Identifier: MIT
/*
 * The fuzzer's ring steps, on the TX queue of the device a target drives
 * (struct fuzz_dev: vsock's, or virtio-net's fixed-layout queue, which
 * takes chains of one descriptor): honest content in descriptors that
 * break the rules of virtio 1.2 2.7 (split) and 2.8 (packed) one field
 * at a time.
 *
 *   dc  a chain of 1..8 descriptors (2.7.5, 2.8.6), two of them changed:
 *       an address past RAM, at its edge, wrapping past 2^64, in the
 *       device's own registers; a length of 0, 2^31 or 4 GiB - 1, or
 *       past the buffer; device-writable; a next that loops or leaves
 *       the ring; INDIRECT inside a chain
 *   it  an indirect table (2.7.5.3, 2.8.19): its length, an entry
 *       changed as above, a table inside the table, the ring
 *       descriptor's flags
 *   rg  the ring's own indices: split avail->idx moved back or past the
 *       ring, entries naming heads we do not own; packed slots whose
 *       wrap bits lie, a chain into a slot not made available, a chain
 *       across the ring's end (legal)
 *   ev  the driver's event suppression structure (2.7.7, 2.8.14)
 *   kk  notifications with nothing new, and with the wrong queue index
 *       (4.1.5.2)
 *
 * Only scratch memory (fuzz_mem) is ever handed to the device as
 * writable: a device that writes where a step lets it writes there.
 */
#include <errno.h>
#include <string.h>

#include "drivers/virtio/fuzz.h"
#include "drivers/virtio/virtio_pci.h"
#include "kernel/dma.h"

#define MAX_PIECES 8
#define ADDR_FAR (1ULL << 46) /* past any memory QEMU gives a guest */
#define ADDR_WRAP (~0ULL - 0xfff) /* a buffer from here wraps past 2^64 */
#define MMIO_GUESS 0xfee00000ULL /* the local APIC: registers, not RAM */

/* What a descriptor mutation (a 4-bit field) does. */
enum desc_lie {
	D_HONEST,
	D_ADDR_FAR,
	D_ADDR_EDGE, /* the last bytes of RAM: well formed, the content garbage */
	D_ADDR_WRAP,
	D_LEN_ZERO,
	D_LEN_4G,
	D_WRITE,
	D_NEXT_LOOP,
	D_NEXT_OUT,
	D_NEXT_FREE,
	D_INDIRECT,
	D_ADDR_ZERO, /* page 0: well formed, the content garbage */
	D_LEN_2G,
	D_ADDR_MMIO,
	D_LEN_OVER, /* 4 KiB past the buffer, into RAM: well formed */
	D_HONEST2,
};

static bool lie_well_formed(unsigned int lie)
{
	return lie == D_HONEST || lie == D_ADDR_EDGE || lie == D_ADDR_ZERO || lie == D_LEN_OVER ||
	       lie == D_HONEST2;
}

/* @b's content in @n pieces, chained by next (split: k to k + 1). */
static void pieces(const struct fuzz_buf *b, struct virtq_desc *t, unsigned int n)
{
	uint64_t pa = virt_to_phys(b->data);
	uint32_t off = 0;

	for (unsigned int k = 0; k < n; k++) {
		uint32_t end = (uint32_t)((uint64_t)b->len * (k + 1) / n);

		t[k] = (struct virtq_desc){ pa + off, end - off, k + 1 < n ? VIRTQ_DESC_F_NEXT : 0,
					    (uint16_t)(k + 1) };
		off = end;
	}
}

static bool outside_ram(uint64_t addr)
{
	return addr == ADDR_FAR || addr == ADDR_WRAP;
}

/* A device-writable buffer of @len at most, in scratch at @off. */
static void to_scratch(struct virtq_desc *d, uint32_t off)
{
	const struct fuzz_mem *m = fuzz_mem();

	d->addr = m->scratch_pa + off % 4096;
	if (d->len > FUZZ_SCRATCH_LEN / 2)
		d->len = FUZZ_SCRATCH_LEN / 2;
	d->flags |= VIRTQ_DESC_F_WRITE;
}

/*
 * Descriptor @k of @n changed as @lie says. Its next names descriptors
 * of the chain (below @n, as virtq_add_forged takes them) or anything
 * else as it is; @ring_size bounds "out of range".
 */
static void lie_about(struct virtq_desc *t, unsigned int k, unsigned int n, unsigned int lie,
		      uint16_t ring_size, uint64_t word)
{
	const struct fuzz_mem *m = fuzz_mem();
	struct virtq_desc *d = &t[k];

	switch ((enum desc_lie)lie) {
	case D_HONEST:
	case D_HONEST2:
		break;
	case D_ADDR_FAR:
		d->addr = ADDR_FAR;
		break;
	case D_ADDR_EDGE:
		d->addr = m->ram_end - d->len;
		break;
	case D_ADDR_WRAP:
		d->addr = ADDR_WRAP;
		d->len = 0x2000;
		break;
	case D_LEN_ZERO:
		d->len = 0;
		break;
	case D_LEN_4G:
		d->len = 0xffffffffu;
		break;
	case D_WRITE:
		to_scratch(d, (uint32_t)(word >> 20));
		break;
	case D_NEXT_LOOP:
		/* 2.7.5.3.1: a chain never loops (packed: a NEXT into a slot not made available) */
		d->flags |= VIRTQ_DESC_F_NEXT;
		d->next = (uint16_t)(k ? fuzz_field(word, 48, 3) % (k + 1) : 0);
		break;
	case D_NEXT_OUT:
		d->flags |= VIRTQ_DESC_F_NEXT;
		d->next = (uint16_t)(ring_size + fuzz_field(word, 48, 8));
		break;
	case D_NEXT_FREE:
		/* a descriptor the driver did not hand over, whatever it holds */
		d->flags |= VIRTQ_DESC_F_NEXT;
		d->next = (uint16_t)(n + fuzz_field(word, 48, 16) % ring_size);
		break;
	case D_INDIRECT:
		/* 2.7.5.3.1: INDIRECT and NEXT never together */
		d->flags |= VIRTQ_DESC_F_INDIRECT;
		d->len &= ~15u;
		break;
	case D_ADDR_ZERO:
		d->addr = 0;
		break;
	case D_LEN_2G:
		d->len = 0x80000000u;
		break;
	case D_ADDR_MMIO:
		d->addr = MMIO_GUESS;
		break;
	case D_LEN_OVER:
		if (d->addr + d->len + 4096 <= m->ram_end)
			d->len += 4096;
		break;
	}
	/* nothing the device may write outside scratch */
	if ((d->flags & VIRTQ_DESC_F_WRITE) && !outside_ram(d->addr) &&
	    !(d->addr >= m->scratch_pa && d->addr + d->len <= m->scratch_pa + FUZZ_SCRATCH_LEN))
		to_scratch(d, 0);
	/* and no table of garbage, whose entries could let it write anywhere */
	if ((d->flags & VIRTQ_DESC_F_INDIRECT) && !outside_ram(d->addr)) {
		d->addr = m->zeros_pa;
		if (d->len > 4096)
			d->len = 4096;
	}
}

/* How many descriptors a chain of @want may have on this queue now. */
static unsigned int chain_room(const struct fuzz_dev *dev, struct virtq *vq, unsigned int want)
{
	unsigned int room = virtq_free_slots(vq);

	if (dev->max_chain && room > dev->max_chain)
		room = dev->max_chain;
	return want < room ? want : room;
}

/*
 * dc: 1 + bits 0-2 descriptors; lie bits 6-9 on descriptor (bits 3-5) % n,
 * lie bits 13-16 on descriptor (bits 10-12) % n; bits 17-18: 1 the chain
 * as long as the ring has room (legal), 2 the pieces in reverse order
 * (well formed, the content scrambled).
 */
static int chain_step(const struct fuzz_dev *dev, struct virtq *vq, uint64_t w,
		      struct fuzz_outcome *o)
{
	struct virtq_desc t[MAX_PIECES];
	unsigned int n = 1 + fuzz_field(w, 0, 3), lie1 = fuzz_field(w, 6, 4);
	unsigned int lie2 = fuzz_field(w, 13, 4), shape = fuzz_field(w, 17, 2);
	struct fuzz_buf b;
	int ret;

	if (shape == 1)
		n = MAX_PIECES;
	n = chain_room(dev, vq, n);
	if (!n)
		return -ENOSPC;
	ret = dev->content(&b);
	if (ret)
		return ret;
	if (n > b.len)
		n = b.len;
	pieces(&b, t, n);
	if (shape == 2)
		for (unsigned int k = 0; k < n / 2; k++) {
			uint64_t a = t[k].addr;
			uint32_t l = t[k].len;

			t[k].addr = t[n - 1 - k].addr, t[k].len = t[n - 1 - k].len;
			t[n - 1 - k].addr = a, t[n - 1 - k].len = l;
		}
	lie_about(t, fuzz_field(w, 3, 3) % n, n, lie1, virtq_size(vq), w);
	lie_about(t, fuzz_field(w, 10, 3) % n, n, lie2, virtq_size(vq), w >> 8);
	o->well_formed = lie_well_formed(lie1) && lie_well_formed(lie2);
	return dev->forge(&b, t, n);
}

/* 2.8.19: a packed table's entries hold id and flags where a split one's hold flags and next. */
static void table_write(struct virtq *vq, struct virtq_desc *dst, const struct virtq_desc *src,
			unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		dst[k] = src[k];
		if (virtq_layout(vq) == VIRTQ_PACKED) {
			dst[k].next = src[k].flags & (uint16_t)~VIRTQ_DESC_F_NEXT;
			dst[k].flags = 0;
		}
	}
}

/*
 * it: a table of 1 + bits 0-2 entries after the content; its length
 * bits 3-5 (0: honest; 1: 0; 2: 17; 3: half an entry more; 4: an entry
 * more, zeroed; 5: 4 GiB - 16; 6: the table past RAM); lie bits 6-9 on
 * entry (bits 10-12) % n, 10 being a table inside the table; the ring
 * descriptor's flags bits 13-14 (1: INDIRECT with NEXT, 2: with WRITE).
 */
static int indirect_step(const struct fuzz_dev *dev, struct virtq *vq, uint64_t w,
			 struct fuzz_outcome *o)
{
	struct virtq_desc e[MAX_PIECES + 1], ring[1];
	unsigned int n = 1 + fuzz_field(w, 0, 3), tlen_lie = fuzz_field(w, 3, 3);
	unsigned int lie = fuzz_field(w, 6, 4), k = fuzz_field(w, 10, 3),
		     flags = fuzz_field(w, 13, 2);
	struct virtq_desc *table;
	struct fuzz_buf b;
	uint32_t tlen;
	int ret;

	if (!virtq_free_slots(vq))
		return -ENOSPC;
	ret = dev->content(&b);
	if (ret)
		return ret;
	if (n > b.len)
		n = b.len;
	if (b.cap < ((b.len + 15) & ~15u) + (MAX_PIECES + 1) * sizeof(*e)) {
		dev->drop(&b);
		return -EOPNOTSUPP;
	}
	table = (struct virtq_desc *)(b.data + ((b.len + 15) & ~15u));
	pieces(&b, e, n);
	e[n] = (struct virtq_desc){ 0, 0, 0, 0 };
	k %= n;
	if (lie == D_INDIRECT) {
		/* 2.7.5.3.1: no table inside a table */
		e[k] = (struct virtq_desc){ virt_to_phys(table), 16, VIRTQ_DESC_F_INDIRECT, 0 };
	} else {
		lie_about(e, k, n, lie, (uint16_t)n, w);
	}
	table_write(vq, table, e, n + 1);
	tlen = 16 * n;
	switch (tlen_lie) {
	case 1:
		tlen = 0;
		break;
	case 2:
		tlen = 17;
		break;
	case 3:
		tlen += 8;
		break;
	case 4:
		tlen += 16;
		break;
	case 5:
		tlen = 0xfffffff0u;
		break;
	}
	ring[0] = (struct virtq_desc){ tlen_lie == 6 ? ADDR_FAR : virt_to_phys(table), tlen,
				       VIRTQ_DESC_F_INDIRECT, 0 };
	if (flags == 1)
		ring[0].flags |= VIRTQ_DESC_F_NEXT, ring[0].next = 0xffff;
	else if (flags == 2)
		ring[0].flags |= VIRTQ_DESC_F_WRITE; /* the table is ours: the flag is the lie */
	o->well_formed = (tlen_lie == 0 || tlen_lie == 7) && lie_well_formed(lie) &&
			 (flags == 0 || flags == 3) &&
			 (virtq_features(vq) & VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC));
	return dev->forge(&b, ring, 1);
}

/* Honest buffers until the next one starts in the ring's last slot. */
static bool reach_last_slot(const struct fuzz_dev *dev, struct virtq *vq)
{
	while (virtq_forge_next_slot(vq) != virtq_size(vq) - 1)
		if (virtq_free_slots(vq) < 3 || dev->honest())
			return false;
	return virtq_free_slots(vq) >= 2;
}

/* A forged chain of @n honest pieces; the last one's next as @last_next. */
static int forge_pieces(const struct fuzz_dev *dev, unsigned int n, uint16_t last_flags,
			uint16_t last_next)
{
	struct virtq_desc t[MAX_PIECES];
	struct fuzz_buf b;
	int ret;

	if (!n)
		return -ENOSPC; /* chain_room: the ring is full */
	ret = dev->content(&b);
	if (ret)
		return ret;
	if (n > b.len)
		n = b.len;
	pieces(&b, t, n);
	t[n - 1].flags |= last_flags;
	t[n - 1].next = last_next;
	return dev->forge(&b, t, n);
}

/*
 * rg, split (bits 0-2): 0 avail->idx a ring size and one past ours,
 * 1 one back, 2 half the index space ahead, 3 an entry naming a head
 * past the ring, 4 the head one past the last descriptor; 5 the longest chain the ring has room for (legal); else
 * an honest buffer. Packed: 0 a slot whose wrap bits lie, 1 a NEXT into
 * a slot not made available, 2 a chain across the ring's end (legal),
 * 3 the same with its second slot's wrap bits stale, 4 a chain whose
 * tail's wrap bits lie, 5 a chain of 2..8 slots (legal); else honest.
 */
static int ring_step(const struct fuzz_dev *dev, struct virtq *vq, uint64_t w,
		     struct fuzz_outcome *o)
{
	unsigned int v = fuzz_field(w, 0, 3), multi = dev->max_chain != 1;
	uint16_t size = virtq_size(vq);

	o->well_formed = v >= 5;
	if (virtq_layout(vq) == VIRTQ_SPLIT) {
		switch (v) {
		case 0:
			return virtq_forge_avail_idx(vq, size + 1) ? 0 : -EIO;
		case 1:
			return virtq_forge_avail_idx(vq, 0xffff) ? 0 : -EIO;
		case 2:
			return virtq_forge_avail_idx(vq, 0x8000) ? 0 : -EIO;
		case 3:
			o->phantoms++;
			return virtq_forge_publish(vq, (uint16_t)(size + fuzz_field(w, 8, 8))) ?
				       0 :
				       -EIO;
		case 4:
			/* one past the last descriptor: the off-by-one a device may miss */
			o->phantoms++;
			return virtq_forge_publish(vq, size) ? 0 : -EIO;
		case 5:
			if (!multi)
				break;
			return forge_pieces(dev, chain_room(dev, vq, MAX_PIECES), 0, 0);
		}
		return dev->honest();
	}
	switch (v) {
	case 0:
		return forge_pieces(dev, 1, 0, VIRTQ_FORGE_WRAP_LIE);
	case 1:
		return forge_pieces(dev, 1, VIRTQ_DESC_F_NEXT, 0);
	case 2:
	case 3:
		if (!multi)
			break;
		/* 2.8.1, 2.8.6: slot 0 on the next lap has the flipped counter, or the old one */
		if (!reach_last_slot(dev, vq))
			return -ENOSPC;
		return forge_pieces(dev, 2, 0, v == 3 ? VIRTQ_FORGE_WRAP_LIE : 0);
	case 4:
		if (!multi || virtq_free_slots(vq) < 2)
			break;
		return forge_pieces(dev, 2, 0, VIRTQ_FORGE_WRAP_LIE);
	case 5:
		if (!multi)
			break;
		return forge_pieces(dev, chain_room(dev, vq, 2 + fuzz_field(w, 3, 3) % 7), 0, 0);
	}
	o->well_formed = true;
	return dev->honest();
}

/*
 * ev: the driver's event suppression structure of the TX queue (whose
 * interrupts the driver never takes), then an honest buffer for the
 * device to decide on. Split (2.7.7): avail->flags bits 0-1 (1
 * NO_INTERRUPT, 2 clear, 3 0xfffe: only 0 and 1 are defined), used_event
 * bits 2-17. Packed (2.8.14): flags bits 0-1 (ENABLE, DISABLE, DESC,
 * reserved 3), off_wrap bits 2-17.
 */
static int event_step(const struct fuzz_dev *dev, struct virtq *vq, uint64_t w,
		      struct fuzz_outcome *o)
{
	unsigned int flags = fuzz_field(w, 0, 2);
	uint16_t value = (uint16_t)fuzz_field(w, 2, 16);
	bool event_idx = virtq_features(vq) & VIRTIO_BIT(VIRTIO_F_EVENT_IDX);

	if (virtq_layout(vq) == VIRTQ_SPLIT) {
		struct virtq_avail *avail = phys_to_virt(virtq_driver_addr(vq));

		if (flags)
			WRITE_ONCE(avail->flags, flags == 1 ? VIRTQ_AVAIL_F_NO_INTERRUPT :
						 flags == 2 ? 0 :
							      0xfffe);
		WRITE_ONCE(*virtq_used_event(avail, virtq_size(vq)), value);
		o->well_formed = flags != 3;
	} else {
		struct virtq_packed_event *ev = phys_to_virt(virtq_driver_addr(vq));

		WRITE_ONCE(ev->off_wrap, value);
		WRITE_ONCE(ev->flags, (uint16_t)flags);
		o->well_formed = flags < 2 || (flags == RING_EVENT_FLAGS_DESC && event_idx &&
					       (value & RING_EVENT_OFF_MASK) < virtq_size(vq));
	}
	return dev->honest();
}

/*
 * kk: 1, 16, 256 or 2000 notifications (bits 0-1) with nothing new,
 * writing (bits 2-3) the queue's index, another queue's, one past the
 * device's queues or 0xffff (4.1.5.2: the queue's own index).
 */
static int kick_step(struct virtq *vq, uint64_t w, struct fuzz_outcome *o)
{
	static const unsigned int counts[] = { 1, 16, 256, 2000 };
	const struct virtio_queue *q = virtq_priv(vq);
	unsigned int what = fuzz_field(w, 2, 2);
	uint16_t index = virtq_index(vq);

	if (what == 1)
		index ^= 1;
	else if (what == 2)
		index = q->vdev->num_queues;
	else if (what == 3)
		index = 0xffff;
	for (unsigned int i = 0; i < counts[fuzz_field(w, 0, 2)]; i++)
		*q->notify = index;
	o->well_formed = what == 0;
	return 0;
}

int fuzz_ring_step(const struct fuzz_dev *dev, const struct fuzz_step *s, struct fuzz_outcome *o)
{
	struct virtq *vq = dev->txq();

	if (!vq)
		return -ENODEV;
	if (virtq_is_broken(vq))
		return -EIO;
	switch (s->kind) {
	case FK_CHAIN:
		return chain_step(dev, vq, s->word, o);
	case FK_INDIRECT:
		return indirect_step(dev, vq, s->word, o);
	case FK_RING:
		return ring_step(dev, vq, s->word, o);
	case FK_EVENT:
		return event_step(dev, vq, s->word, o);
	case FK_KICK:
		return kick_step(vq, s->word, o);
	default:
		return -EOPNOTSUPP;
	}
}
