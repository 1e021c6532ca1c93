test_ring_fixed_SRCS := drivers/virtio/virtqueue.c drivers/virtio/ring_split.c \
	drivers/virtio/ring_packed.c tests/unit/ring_model.c $(VRING_SRCS) tests/unit/stub_dma.c
