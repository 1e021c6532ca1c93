test_virtio_rng_SRCS := drivers/virtio/virtio_rng.c drivers/virtio/virtqueue.c \
	drivers/virtio/ring_split.c drivers/virtio/ring_packed.c tests/unit/ring_model.c $(VRING_SRCS) \
	tests/unit/stub_dma.c
