test_ring_packed_SRCS := $(RING_SRCS) tests/unit/ring_model.c $(VRING_SRCS) tests/unit/stub_dma.c
