# services.c is #included by the test (to fail its allocations on purpose).
test_services_SRCS := tests/unit/host_peer.c tests/unit/fake_transport.c net/vsock/socket.c net/vsock/packet.c kernel/config.c kernel/json_writer.c kernel/poll.c tests/unit/stub_kernel.c
