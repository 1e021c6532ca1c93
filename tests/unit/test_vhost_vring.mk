# the back end's ring and header checks (host/vhost-vsock), built for the host
test_vhost_vring_SRCS := host/vhost-vsock/vring.c host/vhost-vsock/vring_split.c \
	host/vhost-vsock/vring_packed.c host/vhost-vsock/guest_mem.c host/vhost-vsock/stats.c \
	host/vhost-vsock/vsock_hdr.c
