// SPDX-License-Identifier: MIT
/*
 * The guest's instruction counter, read live from the ringside-cost
 * plugin's shared-memory block (host/cost/cost_shm.h), so pingpong can
 * put each round trip's guest instructions next to its latency. The file
 * is written by QEMU: its header is checked against the file's size
 * before any counter is read, and a block of another layout is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/cost/cost_shm.h"
#include "bench.h"

/* Is [off, off + n * size) inside a file of len bytes? */
static int fits(uint64_t off, uint64_t n, uint64_t size, uint64_t len)
{
	return off <= len && size && n <= (len - off) / size;
}

static const char *check_header(const struct cost_shm_header *h, uint64_t len)
{
	if (h->magic != COST_SHM_MAGIC)
		return "not a ringside cost block";
	if (h->version != COST_SHM_VERSION)
		return "cost block of another version";
	if (h->vcpu_size < sizeof(struct cost_vcpu) || h->n_vcpus == 0 || h->n_vcpus > 1024)
		return "bad vCPU table";
	if (!fits(h->vcpu_offset, h->n_vcpus, h->vcpu_size, len))
		return "vCPU table outside the file";
	return NULL;
}

int guest_cost_open(struct guest_cost *gc, const char *path)
{
	const char *why = "too short for a cost block";
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "ringside-bench: --cost-shm %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size < sizeof(struct cost_shm_header))
		goto bad;
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "ringside-bench: --cost-shm %s: %s\n", path, strerror(errno));
		return -1;
	}
	why = check_header(p, st.st_size);
	if (why) {
		munmap(p, st.st_size);
		fprintf(stderr, "ringside-bench: --cost-shm %s: %s\n", path, why);
		return -1;
	}
	/* the layout as checked: QEMU may rewrite the header later */
	gc->map = p;
	gc->len = st.st_size;
	gc->vcpus = (const char *)p + ((const struct cost_shm_header *)p)->vcpu_offset;
	gc->n_vcpus = ((const struct cost_shm_header *)p)->n_vcpus;
	gc->stride = ((const struct cost_shm_header *)p)->vcpu_size;
	return 0;
bad:
	close(fd);
	fprintf(stderr, "ringside-bench: --cost-shm %s: %s\n", path, why);
	return -1;
}

/*
 * Totals over the vCPUs. Each counter is an aligned u64 the plugin only
 * adds to, so a volatile load sees it whole; two counters are not one
 * snapshot, which is fine at round-trip granularity.
 */
void guest_cost_read(const struct guest_cost *gc, struct guest_cost_sample *s)
{
	s->insns = s->halts = s->idle_ns = 0;
	for (uint32_t i = 0; i < gc->n_vcpus; i++) {
		const volatile struct cost_vcpu *v =
			(const void *)(gc->vcpus + (size_t)i * gc->stride);

		s->insns += v->insns;
		s->halts += v->halts;
		s->idle_ns += v->idle_ns;
	}
}
