// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "net/vsock/packet.h"

/*
 * Packet buffers come from free lists by size class (64 B << k of payload,
 * and one class for header-only packets), not from malloc per packet: the
 * same few sizes cycle all the time (RX buffers of rxbuf bytes, control
 * packets, echo replies), and newlib's malloc/free cost about 500
 * instructions per round trip on a path whose length varied with the
 * heap's state. A class keeps at most PKT_POOL_BYTES of free buffers;
 * the rest, and payloads above the largest class, go back to the heap.
 *
 * Under AddressSanitizer (the fuzzers) every buffer goes back to the heap
 * at once, so a use after free is still caught.
 */
#define PKT_CLASS_MIN_SHIFT 6 /* 64 B */
#define PKT_CLASSES 12 /* header-only, 64 B .. 64 KiB */
#define PKT_NO_CLASS 0xff
#define PKT_POOL_BYTES (1u << 21)

#if defined(__SANITIZE_ADDRESS__)
#define PKT_POOL_ON 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PKT_POOL_ON 0
#endif
#endif
#ifndef PKT_POOL_ON
#define PKT_POOL_ON 1
#endif

struct pkt_class {
	struct vsock_pkt *free;
	uint32_t n_free;
};

static struct pkt_class classes[PKT_CLASSES];
static uint64_t live, live_bytes;

/* Payload bytes of class @k: 0 for class 0, then 64 B << (k - 1). */
static uint32_t class_bytes(uint8_t k)
{
	return k ? 1u << (PKT_CLASS_MIN_SHIFT + k - 1) : 0;
}

/* The smallest class that holds @cap bytes: bits of (cap - 1), less 5. */
static uint8_t class_of(uint32_t cap)
{
	uint32_t k;

	if (!cap)
		return 0;
	if (cap <= class_bytes(1))
		return 1;
	k = 32 - __builtin_clz(cap - 1) - (PKT_CLASS_MIN_SHIFT - 1);
	return k < PKT_CLASSES ? (uint8_t)k : PKT_NO_CLASS;
}

static struct vsock_pkt *pool_take(uint8_t k)
{
	struct vsock_pkt *pkt;

	if (k == PKT_NO_CLASS || !classes[k].free)
		return NULL;
	pkt = classes[k].free;
	classes[k].free = pkt->next;
	classes[k].n_free--;
	return pkt;
}

/* Keep @pkt for reuse if its class has room; false: the caller frees it. */
static int pool_keep(struct vsock_pkt *pkt)
{
	struct pkt_class *c;

	if (!PKT_POOL_ON || pkt->cls == PKT_NO_CLASS)
		return 0;
	c = &classes[pkt->cls];
	if ((uint64_t)(c->n_free + 1) * (class_bytes(pkt->cls) + sizeof(*pkt)) > PKT_POOL_BYTES)
		return 0;
	pkt->next = c->free;
	c->free = pkt;
	c->n_free++;
	return 1;
}

struct vsock_pkt *vsock_pkt_alloc_rx(uint32_t cap)
{
	uint8_t k = class_of(cap);
	struct vsock_pkt *pkt = pool_take(k);

	if (!pkt) {
		size_t room = k == PKT_NO_CLASS ? cap : class_bytes(k);

		pkt = malloc(sizeof(*pkt) + room);
		if (!pkt)
			return NULL;
		pkt->cls = k;
	}
	pkt->next = NULL;
	pkt->cap = cap;
	pkt->off = 0;
	pkt->ext = NULL;
	live++;
	live_bytes += cap;
	return pkt;
}

struct vsock_pkt *vsock_pkt_alloc(uint32_t cap)
{
	struct vsock_pkt *pkt = vsock_pkt_alloc_rx(cap);

	if (pkt)
		memset(&pkt->hdr, 0, sizeof(pkt->hdr));
	return pkt;
}

void vsock_pkt_free(struct vsock_pkt *pkt)
{
	if (!pkt)
		return;
	live--;
	live_bytes -= pkt->cap;
	if (!pool_keep(pkt))
		free(pkt);
}

uint64_t vsock_pkt_live(void)
{
	return live;
}

uint64_t vsock_pkt_live_bytes(void)
{
	return live_bytes;
}

uint64_t vsock_pkt_pooled(void)
{
	uint64_t n = 0;

	for (int k = 0; k < PKT_CLASSES; k++)
		n += classes[k].n_free;
	return n;
}

/*
 * Give every pooled buffer back to the heap: afterwards the heap's bytes in
 * use hold live objects only, so a soak can compare them exactly with a
 * baseline taken the same way (the pool's size follows the load's peak).
 */
uint64_t vsock_pkt_trim(void)
{
	uint64_t n = 0;
	struct vsock_pkt *pkt;

	for (int k = 0; k < PKT_CLASSES; k++) {
		while ((pkt = pool_take((uint8_t)k))) {
			free(pkt);
			n++;
		}
	}
	return n;
}

const char *const vsock_hdr_verdict_names[VSOCK_HDR_VERDICTS] = {
	[VSOCK_HDR_OK] = "ok",
	[VSOCK_HDR_SHORT] = "rx_short",
	[VSOCK_HDR_LEN_BAD] = "rx_len_bad",
	[VSOCK_HDR_CID_BAD] = "rx_bad_cid",
	[VSOCK_HDR_TYPE_BAD] = "rx_bad_type",
	[VSOCK_HDR_OP_BAD] = "rx_bad_op",
};
