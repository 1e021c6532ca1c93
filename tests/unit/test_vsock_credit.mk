test_vsock_credit_SRCS := tests/unit/host_peer.c net/vsock/socket.c net/vsock/packet.c kernel/config.c
