test_virtio_show_SRCS := drivers/virtio/virtio_show.c kernel/shell_json.c kernel/json_writer.c $(RING_SRCS) tests/unit/stub_dma.c kernel/config.c kernel/poll.c tests/unit/stub_kernel.c
