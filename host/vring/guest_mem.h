/* SPDX-License-Identifier: MIT */
/*
 * Guest memory as the front end shares it (vhost-user.rst,
 * VHOST_USER_SET_MEM_TABLE): up to 8 regions, each with a guest physical
 * address, a size, the front end's user address and an fd + mmap offset.
 * Descriptor addresses are guest physical; ring addresses given by
 * SET_VRING_ADDR are front-end user addresses.
 */
#ifndef HOST_VRING_GUEST_MEM_H
#define HOST_VRING_GUEST_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define GUEST_MEM_MAX_REGIONS 8

struct guest_region {
	uint64_t gpa; /* guest physical start */
	uint64_t size;
	uint64_t uaddr; /* front end's virtual address */
	uint8_t *host; /* where the region starts in our mapping */
	void *map_base; /* what mmap returned (munmap this) */
	size_t map_len;
};

struct guest_mem {
	unsigned nregions;
	struct guest_region r[GUEST_MEM_MAX_REGIONS];
};

/* Host pointer for [gpa, gpa + len) if it lies in one region, else NULL. */
void *guest_mem_gpa(const struct guest_mem *m, uint64_t gpa, uint64_t len);
/* The same for a front-end user address (ring addresses). */
void *guest_mem_uaddr(const struct guest_mem *m, uint64_t uaddr, uint64_t len);
/* Unmap every region. */
void guest_mem_unmap(struct guest_mem *m);

#endif
