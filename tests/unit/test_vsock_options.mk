test_vsock_options_SRCS := tests/unit/host_peer.c tests/unit/fake_transport.c net/vsock/socket.c net/vsock/packet.c kernel/config.c kernel/poll.c tests/unit/stub_kernel.c
