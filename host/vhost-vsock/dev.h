/* SPDX-License-Identifier: MIT */
/*
 * The whole back end: one vhost-user front end at a time, two rings
 * (0 = rx, 1 = tx; QEMU keeps the event queue, vhost-user-vsock), the
 * hybrid-vsock Unix sockets on the host side, one epoll loop.
 */
#ifndef VV_DEV_H
#define VV_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "host/vring/vring.h"
#include "vsock_hdr.h"

enum ep_kind {
	EP_VU_LISTEN, /* the --socket listener */
	EP_VU_CONN, /* the connected front end */
	EP_KICK_RX,
	EP_KICK_TX,
	EP_UDS_LISTEN, /* the --uds listener for host clients */
	EP_UDS_SEQ_LISTEN, /* the --uds-seqpacket listener */
	EP_TCP_LISTEN, /* a --forward-tcp listener (tcp_front.c) */
	EP_CONN, /* a host-side socket of one connection */
	EP_SIGNAL,
	EP_CTL_LISTEN, /* the --control listener */
	EP_CTL_CONN, /* a control client (control.c) */
};

struct ep_src {
	enum ep_kind kind;
};

#define VQ_RX 0
#define TCP_MAX_FORWARDS 16
#define VQ_TX 1
#define RST_QUEUE_LEN 64

struct conn;

struct vsock_dev {
	/* configuration */
	const char *vu_path;
	const char *uds_path;
	const char *uds_seq_path; /* NULL: no SEQPACKET host clients */
	const char *ctl_path; /* NULL: no control socket */
	uint64_t guest_cid;
	uint32_t buf_alloc; /* what we advertise per connection */
	bool poll;
	const char *forward_tcp[TCP_MAX_FORWARDS]; /* --forward-tcp specs (tcp_front.c) */
	unsigned n_forward_tcp;

	int epfd;
	struct ep_src ep_vu_listen, ep_vu_conn, ep_kick[2], ep_uds, ep_uds_seq;
	struct ep_src ep_sig, ep_ctl;
	int vu_listen_fd, vu_fd, uds_fd, uds_seq_fd, sig_fd, ctl_fd;

	/* vhost-user state */
	uint64_t features, protocol_features;
	bool seqpacket; /* VIRTIO_VSOCK_F_SEQPACKET negotiated */
	bool owner;
	struct guest_mem mem;
	struct device_ring vq[2];
	bool vq_ready[2];
	bool vq_kicked[2]; /* a kick arrived since the ring was set up */
	uint64_t vq_ready_ms[2]; /* when the ring became ready */

	/* RX chain popped but not filled yet (see vsock_rx) */
	struct vq_elem rx_held;
	bool rx_held_valid;

	/* connections */
	struct conn **hash;
	struct conn *all; /* every connection */
	struct conn *work_head, *work_tail; /* waiting for RX buffers */
	struct conn *zombies; /* freed after the epoll batch */
	unsigned nconns;
	uint32_t next_host_port;
	struct {
		uint32_t host_port, guest_port;
		uint16_t type;
	} rst_queue[RST_QUEUE_LEN];
	unsigned rst_count;
	uint64_t last_tick_ms;
};

/* the device: conn.c, hybrid_front.c, guest_tx.c, guest_rx.c */
void vsock_init(struct vsock_dev *d);
void vsock_process(struct vsock_dev *d); /* one pass over both rings */
void vsock_conn_event(struct vsock_dev *d, struct ep_src *src, uint32_t events);
void vsock_accept(struct vsock_dev *d, bool seqpacket);
void vsock_reset(struct vsock_dev *d); /* the guest went away */
void vsock_tick(struct vsock_dev *d); /* timeouts, ~every 200 ms */
void vsock_reap(struct vsock_dev *d); /* after each epoll batch */
bool vsock_rx_waiting(struct vsock_dev *d); /* work blocked on RX buffers */
void vsock_stop_ring(struct vsock_dev *d, unsigned idx);
uint64_t now_ms(void);

/* vhost_user.c: the front end protocol */
void vu_accept(struct vsock_dev *d);
void vu_readable(struct vsock_dev *d);
void vu_disconnect(struct vsock_dev *d);
void vu_update_ready(struct vsock_dev *d, unsigned idx);
void vu_notify(struct vsock_dev *d, unsigned idx);
/* vring_broken_hook: tell the front end the device needs a reset. */
void vu_ring_broken(struct device_ring *vr);

#endif
