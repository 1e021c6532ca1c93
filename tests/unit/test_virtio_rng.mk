test_virtio_rng_SRCS := drivers/virtio/virtio_rng.c $(RING_SRCS) tests/unit/ring_model.c $(VRING_SRCS) \
	tests/unit/stub_dma.c tests/unit/fake_virtio_pci.c kernel/poll.c tests/unit/stub_kernel.c
