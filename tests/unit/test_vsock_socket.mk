test_vsock_socket_SRCS := net/vsock/socket.c net/vsock/packet.c kernel/config.c
