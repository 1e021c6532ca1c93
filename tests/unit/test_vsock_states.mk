test_vsock_states_SRCS := tests/unit/host_peer.c net/vsock/socket.c net/vsock/packet.c kernel/config.c
