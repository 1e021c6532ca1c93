test_virtio_show_SRCS := drivers/virtio/virtio_show.c drivers/virtio/virtqueue.c \
	drivers/virtio/ring_split.c drivers/virtio/ring_packed.c tests/unit/stub_dma.c
