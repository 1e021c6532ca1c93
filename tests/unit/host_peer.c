// SPDX-License-Identifier: MIT
#include <string.h>

#include "host_peer.h"
#include "net/vsock/packet.h"
#include "net/vsock/vsock.h"

void host_pkt_deliver(const struct host_pkt *p)
{
	struct vsock_pkt *pkt = vsock_pkt_alloc(p->room > p->len ? p->room : p->len);

	pkt->hdr.src_cid = HOST_PEER_CID;
	pkt->hdr.dst_cid = HOST_PEER_GUEST_CID;
	pkt->hdr.src_port = p->src_port;
	pkt->hdr.dst_port = p->dst_port;
	pkt->hdr.type = p->type ? p->type : VSOCK_TYPE_STREAM;
	pkt->hdr.op = p->op;
	pkt->hdr.flags = p->flags;
	pkt->hdr.len = p->len;
	pkt->hdr.buf_alloc = p->buf_alloc;
	pkt->hdr.fwd_cnt = p->fwd_cnt;
	if (p->len)
		memcpy(pkt->data, p->data, p->len);
	vsock_pkt_free(vsock_rx(pkt));
}

void host_pkt_on(struct vsock_sock *s, uint16_t op, uint32_t flags, const void *data, uint32_t len)
{
	struct vsock_info in;

	vsock_get_info(s, &in);
	host_pkt_deliver(&(struct host_pkt){ .src_port = in.peer_port,
					     .dst_port = in.local_port,
					     .type = in.type,
					     .op = op,
					     .flags = flags,
					     .data = data,
					     .len = len,
					     .buf_alloc = 256u << 10,
					     .room = 4096 });
}
