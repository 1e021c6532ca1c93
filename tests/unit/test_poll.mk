test_poll_SRCS := kernel/poll.c tests/unit/stub_kernel.c
