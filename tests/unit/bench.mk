# Ring microbenchmark (host/bench-rings): -O2, no sanitizers, not in `make unit`.
BENCH_RINGS_SRCS := $(RING_SRCS) tests/unit/stub_dma.c $(VRING_SRCS)

$(BUILD)/unit/bench_rings: tests/unit/bench_rings.c $(BENCH_RINGS_SRCS) \
		$(wildcard drivers/virtio/*.h) kernel/barrier.h kernel/dma.h \
		$(wildcard host/vring/*.h)
	@mkdir -p $(dir $@)
	$(HOSTCC) -std=gnu11 -O2 -g $(WARN) -I. -Itests/unit -o $@ \
		tests/unit/bench_rings.c $(BENCH_RINGS_SRCS)
