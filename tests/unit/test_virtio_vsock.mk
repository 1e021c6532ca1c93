test_virtio_vsock_SRCS := drivers/virtio/virtio_vsock.c $(RING_SRCS) tests/unit/ring_model.c $(VRING_SRCS) \
	tests/unit/stub_dma.c kernel/config.c drivers/virtio/txpoll.c net/vsock/socket.c \
	net/vsock/packet.c net/vsock/poller.c kernel/json_writer.c app/json.c \
	tests/unit/fake_virtio_pci.c kernel/poll.c tests/unit/stub_kernel.c
