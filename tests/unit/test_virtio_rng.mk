test_virtio_rng_SRCS := drivers/virtio/virtio_rng.c $(RING_SRCS) tests/unit/ring_model.c $(VRING_SRCS) \
	tests/unit/stub_dma.c
