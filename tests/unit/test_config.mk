test_config_SRCS := kernel/config.c
