test_spsc_ring_SRCS := kernel/spsc_ring.c
