# iperf3.c is #included by the test (its state machine is static).
test_iperf3_SRCS := tests/unit/host_peer.c app/json.c kernel/json_writer.c tests/unit/fake_transport.c net/vsock/socket.c net/vsock/packet.c kernel/config.c kernel/poll.c tests/unit/stub_kernel.c
