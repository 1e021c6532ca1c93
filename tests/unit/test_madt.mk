test_madt_SRCS := kernel/madt.c
