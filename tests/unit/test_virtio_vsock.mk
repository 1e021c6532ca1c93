test_virtio_vsock_SRCS := drivers/virtio/virtio_vsock.c drivers/virtio/virtqueue.c \
	drivers/virtio/ring_split.c drivers/virtio/ring_packed.c tests/unit/ring_model.c $(VRING_SRCS) \
	tests/unit/stub_dma.c kernel/config.c drivers/virtio/txpoll.c net/vsock/socket.c \
	net/vsock/packet.c net/vsock/poller.c
