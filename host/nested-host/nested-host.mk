# The nested host's L1 (-include'd by the Makefile; host/nested boots it).
#   make nested-host        build/nested-host/bzImage + initrd: this machine's kernel (6.1)
#   make nested-host-6.12   build/nested-host-6.12/...: Debian's 6.12 kernel, downloaded
#                           (apt-get download), not installed (host/nested --kernel 6.12)
NESTED_HOST := $(BUILD)/nested-host/initrd
NESTED_HOST_6_12 := $(BUILD)/nested-host-6.12/initrd
NESTED_HOST_SRCS := host/nested-host/build.sh host/nested-host/init host/linux-guest/initrd.sh
.PHONY: nested-host nested-host-6.12
nested-host: $(NESTED_HOST)
nested-host-6.12: $(NESTED_HOST_6_12)
$(NESTED_HOST): $(NESTED_HOST_SRCS)
	host/nested-host/build.sh $(BUILD)/nested-host
$(NESTED_HOST_6_12): $(NESTED_HOST_SRCS)
	host/nested-host/build.sh --kernel 6.12 $(BUILD)/nested-host-6.12
