test_memmap_SRCS := kernel/memmap.c
