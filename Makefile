# ringside — the only entry point.
#   make            build/ringside.elf, build/ringside.iso, host programs
#   make deps       install the Debian packages everything needs (as root)
#   make check      the fast tier (a few minutes): include rules, format check, lint,
#                   host tests (docs/config.md current), unit tests, dependency check,
#                   one QEMU smoke boot (pytest -m smoke)
#   make test       everything: the fast tier's checks, fuzzers, then every QEMU test
#   make test-nested  the nested host's tests, the KVM suite (tests/kvm) among them
#   make docs       docs/config.md from the configuration keys' declarations
#   make smoke, make host-test   the QEMU smoke boot; the host package's tests (tests/host)
#   make lint       flake8 over the Python in host/ and tests/ (config: .flake8)
#   make format-check   every C file in .clang-format style (make format fixes)
#   make coverage   unit-test line and branch coverage (lcov), build/coverage/
#   make mutants    mutation probe of the tests (tests/mutants/mutations.txt)
#   make vsock-perf the kernel's vsock_perf (build/vsock-tools/, from Debian's linux-source)
#   make vsock-test the kernel's vsock_test and vsock_diag_test (build/vsock-tools/, the same)
#   make run        boot the ISO with vsock (build/vsock), serial console on stdio
#   make bench      the main job: boot the appliance and print benchmark tables
#                   (./ringside COMMAND runs every tool: ./ringside --help)
#   make clean      remove build/ (the newlib build is kept: make distclean)

BUILD   := build
PYTHON  := /usr/bin/python3
HOSTCC  ?= gcc
KCC     := gcc
LD      := gcc
OBJCOPY := objcopy

NEWLIB_TAR := /usr/src/newlib/newlib-3.3.0.tar.xz
NEWLIB_DIR := $(BUILD)/newlib
NEWLIB_SYS := $(abspath $(NEWLIB_DIR))/install/x86_64-elf
NEWLIB_CFLAGS := -O2 -g -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
	-mno-red-zone -fno-omit-frame-pointer

GCC_INCLUDE := $(shell $(KCC) -print-file-name=include)

WARN := -Wall -Wextra -Werror -Wno-unused-parameter
KCFLAGS := -std=gnu11 -O2 -g $(WARN) -Wa,--fatal-warnings -ffreestanding -fno-pic -fno-pie \
	-fno-stack-protector -mno-red-zone -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer -fno-common -fno-strict-aliasing --param=min-pagesize=0 \
	-nostdinc -isystem $(NEWLIB_SYS)/include -isystem $(GCC_INCLUDE) \
	-I. -D__RINGSIDE_KERNEL__ -MMD -MP
KASFLAGS := $(KCFLAGS) -D__ASSEMBLY__
KLDFLAGS := -nostdlib -static -no-pie -Wl,-n -Wl,-z,max-page-size=0x1000 \
	-Wl,--build-id=sha1 -Wl,-z,noexecstack -Wl,-T,kernel/linker.ld

# Everything in these folders is kernel code; one concept per file.
KERNEL_DIRS := boot kernel drivers/virtio net net/vsock app libc
KERNEL_SRCS := $(filter-out boot/efi_%.c,$(foreach d,$(KERNEL_DIRS),$(wildcard $(d)/*.c $(d)/*.S)))
KERNEL_OBJS := $(patsubst %,$(BUILD)/k/%.o,$(basename $(KERNEL_SRCS)))

NEWLIB_LIBS := $(NEWLIB_SYS)/lib/libc.a $(NEWLIB_SYS)/lib/libm.a
LIBGCC := $(shell $(KCC) -print-libgcc-file-name)

.PHONY: all deps kernel iso host test check check-includes host-test smoke docs lint unit \
	unit-build fuzz fuzz-build qemu-test test-nested run bench bench-seeds clean distclean format \
	format-check coverage mutants test-deps list-test-srcs
all: $(BUILD)/ringside.elf $(BUILD)/ringside.iso host

deps:
	@host/install-deps

# ---------------------------------------------------------------- newlib
# Built once from Debian's newlib-source with the kernel's code model.
$(NEWLIB_DIR)/stamp: | $(NEWLIB_TAR)
	rm -rf $(NEWLIB_DIR) && mkdir -p $(NEWLIB_DIR)/src $(NEWLIB_DIR)/obj
	tar -C $(NEWLIB_DIR)/src -xf $(NEWLIB_TAR)
	cd $(NEWLIB_DIR)/obj && ../src/*/configure -q --target=x86_64-elf \
		--prefix=$(abspath $(NEWLIB_DIR))/install \
		--disable-multilib --disable-newlib-supplied-syscalls \
		--disable-nls --enable-newlib-io-long-long \
		CC_FOR_TARGET=gcc AR_FOR_TARGET=ar RANLIB_FOR_TARGET=ranlib \
		AS_FOR_TARGET=as LD_FOR_TARGET=ld NM_FOR_TARGET=nm \
		CFLAGS_FOR_TARGET="$(NEWLIB_CFLAGS)" >/dev/null
	$(MAKE) -C $(NEWLIB_DIR)/obj -s all-target-newlib >$(NEWLIB_DIR)/build.log 2>&1 || \
		{ tail -40 $(NEWLIB_DIR)/build.log; exit 1; }
	$(MAKE) -C $(NEWLIB_DIR)/obj -s install-target-newlib >>$(NEWLIB_DIR)/build.log 2>&1
	touch $@

$(NEWLIB_TAR):
	@echo "missing $@: run 'make deps' (package newlib-source)"; exit 1

$(NEWLIB_LIBS): $(NEWLIB_DIR)/stamp

# ---------------------------------------------------------------- kernel
$(BUILD)/k/%.o: %.c $(NEWLIB_DIR)/stamp
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(KCC) $(KCFLAGS) -c $< -o $@

$(BUILD)/k/%.o: %.S $(NEWLIB_DIR)/stamp
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(KCC) $(KASFLAGS) -c $< -o $@

$(BUILD)/ringside.elf: $(KERNEL_OBJS) kernel/linker.ld $(NEWLIB_DIR)/stamp
	@echo "  LD      $@"
	@$(LD) $(KLDFLAGS) -o $@ $(KERNEL_OBJS) $(NEWLIB_LIBS) $(LIBGCC)
	@size $@ | tail -1

kernel: $(BUILD)/ringside.elf

# Boot paths with their own build rules (e.g. the GNU-EFI image) add them here.
-include $(wildcard boot/*.mk)

# ---------------------------------------------------------------- ISO
$(BUILD)/ringside.iso: $(BUILD)/ringside.elf iso/grub.cfg iso/mkiso
	iso/mkiso $(BUILD) $@

iso: $(BUILD)/ringside.iso

# ---------------------------------------------------------------- host
# Each folder host/NAME/ with C sources becomes build/host/ringside-NAME;
# host/linux-guest holds the Linux baseline guest, built by its own rules;
# host/vring is a library (the device side of virtqueues) that programs
# list in HOST_LIBS_NAME and the unit tests link too; host/cost is a QEMU
# plugin (a shared object), built below.
HOST_LIB_DIRS := host/linux-guest host/vring host/cost
HOST_DIRS := $(filter-out $(HOST_LIB_DIRS),$(patsubst %/,%,$(dir $(wildcard host/*/*.c))))
VRING_SRCS := $(wildcard host/vring/*.c)
# The guest's virtqueues, both layouts: what every ring test and fuzzer links.
RING_SRCS := drivers/virtio/virtqueue.c drivers/virtio/ring_split.c drivers/virtio/ring_packed.c
HOST_LIBS_vhost-vsock := $(VRING_SRCS) $(wildcard host/vring/*.h)
HOST_LIBS_bench := host/cost/cost_shm.h
# the guest fuzzer's generator, one source for both sides
HOST_LIBS_fuzz-gen := drivers/virtio/fuzz_gen.c drivers/virtio/fuzz_gen.h
HOST_PROGS := $(sort $(patsubst host/%,$(BUILD)/host/ringside-%,$(HOST_DIRS)))
HOST_CFLAGS := -std=gnu11 -O2 -g $(WARN) -D_GNU_SOURCE -I.
COST_PLUGIN := $(BUILD)/host/ringside-cost.so
host: $(HOST_PROGS) $(COST_PLUGIN)

# The guest cost counter: a TCG plugin QEMU loads with -plugin (docs/benchmarks.md).
# Its qemu_plugin_* references resolve against qemu-system-x86_64 at load time.
$(COST_PLUGIN): $(wildcard host/cost/*.c) $(wildcard host/cost/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(HOSTCC) $(HOST_CFLAGS) -shared -fPIC -fvisibility=hidden -o $@ $(filter %.c,$^) -lpthread

.SECONDEXPANSION:
$(BUILD)/host/ringside-%: $$(wildcard host/%/*.c) $$(wildcard host/%/*.h) $$(HOST_LIBS_%)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(HOSTCC) $(HOST_CFLAGS) -o $@ $(filter %.c,$^) -lm -lpthread

# vsock-tools first: the Linux guests' initrds carry its vsock_test.
-include host/vsock-tools/vsock-tools.mk
-include host/linux-guest/linux-guest.mk
-include host/nested-host/nested-host.mk

# ---------------------------------------------------------------- tests
# tests/unit/test_NAME.c links with the kernel sources that
# tests/unit/test_NAME.mk lists in test_NAME_SRCS. Every source becomes one
# object per build flavour with a generated dependency file (-MMD), so a
# changed header rebuilds exactly the objects, and so the binaries, that
# include it.
-include $(wildcard tests/unit/*.mk)
UNIT_NAMES := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))
UNIT_TESTS := $(addprefix $(BUILD)/unit/,$(UNIT_NAMES))
UNIT_CFLAGS := -std=gnu11 -O1 -g $(WARN) -I. -Itests/unit -DUNIT_TEST \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
# gcov flavour for `make coverage`: no optimisation so lines map 1:1
COV_CFLAGS := -std=gnu11 -O0 -g $(WARN) -I. -Itests/unit -DUNIT_TEST --coverage

# Objects are shared by every binary of a flavour. They are named here as
# explicit prerequisites (not left to pattern search), so make never treats
# them as intermediate: deleted or missing, they are rebuilt.
unit_objs = $(patsubst %.c,$(1)/%.o,tests/unit/$(2).c $($(2)_SRCS))
fuzz_objs = $(patsubst %.c,$(BUILD)/fuzz/o/%.o,tests/fuzz/$(1).c $($(1)_SRCS))
define test_bin_deps
$(BUILD)/unit/$(1): $(call unit_objs,$(BUILD)/unit/o,$(1))
$(BUILD)/cov/$(1): $(call unit_objs,$(BUILD)/cov/o,$(1))
endef
$(foreach t,$(UNIT_NAMES),$(eval $(call test_bin_deps,$(t))))

$(BUILD)/unit/o/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(HOSTCC) $(UNIT_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/cov/o/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(HOSTCC) $(COV_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/unit/test_%:
	@echo "  LD      $@"
	@$(HOSTCC) $(UNIT_CFLAGS) -o $@ $^ -lcmocka

$(BUILD)/cov/test_%:
	@echo "  LD      $@"
	@$(HOSTCC) $(COV_CFLAGS) -o $@ $^ -lcmocka

unit-build: $(UNIT_TESTS)

unit: $(UNIT_TESTS)
	@set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $$t; done

# For tests/build/test-deps and tests/mutants/run: which sources make which
# test binary ("BINARY: SOURCE...", one line each).
list-test-srcs:
	@$(foreach t,$(UNIT_NAMES),echo "$(BUILD)/unit/$(t): tests/unit/$(t).c $($(t)_SRCS)";)
	@$(foreach t,$(FUZZ_NAMES),echo "$(BUILD)/fuzz/$(t): tests/fuzz/$(t).c $($(t)_SRCS)";)

# Line and branch coverage of the unit tests (lcov), HTML in build/coverage/.
COV_TESTS := $(addprefix $(BUILD)/cov/,$(UNIT_NAMES))
coverage: $(COV_TESTS)
	tests/coverage/run $(BUILD) $(COV_TESTS)

# Single-line mutations of the critical code, each must fail a test.
mutants:
	$(PYTHON) tests/mutants/run $(MUTANTS_ARGS)

# The build dependency check: a header rebuilds exactly its includers.
test-deps:
	tests/build/test-deps

qemu-test: all linux-guest linux-guest-6.12 nested-host nested-host-6.12 vsock-perf vsock-test
	$(PYTHON) -m pytest -v --durations=25 tests/qemu $(PYTEST_ARGS)

# The nested host's tests alone (make test runs them too), the KVM suite
# (tests/kvm) inside it among them.
test-nested: all linux-guest linux-guest-6.12 nested-host nested-host-6.12 vsock-perf vsock-test
	$(PYTHON) -m pytest -v tests/qemu/test_nested.py $(PYTEST_ARGS)

# libFuzzer targets (clang, ASan + UBSan), each run for a bounded time by
# tests/fuzz/run.sh; tests/fuzz/fuzz.mk lists each target's sources.
-include tests/fuzz/fuzz.mk
FUZZ_CC := clang
FUZZ_CFLAGS := -std=gnu11 -g -O1 -I. -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined $(WARN)
FUZZ_BINS := $(addprefix $(BUILD)/fuzz/,$(FUZZ_NAMES))

$(BUILD)/fuzz/o/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(foreach t,$(FUZZ_NAMES),$(eval $(BUILD)/fuzz/$(t): $(call fuzz_objs,$(t))))
$(BUILD)/fuzz/fuzz_%:
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $^

fuzz-build: $(FUZZ_BINS)

FUZZ_SECONDS ?= 20
fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_SECONDS)

# Python: the package host/ringside/, the front door ./ringside that runs it, tests/.
lint:
	$(PYTHON) -m flake8 host tests ringside

# Source rules no compiler checks: the guest's include layering.
check-includes:
	@tests/check-includes

# The host package and the generated docs, no QEMU (tests/host); the
# fuzzer's campaign tests run its generator, the guest's own code.
host-test: $(BUILD)/host/ringside-fuzz-gen
	$(PYTHON) -m pytest -q tests/host $(PYTEST_ARGS)

# One boot of the appliance with one echo (tests marked smoke).
smoke: all
	$(PYTHON) -m pytest -q -m smoke tests/qemu $(PYTEST_ARGS)

# docs/config.md from the CONFIG_KEY declarations (tests/host checks it is current).
docs:
	$(PYTHON) ./ringside config-doc -o docs/config.md

# The fast tier: everything but the fuzzers' runs and the long QEMU tests.
# What it runs is built first on every core (test-deps needs the fuzzers).
NPROC := $(shell nproc 2>/dev/null || echo 1)
check:
	$(MAKE) check-includes
	$(MAKE) format-check
	$(MAKE) lint
	$(MAKE) host-test
	$(MAKE) -j$(NPROC) all unit-build fuzz-build
	$(MAKE) unit
	$(MAKE) test-deps
	$(MAKE) smoke

test: deps
	$(MAKE) check-includes
	$(MAKE) format-check
	$(MAKE) lint
	$(MAKE) host-test
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) test-deps
	$(MAKE) fuzz
	$(MAKE) qemu-test

# The appliance with its services: host programs reach them through
# build/vsock (hybrid vsock, e.g. build/host/ringside-bench pingpong --uds build/vsock);
# the launcher says so once the back end listens there. Ctrl-A x quits.
run: all
	./ringside run --vsock --vsock-uds $(abspath $(BUILD))/vsock --wait-ready=no $(RUN_ARGS)

bench: deps
	$(MAKE) all
	./ringside bench $(BENCH_ARGS)

# The seeds' tables with guest cost: build/bench/seeds.md and PNGs (docs/benchmarks.md).
bench-seeds: deps
	$(MAKE) all linux-guest linux-guest-6.12 nested-host
	./ringside seeds $(SEEDS_ARGS)

format:
	clang-format -i $(shell git ls-files '*.c' '*.h')

# Every C file in .clang-format style (make test runs this first).
format-check:
	@clang-format --dry-run -Werror $(shell git ls-files '*.c' '*.h') && \
		echo "format-check: $(words $(shell git ls-files '*.c' '*.h')) files clean"

clean:
	rm -rf $(BUILD)/k $(BUILD)/unit $(BUILD)/cov $(BUILD)/coverage $(BUILD)/fuzz/o $(BUILD)/mutants \
		$(BUILD)/host $(BUILD)/iso $(BUILD)/*.elf $(BUILD)/*.iso

distclean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/k $(BUILD)/host $(BUILD)/unit/o $(BUILD)/cov/o $(BUILD)/fuzz/o \
	-name '*.d' 2>/dev/null)
