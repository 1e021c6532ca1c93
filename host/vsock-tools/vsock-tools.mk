# The kernel's own vsock tools (tools/testing/vsock/) from Debian's
# linux-source-6.12 (-include'd by the Makefile): vsock_perf, an independent
# client next to ringside-bench (bench-vsock --vsock-perf,
# tests/kvm/test_vsock_perf.py), and the kernel's vsock test suite,
# vsock_test (host/ringside/vsock_test.py, tests/kvm/test_vsock_test.py),
# with vsock_diag_test beside it (it tests the vsock_diag module of the
# Linux it runs on and needs no peer of ours).
#   make vsock-perf   build/vsock-tools/vsock_perf
#   make vsock-test   build/vsock-tools/vsock_test, build/vsock-tools/vsock_diag_test
# The source comes from the package, fetched with `apt-get download` into
# build/vsock-tools/ (nothing is installed, nothing of the kernel tree is in
# this repository): only tools/testing/vsock/, tools/include/ (the
# ARRAY_SIZE and list helpers the tests include) and the top Makefile (its
# version) are taken from the tarball inside the .deb, which is then
# deleted. Measured with 6.12.118 (package 6.12.118-1~deb12u1);
# build/vsock-tools/VERSION names the one built. VSOCK_SRC_VERSION=V picks
# another package version (default: apt's candidate). The system's
# linux-libc-dev headers suffice for the uapi (linux/vm_sockets.h,
# linux/errqueue.h, linux/vm_sockets_diag.h).
VSOCK_TOOLS := $(BUILD)/vsock-tools
VSOCK_PERF := $(VSOCK_TOOLS)/vsock_perf
VSOCK_TEST := $(VSOCK_TOOLS)/vsock_test
VSOCK_DIAG_TEST := $(VSOCK_TOOLS)/vsock_diag_test
VSOCK_SRC_PKG := linux-source-6.12
VSOCK_SRC_VERSION ?=
VSOCK_SRC := $(VSOCK_TOOLS)/src/tools/testing/vsock
VSOCK_TOOLS_CFLAGS := -O2 -g -static -Wall -D_GNU_SOURCE -I$(VSOCK_SRC) \
	-I$(VSOCK_TOOLS)/src/tools/include
.PHONY: vsock-perf vsock-test
vsock-perf: $(VSOCK_PERF)
vsock-test: $(VSOCK_TEST) $(VSOCK_DIAG_TEST)

$(VSOCK_TOOLS)/src/stamp: host/vsock-tools/vsock-tools.mk
	rm -rf $(VSOCK_TOOLS)/src $(VSOCK_TOOLS)/deb
	mkdir -p $(VSOCK_TOOLS)/src $(VSOCK_TOOLS)/deb
	cd $(VSOCK_TOOLS)/deb && apt-get download -q \
		$(VSOCK_SRC_PKG)$(if $(VSOCK_SRC_VERSION),=$(VSOCK_SRC_VERSION)) 2>&1 | \
		grep -v 'unsandboxed' || true
	@ls $(VSOCK_TOOLS)/deb/$(VSOCK_SRC_PKG)_*.deb >/dev/null 2>&1 || \
		{ echo "vsock-tools: apt-get download $(VSOCK_SRC_PKG) failed (make deps runs" \
		"apt-get update)"; exit 1; }
	dpkg-deb --fsys-tarfile $(VSOCK_TOOLS)/deb/$(VSOCK_SRC_PKG)_*.deb | \
		tar -xOf - ./usr/src/$(VSOCK_SRC_PKG).tar.xz | \
		tar -xJf - -C $(VSOCK_TOOLS)/src --strip-components=1 \
		$(VSOCK_SRC_PKG)/Makefile $(VSOCK_SRC_PKG)/tools/testing/vsock \
		$(VSOCK_SRC_PKG)/tools/include
	basename $(VSOCK_TOOLS)/deb/$(VSOCK_SRC_PKG)_*.deb .deb >$(VSOCK_TOOLS)/VERSION
	rm -rf $(VSOCK_TOOLS)/deb
	touch $@

# Static: L1 (host/nested) runs them with this machine's /usr, and the Linux
# guests' initrds carry vsock_test, so no library may be missing.
$(VSOCK_PERF): $(VSOCK_TOOLS)/src/stamp
	@echo "  CC      $@"
	@$(HOSTCC) $(VSOCK_TOOLS_CFLAGS) -o $@ \
		$(VSOCK_SRC)/vsock_perf.c $(VSOCK_SRC)/msg_zerocopy_common.c

$(VSOCK_TEST): $(VSOCK_TOOLS)/src/stamp
	@echo "  CC      $@"
	@$(HOSTCC) $(VSOCK_TOOLS_CFLAGS) -o $@ $(addprefix $(VSOCK_SRC)/,vsock_test.c \
		vsock_test_zerocopy.c timeout.c control.c util.c msg_zerocopy_common.c)

$(VSOCK_DIAG_TEST): $(VSOCK_TOOLS)/src/stamp
	@echo "  CC      $@"
	@$(HOSTCC) $(VSOCK_TOOLS_CFLAGS) -o $@ $(addprefix $(VSOCK_SRC)/,vsock_diag_test.c \
		timeout.c control.c util.c)
