# The Linux baseline guest for the vsock and pktgen tests (-include'd by the Makefile).
#   make linux-guest   build/linux-guest/bzImage + build/linux-guest/initrd
LINUX_GUEST := $(BUILD)/linux-guest/initrd
.PHONY: linux-guest
linux-guest: $(LINUX_GUEST)
$(LINUX_GUEST): host/linux-guest/build.sh host/linux-guest/guest-server.c host/linux-guest/initrd.sh
	host/linux-guest/build.sh $(BUILD)/linux-guest
