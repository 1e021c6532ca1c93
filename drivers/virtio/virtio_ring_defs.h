/* SPDX-License-Identifier: MIT */
/*
 * Virtqueue memory layouts as the virtio 1.2 spec defines them (2.7 split,
 * 2.8 packed). Only the layouts and bit values live here: the ring code in
 * ring_split.c and ring_packed.c and the device model in the unit tests
 * both use them. x86 is little-endian, so the spec's le16/le32/le64 are
 * plain integers.
 */
#ifndef DRIVERS_VIRTIO_VIRTIO_RING_DEFS_H
#define DRIVERS_VIRTIO_VIRTIO_RING_DEFS_H

#include <stdint.h>

/*
 * Feature bits that change the ring (6 "Reserved Feature Bits"). As in
 * Linux's uapi headers (which the host side uses), VIRTIO_F_* is a bit
 * number; VIRTIO_BIT() makes the mask.
 */
#define VIRTIO_F_INDIRECT_DESC 28
#define VIRTIO_F_EVENT_IDX 29
#define VIRTIO_F_RING_PACKED 34
#define VIRTIO_F_IN_ORDER 35

#define VIRTIO_BIT(f) (1ULL << (f))

/* Largest Queue Size either layout allows (2.7 and 2.8: 32768). */
#define VIRTQ_MAX_SIZE 32768

/* ---- split virtqueue, 2.7 ---- */

/* 2.7.5 The Virtqueue Descriptor Table */
#define VIRTQ_DESC_F_NEXT 1
#define VIRTQ_DESC_F_WRITE 2
#define VIRTQ_DESC_F_INDIRECT 4

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

/* 2.7.6 The Virtqueue Available Ring; used_event follows ring[size]. */
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1

struct virtq_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];
};

/* 2.7.8 The Virtqueue Used Ring; avail_event follows ring[size]. */
#define VIRTQ_USED_F_NO_NOTIFY 1

struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
};

struct virtq_used {
	uint16_t flags;
	uint16_t idx;
	struct virtq_used_elem ring[];
};

/* 2.7.5, 2.7.6, 2.7.8: sizes and minimum alignments of the three parts. */
#define VIRTQ_DESC_ALIGN 16
#define VIRTQ_AVAIL_ALIGN 2
#define VIRTQ_USED_ALIGN 4

static inline uint64_t virtq_split_avail_bytes(uint16_t size)
{
	return 6 + 2 * (uint64_t)size;
}

static inline uint64_t virtq_split_used_bytes(uint16_t size)
{
	return 6 + 8 * (uint64_t)size;
}

/* 2.7.7 / 2.7.10: the event fields sit right after the rings. */
static inline uint16_t *virtq_used_event(struct virtq_avail *avail, uint16_t size)
{
	return &avail->ring[size];
}

static inline uint16_t *virtq_avail_event(struct virtq_used *used, uint16_t size)
{
	return (uint16_t *)&used->ring[size];
}

/* ---- packed virtqueue, 2.8 ---- */

/* 2.8.13 The Virtqueue Descriptor Format; flags share bits 0-2 with split. */
#define VIRTQ_DESC_F_AVAIL (1 << 7)
#define VIRTQ_DESC_F_USED (1 << 15)

/*
 * len, id and flags are also one 64-bit word (little-endian: len in bits
 * 0..31, flags in 48..63): the driver publishes a descriptor's second half,
 * flags included, with one store. A union member, not a cast, so the
 * compiler knows the word and the fields alias (C11 6.5p7).
 */
struct virtq_packed_desc {
	uint64_t addr;
	union {
		struct {
			uint32_t len;
			uint16_t id;
			uint16_t flags;
		};
		uint64_t len_id_flags;
	};
};

/* 2.8.14 Event Suppression Structure Format */
#define RING_EVENT_FLAGS_ENABLE 0x0
#define RING_EVENT_FLAGS_DISABLE 0x1
#define RING_EVENT_FLAGS_DESC 0x2
#define RING_EVENT_WRAP_SHIFT 15
#define RING_EVENT_OFF_MASK 0x7fff

struct virtq_packed_event {
	uint16_t off_wrap;
	uint16_t flags;
};

#define VIRTQ_PACKED_EVENT_ALIGN 4

/*
 * 2.7.7.2 / 2.7.10.2 (and the packed twin in 2.8.21.3): with EVENT_IDX the
 * other side wants a notification iff @event lies in [old, new), the
 * indices written since it last looked, in 16-bit modular arithmetic.
 */
static inline int virtq_need_event(uint16_t event, uint16_t new_idx, uint16_t old_idx)
{
	return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old_idx);
}

#endif
