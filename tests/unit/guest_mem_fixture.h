/* SPDX-License-Identifier: MIT */
/*
 * One fake guest memory for the back end's ring tests: MEM_SIZE bytes
 * at guest-physical 0, mapped at the user address UADDR the way the
 * vhost-user front end hands regions over (host/vring/guest_mem), with
 * the device ring and the element a pop fills.
 */
#ifndef TESTS_UNIT_GUEST_MEM_FIXTURE_H
#define TESTS_UNIT_GUEST_MEM_FIXTURE_H

#include <stdint.h>

#include "host/vring/vring.h"

#define MEM_SIZE (64 * 1024)
#define UADDR 0x100000000ull

static uint8_t mem[MEM_SIZE] __attribute__((aligned(4096)));
static struct guest_mem gm = {
	.nregions = 1,
	.r[0] = { .gpa = 0, .size = MEM_SIZE, .uaddr = UADDR, .host = mem },
};
static struct device_ring vr;
static struct vq_elem e;

#endif
