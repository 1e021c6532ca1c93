# services.c is #included by the test (to fail its allocations on purpose).
test_services_SRCS := net/vsock/socket.c net/vsock/packet.c kernel/config.c
