/* SPDX-License-Identifier: MIT */
/*
 * The guest-side virtio fuzzer: `fuzz SEED [steps=N] [target=T]` on the
 * console or the boot keys fuzz, fuzz_steps, fuzz_target run a seed's
 * steps (fuzz_gen.h) against the live devices, in batches; after each
 * batch the guest waits for the device's answer and prints one line the
 * host checks its oracles against. `fuzz replay TOKEN...` runs given
 * steps. Off unless the console or the command line asks; nothing that
 * arrives over a network can start it.
 *
 * fuzz.c runs batches; the steps themselves are the targets':
 * fuzz_vsock.c (vsock headers, RX buffers), fuzz_net.c (virtio-net
 * headers and frames), fuzz_ring.c (descriptor chains, indirect tables,
 * ring indices, event structures and notifications on either device's TX
 * queue), fuzz_transport.c (the virtio-pci transport).
 */
#ifndef DRIVERS_VIRTIO_FUZZ_H
#define DRIVERS_VIRTIO_FUZZ_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/fuzz_gen.h"
#include "drivers/virtio/virtqueue.h"

/*
 * What a step reports beside its result (0, -ENOSPC: the ring is full,
 * again later; -EOPNOTSUPP: not for this ring layout or feature set,
 * skipped; -ENODEV; -EIO: the queue is broken): whether everything it
 * wrote was a well-formed ring or transport operation. The content of a
 * well-formed buffer may lie (a header, a frame); a device may drop such
 * a buffer, but it must go on. After a malformed one it may stop and
 * want a reset (virtio 1.2 2.1.2).
 */
struct fuzz_outcome {
	bool well_formed;
	/*
	 * Available ring entries naming no chain of the driver's (split): the
	 * ring counts each as a buffer out until the device's completion of
	 * it, which names no buffer in flight, is counted as garbled; it is
	 * never "kept" by the device.
	 */
	unsigned int phantoms;
};

/* Memory the steps point the device at (fuzz.c). */
struct fuzz_mem {
	/*
	 * The only guest memory a step lets the device write where it
	 * should not (device-writable descriptors on TX, queues moved):
	 * zeroed, FUZZ_SCRATCH_LEN bytes, large enough for the rings of
	 * any queue size a device might take from a step.
	 */
	uint8_t *scratch;
	uint64_t scratch_pa;
	/*
	 * A page of zeroes the device only reads: where a descriptor that
	 * says INDIRECT without a table of ours points, so the "table" the
	 * device reads names no memory at all.
	 */
	uint64_t zeros_pa;
	uint64_t ram_end; /* the first byte past usable RAM */
};
#define FUZZ_SCRATCH_LEN (2u << 20)
/* NULL without memory for the scratch area. */
const struct fuzz_mem *fuzz_mem(void);

/* A buffer of honest content for a chain the ring steps forge. */
struct fuzz_buf {
	void *token; /* what its completion gives back */
	uint8_t *data;
	uint32_t len; /* honest content */
	uint32_t cap; /* room at data, for an indirect table after the content */
};

/* A device's TX queue as the ring steps see it (fuzz_vsock.c, fuzz_net.c). */
struct fuzz_dev {
	struct virtq *(*txq)(void);
	/* honest content for a forged chain: 0 or -errno */
	int (*content)(struct fuzz_buf *b);
	/* @b as the @n descriptors @tmpl says; frees @b on failure */
	int (*forge)(struct fuzz_buf *b, const struct virtq_desc *tmpl, unsigned int n);
	/* content that was not used */
	void (*drop)(struct fuzz_buf *b);
	/* one honest buffer */
	int (*honest)(void);
	/* longest chain forge takes (0: as many as the ring has free) */
	unsigned int max_chain;
};

int fuzz_ring_step(const struct fuzz_dev *dev, const struct fuzz_step *s, struct fuzz_outcome *o);
int fuzz_vsock_step(const struct fuzz_step *s, struct fuzz_outcome *o);
int fuzz_net_step(const struct fuzz_step *s, struct fuzz_outcome *o);
int fuzz_transport_step(const struct fuzz_step *s, struct fuzz_outcome *o);
/* An honest frame on virtio-net TX: the last a batch waits to be answered. */
void fuzz_net_probe(void);

/*
 * After a transport batch: every device a step touched is reset and
 * probed again; the number restarted, or -errno of the first that did
 * not come back.
 */
int fuzz_transport_restart(void);

/* The `fuzz` command, its boot keys and its poll context. */
void fuzz_init(void);

#endif
