test_vsock_states_SRCS := net/vsock/socket.c net/vsock/packet.c kernel/config.c
