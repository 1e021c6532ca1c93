/* SPDX-License-Identifier: MIT */
/*
 * The guest-side virtio fuzzer's step sequence (fuzz_gen.c): pure, no
 * device, so the guest, the host tool that prints a seed's steps
 * (host/fuzz-gen) and the unit tests share one definition.
 *
 * A step is a kind (what a driver can do to a device: a vsock header, a
 * descriptor chain, a device status write, ...) and a 64-bit word whose
 * bit fields pick what the step changes; a field of 0 is the honest
 * value, so a word of 0 is the honest step and shrinking a word towards
 * 0 shrinks the step towards what a well-behaved driver does. Step i of
 * a seed and target is a hash of the three, so any range of a run can be
 * drawn again on its own: the same seed gives the same steps on every
 * run, in the guest and on the host.
 *
 * A step's token is its kind's two letters, a dot and the word in hex
 * ("hd.4a0012"): what the console prints and `fuzz replay` takes.
 */
#ifndef DRIVERS_VIRTIO_FUZZ_GEN_H
#define DRIVERS_VIRTIO_FUZZ_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fuzz_target {
	FUZZ_VSOCK, /* vsock headers and the vsock device's rings */
	FUZZ_NET, /* virtio-net headers, frames and the TX ring */
	FUZZ_TRANSPORT, /* the virtio-pci transport itself */
	FUZZ_TARGETS,
};

enum fuzz_kind {
	FK_HDR, /* hd: one vsock header on a live connection */
	FK_CREDIT, /* cr: a sequence of credit updates */
	FK_SEQ, /* sq: SEQPACKET pieces with EOM/EOR placements */
	FK_CHAIN, /* dc: a descriptor chain on the vsock TX queue */
	FK_INDIRECT, /* it: an indirect table on the vsock TX queue */
	FK_RING, /* rg: avail index, ring entries, packed wrap bits */
	FK_EVENT, /* ev: event suppression structures */
	FK_KICK, /* kk: notifications with nothing new */
	FK_RXBUF, /* rx: a vsock RX buffer's shape */
	FK_NET_HDR, /* nh: a virtio-net header and frame */
	FK_STATUS, /* st: device status and feature writes */
	FK_QUEUE, /* qs: queue setup fields in any order */
	FK_VECTOR, /* mv: MSI-X vectors */
	FK_NOTIFY, /* nq: notify writes for any queue */
	FK_QRESET, /* qr: queue reset */
	FK_KINDS,
};

struct fuzz_step {
	enum fuzz_kind kind;
	uint64_t word;
};

/* A token is at most 2 + 1 + 16 characters. */
#define FUZZ_TOKEN_MAX 20

/* Step @index of @seed's sequence for @target. */
struct fuzz_step fuzz_step_at(uint64_t seed, enum fuzz_target target, uint64_t index);

/* The target whose steps @kind belongs to (the ring kinds: vsock and net). */
bool fuzz_kind_in(enum fuzz_kind kind, enum fuzz_target target);

const char *fuzz_kind_name(enum fuzz_kind kind);
const char *fuzz_target_name(enum fuzz_target target);
/* FUZZ_TARGETS when @name is none. */
enum fuzz_target fuzz_target_parse(const char *name);

/* "hd.4a0012" into @buf (FUZZ_TOKEN_MAX); returns @buf. */
char *fuzz_token(const struct fuzz_step *step, char *buf);
/* A token back into a step: 0, or -1 for anything else. */
int fuzz_token_parse(const char *token, struct fuzz_step *step);

/*
 * A running digest of the steps run (FNV-1a over each kind and word), so
 * two runs, or a run and its replay, can be seen to be the same.
 */
#define FUZZ_DIGEST_INIT 0xcbf29ce484222325ULL
uint64_t fuzz_digest(uint64_t digest, const struct fuzz_step *step);

/* Bits @shift.. of @word, @bits of them: a step's field. */
static inline unsigned int fuzz_field(uint64_t word, unsigned int shift, unsigned int bits)
{
	return (unsigned int)((word >> shift) & ((1ULL << bits) - 1));
}

#endif
