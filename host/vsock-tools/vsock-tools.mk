# The kernel's own vsock benchmark, vsock_perf (tools/testing/vsock/), as an
# independent client next to ringside-bench (-include'd by the Makefile;
# bench-vsock --vsock-perf and tests/kvm/test_vsock_perf.py run it).
#   make vsock-perf   build/vsock-tools/vsock_perf
# The source comes from Debian's linux-source-6.12 package, fetched with
# `apt-get download` into build/vsock-tools/ (nothing is installed, nothing
# of the kernel tree is in this repository): only tools/testing/vsock/ and
# the top Makefile (its version) are taken from the tarball inside the .deb,
# which is then deleted. Measured with 6.12.117 (package 6.12.117-1~deb12u1);
# build/vsock-tools/VERSION names the one built. VSOCK_SRC_VERSION=V picks
# another package version (default: apt's candidate). The system's
# linux-libc-dev headers suffice (linux/vm_sockets.h, linux/errqueue.h).
VSOCK_TOOLS := $(BUILD)/vsock-tools
VSOCK_PERF := $(VSOCK_TOOLS)/vsock_perf
VSOCK_SRC_PKG := linux-source-6.12
VSOCK_SRC_VERSION ?=
VSOCK_SRC := $(VSOCK_TOOLS)/src/tools/testing/vsock
.PHONY: vsock-perf
vsock-perf: $(VSOCK_PERF)

$(VSOCK_TOOLS)/src/stamp: host/vsock-tools/vsock-tools.mk
	rm -rf $(VSOCK_TOOLS)/src $(VSOCK_TOOLS)/deb
	mkdir -p $(VSOCK_TOOLS)/src $(VSOCK_TOOLS)/deb
	cd $(VSOCK_TOOLS)/deb && apt-get download -q \
		$(VSOCK_SRC_PKG)$(if $(VSOCK_SRC_VERSION),=$(VSOCK_SRC_VERSION)) 2>&1 | \
		grep -v 'unsandboxed' || true
	@ls $(VSOCK_TOOLS)/deb/$(VSOCK_SRC_PKG)_*.deb >/dev/null 2>&1 || \
		{ echo "vsock-perf: apt-get download $(VSOCK_SRC_PKG) failed (make deps runs" \
		"apt-get update)"; exit 1; }
	dpkg-deb --fsys-tarfile $(VSOCK_TOOLS)/deb/$(VSOCK_SRC_PKG)_*.deb | \
		tar -xOf - ./usr/src/$(VSOCK_SRC_PKG).tar.xz | \
		tar -xJf - -C $(VSOCK_TOOLS)/src --strip-components=1 \
		$(VSOCK_SRC_PKG)/Makefile $(VSOCK_SRC_PKG)/tools/testing/vsock
	basename $(VSOCK_TOOLS)/deb/$(VSOCK_SRC_PKG)_*.deb .deb >$(VSOCK_TOOLS)/VERSION
	rm -rf $(VSOCK_TOOLS)/deb
	touch $@

# Static: L1 (host/nested) runs it with this machine's /usr, so either works.
$(VSOCK_PERF): $(VSOCK_TOOLS)/src/stamp
	@echo "  CC      $@"
	@$(HOSTCC) -O2 -g -static -Wall -D_GNU_SOURCE -I$(VSOCK_SRC) -o $@ \
		$(VSOCK_SRC)/vsock_perf.c $(VSOCK_SRC)/msg_zerocopy_common.c
