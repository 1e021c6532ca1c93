test_poll_SRCS := kernel/poll.c
