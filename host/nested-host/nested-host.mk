# The nested host's L1 (-include'd by the Makefile; host/nested boots it).
#   make nested-host   build/nested-host/bzImage + build/nested-host/initrd
NESTED_HOST := $(BUILD)/nested-host/initrd
.PHONY: nested-host
nested-host: $(NESTED_HOST)
$(NESTED_HOST): host/nested-host/build.sh host/nested-host/init host/linux-guest/initrd.sh
	host/nested-host/build.sh $(BUILD)/nested-host
