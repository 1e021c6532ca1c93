test_config_ipv4_SRCS := kernel/config.c
