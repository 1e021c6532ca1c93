# libFuzzer targets: tests/fuzz/fuzz_NAME.c links with fuzz_NAME_SRCS.
FUZZ_NAMES := fuzz_desc_chain fuzz_vsock_hdr fuzz_guest_vsock
FUZZ_VV := host/vhost-vsock
FUZZ_VRING := $(FUZZ_VV)/vring.c $(FUZZ_VV)/vring_split.c $(FUZZ_VV)/vring_packed.c \
	$(FUZZ_VV)/guest_mem.c $(FUZZ_VV)/stats.c
fuzz_desc_chain_SRCS := $(FUZZ_VRING)
fuzz_vsock_hdr_SRCS := $(FUZZ_VRING) $(FUZZ_VV)/vsock_hdr.c
fuzz_guest_vsock_SRCS := net/vsock/socket.c net/vsock/packet.c kernel/config.c
