# The Linux baseline guests for the vsock and pktgen tests (-include'd by the Makefile).
#   make linux-guest        build/linux-guest/bzImage + initrd: this machine's kernel (6.1)
#   make linux-guest-6.12   build/linux-guest-6.12/bzImage + initrd: Debian's 6.12 kernel,
#                           downloaded (apt-get download), not installed; same initrd
# Both initrds carry the kernel's vsock_test (make vsock-test) for `vsocktest`.
LINUX_GUEST := $(BUILD)/linux-guest/initrd
LINUX_GUEST_6_12 := $(BUILD)/linux-guest-6.12/initrd
LINUX_GUEST_SRCS := host/linux-guest/build.sh host/linux-guest/guest-server.c \
	host/linux-guest/vsock_test_bridge.c host/linux-guest/vsock_test_bridge.h \
	host/linux-guest/initrd.sh $(VSOCK_TEST)
.PHONY: linux-guest linux-guest-6.12
linux-guest: $(LINUX_GUEST)
linux-guest-6.12: $(LINUX_GUEST_6_12)
$(LINUX_GUEST): $(LINUX_GUEST_SRCS)
	host/linux-guest/build.sh --vsock-test $(VSOCK_TEST) $(BUILD)/linux-guest
$(LINUX_GUEST_6_12): $(LINUX_GUEST_SRCS)
	host/linux-guest/build.sh --kernel 6.12 --vsock-test $(VSOCK_TEST) $(BUILD)/linux-guest-6.12
