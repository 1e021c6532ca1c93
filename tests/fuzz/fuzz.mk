# libFuzzer targets: tests/fuzz/fuzz_NAME.c links with fuzz_NAME_SRCS.
# Built as the unit tests are (UNIT_TEST): kernel/poll.c's loop runs on a
# CPU the program names (kernel/percpu.h), without %gs or the wake-up IPI.
$(BUILD)/fuzz/o/%.o: FUZZ_CFLAGS += -DUNIT_TEST
FUZZ_NAMES := fuzz_desc_chain fuzz_vsock_hdr fuzz_guest_vsock fuzz_ring fuzz_json fuzz_iperf3 fuzz_vhost_user fuzz_madt
FUZZ_VRING := $(wildcard host/vring/*.c)
fuzz_desc_chain_SRCS := $(FUZZ_VRING)
fuzz_vsock_hdr_SRCS := $(FUZZ_VRING) host/vhost-vsock/vsock_hdr.c
fuzz_guest_vsock_SRCS := tests/unit/fake_transport.c net/vsock/socket.c net/vsock/packet.c kernel/config.c \
	kernel/poll.c tests/unit/stub_kernel.c
fuzz_ring_SRCS := $(RING_SRCS)
fuzz_json_SRCS := app/json.c kernel/json_writer.c
fuzz_madt_SRCS := kernel/madt.c
fuzz_iperf3_SRCS := tests/unit/host_peer.c tests/unit/fake_transport.c app/json.c kernel/json_writer.c net/vsock/socket.c net/vsock/packet.c kernel/config.c \
	kernel/poll.c tests/unit/stub_kernel.c
# the back end's vhost-user protocol: everything but main.c, as the daemon runs it
fuzz_vhost_user_SRCS := $(FUZZ_VRING) $(filter-out host/vhost-vsock/main.c,$(wildcard host/vhost-vsock/*.c))
