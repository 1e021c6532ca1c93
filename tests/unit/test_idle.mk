test_idle_SRCS := kernel/idle.c kernel/poll.c kernel/config.c kernel/json_writer.c
