test_ring_common_SRCS := $(RING_SRCS) tests/unit/ring_model.c $(VRING_SRCS) tests/unit/stub_dma.c
