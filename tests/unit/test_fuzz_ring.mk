test_fuzz_ring_SRCS := drivers/virtio/fuzz_ring.c drivers/virtio/fuzz_gen.c $(RING_SRCS) tests/unit/stub_dma.c
