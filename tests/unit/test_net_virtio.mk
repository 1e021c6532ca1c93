test_net_virtio_SRCS := drivers/virtio/virtio_net.c $(RING_SRCS) tests/unit/ring_model.c $(VRING_SRCS) \
	tests/unit/stub_dma.c kernel/config.c drivers/virtio/txpoll.c drivers/virtio/virtio_net_ctrl.c \
	tests/unit/fake_virtio_pci.c kernel/poll.c tests/unit/stub_kernel.c
