/* SPDX-License-Identifier: MIT */
/*
 * What the hostile driver's two tools share (hostile.c): the fixed
 * attack modes (vsock_attack.c) and the seeded fuzzer (fuzz.c). The
 * victim a lie is told about, an honest vsock header to start a lie
 * from, a packet into the live vsock TX queue, and the watch on a TX
 * queue after a run: did the device answer, keep buffers for good, or
 * fall silent. Off the data path: nothing here runs unless one of the
 * two runs, and only the console and the boot command line start them.
 */
#ifndef DRIVERS_VIRTIO_HOSTILE_H
#define DRIVERS_VIRTIO_HOSTILE_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/virtqueue.h"
#include "net/vsock/vsock.h"

/*
 * ---- The drivers' side: where the hostile driver reaches their queues ----
 *
 * virtio_vsock.c and virtio_net.c, never on their data paths. A queue
 * is NULL without its device.
 */
struct virtq *virtio_vsock_txq(void);
/* The context that reclaims what was sent on it. */
struct poll_ctx *virtio_vsock_txq_ctx(void);
/* @pkt posted on RX as @out and @in say: 0, or -errno (-ENODEV without a device). */
int virtio_vsock_post_rx(struct vsock_pkt *pkt, const struct vbuf *out, unsigned int n_out,
			 const struct vbuf *in, unsigned int n_in);
/* @pkt posted on RX as the descriptors @tmpl says (virtq_add_forged). */
int virtio_vsock_post_rx_forged(struct vsock_pkt *pkt, const struct virtq_desc *tmpl,
				unsigned int n);

struct virtq *virtio_net_txq(void);
/* The context that reclaims what was sent on it (txpoll: nothing else does). */
struct poll_ctx *virtio_net_txq_ctx(void);
/*
 * @len bytes at @bytes (header included, as written) made available on
 * virtio-net TX as one descriptor; the caller keeps them until they
 * complete.
 */
int virtio_net_tx_raw(const void *bytes, uint32_t len);
/* One TX descriptor exactly as @d says (virtq_fixed_add_forged). */
int virtio_net_tx_forged(const struct virtq_desc *d);

/* Ports nobody uses: what a lie names when there is no victim. */
#define HOSTILE_UNUSED_PORT 31351u

/* The connection a lie is about. */
struct hostile_victim {
	bool found;
	enum vsock_type type;
	uint32_t local_port, peer_port;
	uint32_t buf_alloc, fwd_cnt;
};

/*
 * A connected socket of @type: for a stream, the one on local @port; for
 * SEQPACKET any. Without one, @v names unused ports.
 */
void hostile_victim(enum vsock_type type, uint32_t port, struct hostile_victim *v);
/* The header an honest driver would send on @v with @op. */
void hostile_hdr(const struct hostile_victim *v, uint16_t op, struct virtio_vsock_hdr *h);
/*
 * A packet with header @h and @payload bytes (0xa5) into the vsock TX
 * queue, @desc_len bytes of it in its one descriptor: 0 or -errno
 * (-ENOSPC: the ring is full). Its completion frees it.
 */
int hostile_queue_pkt(const struct virtio_vsock_hdr *h, uint32_t payload, uint32_t desc_len);
/* A harmless packet (an RST between unused ports), kicked: the device's last to answer. */
void hostile_probe(void);

/*
 * A broadcast IPv4/TCP frame of @len bytes (at least 54 written) from our
 * MAC to the discard port, its IP total length @ip_len: to nobody, so a
 * peer that gets it has nothing to answer.
 */
void hostile_net_frame(uint8_t *f, uint32_t len, uint16_t ip_len);
/*
 * 5.1.6 struct virtio_net_hdr at @h: flags, gso_type, then hdr_len,
 * gso_size, csum_start, csum_offset, num_buffers (le16 each). Without an
 * offload negotiated, and ringside negotiates none, every field is 0 on
 * TX (5.1.6.2.1).
 */
void hostile_net_hdr(uint8_t *h, uint8_t flags, uint8_t gso_type, uint16_t hdr_len,
		     uint16_t gso_size, uint16_t csum_start, uint16_t csum_offset,
		     uint16_t num_buffers);

/*
 * A DMA buffer for a virtio-net header and a frame of @frame_len bytes
 * (NULL without memory, or past HOSTILE_NET_LONG): the next of a small
 * pool, round-robin, with room after the frame for an indirect table, or
 * the one long buffer. A buffer is written again only after the pool
 * went round: by then the device has read it or fell silent.
 */
#define HOSTILE_NET_SMALL 2048
#define HOSTILE_NET_LONG (65536 + 1024)
uint8_t *hostile_net_buf(uint32_t frame_len);

/* How long a TX queue with buffers out may complete nothing: no answer. */
#define HOSTILE_SILENCE_NS 3000000000ULL
/* How long a settle waits at most while the device trickles answers. */
#define HOSTILE_SETTLE_MAX_NS 60000000000ULL

/*
 * The watch on a TX queue over a run: buffers out before it are not the
 * run's (out0); completions moving mean the device answers.
 */
struct tx_watch {
	uint64_t out0; /* buffers out when the run began */
	uint64_t completed; /* completions at the last look */
	uint64_t progress_ns; /* when they last moved */
	uint64_t settle_ns; /* when the settle began */
	uint64_t settle_completed; /* completions then */
};

enum tx_verdict {
	TXW_WAIT, /* buffers out, the device still answering */
	TXW_ANSWERED, /* it completed everything of the run */
	TXW_KEPT, /* it went on completing, but kept some of the run's buffers */
	TXW_SILENT, /* nothing completed for HOSTILE_SILENCE_NS */
	TXW_BUSY, /* still trickling after HOSTILE_SETTLE_MAX_NS */
	TXW_NO_DEVICE,
};

void tx_watch_begin(struct tx_watch *w, struct virtq *vq, uint64_t now);
/* No completion for HOSTILE_SILENCE_NS (progress noted on each look). */
bool tx_watch_silent(struct tx_watch *w, struct virtq *vq, uint64_t now);
/* The run's last buffer is out: from now on, wait for its answer. */
void tx_watch_settle(struct tx_watch *w, struct virtq *vq, uint64_t now);
/* What the device did since the settle began. */
enum tx_verdict tx_watch_verdict(struct tx_watch *w, struct virtq *vq, uint64_t now);
/* The run's buffers the device holds now. */
uint64_t tx_watch_kept(const struct tx_watch *w, struct virtq *vq);

#endif
