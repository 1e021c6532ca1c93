test_fuzz_gen_SRCS := drivers/virtio/fuzz_gen.c
