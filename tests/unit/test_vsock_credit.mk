test_vsock_credit_SRCS := net/vsock/socket.c net/vsock/packet.c kernel/config.c
