// SPDX-License-Identifier: MIT
/* Address translation with overflow-safe bounds checks. */
#include <sys/mman.h>

#include "guest_mem.h"

/* True if [addr, addr + len) lies inside [start, start + size). */
static bool range_inside(uint64_t addr, uint64_t len, uint64_t start, uint64_t size)
{
	if (addr < start)
		return false;
	if (addr - start > size)
		return false;
	return len <= size - (addr - start);
}

void *guest_mem_gpa(const struct guest_mem *m, uint64_t gpa, uint64_t len)
{
	for (unsigned i = 0; i < m->nregions; i++) {
		const struct guest_region *r = &m->r[i];

		if (range_inside(gpa, len, r->gpa, r->size))
			return r->host + (gpa - r->gpa);
	}
	return NULL;
}

void *guest_mem_uaddr(const struct guest_mem *m, uint64_t uaddr, uint64_t len)
{
	for (unsigned i = 0; i < m->nregions; i++) {
		const struct guest_region *r = &m->r[i];

		if (range_inside(uaddr, len, r->uaddr, r->size))
			return r->host + (uaddr - r->uaddr);
	}
	return NULL;
}

void guest_mem_unmap(struct guest_mem *m)
{
	for (unsigned i = 0; i < m->nregions; i++)
		if (m->r[i].map_base)
			munmap(m->r[i].map_base, m->r[i].map_len);
	m->nregions = 0;
}
