test_ring_packed_SRCS := drivers/virtio/virtqueue.c drivers/virtio/ring_split.c \
	drivers/virtio/ring_packed.c tests/unit/ring_model.c $(VRING_SRCS) tests/unit/stub_dma.c
$(BUILD)/unit/test_ring_packed: $(wildcard drivers/virtio/*.h) kernel/barrier.h kernel/dma.h $(wildcard host/vring/*.h)
