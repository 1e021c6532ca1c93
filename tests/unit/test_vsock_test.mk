# app/vsock_test.c is #included by the test (its poll context, run and console command are static).
test_vsock_test_SRCS := tests/unit/host_peer.c tests/unit/fake_transport.c net/vsock/socket.c net/vsock/packet.c kernel/config.c kernel/poll.c tests/unit/stub_kernel.c app/vsock_test_cases.c
