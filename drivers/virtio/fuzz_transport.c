// SPDX-License-Identifier: MIT
/*
 * The fuzzer's transport steps: the virtio-pci common configuration
 * (virtio 1.2 4.1.4.3) and notifications (4.1.5.2) written out of the
 * order of 3.1.1 while the driver's queues carry traffic. Bit 63 of a
 * word picks the device (0: vsock, 1: virtio-net; the other when that
 * one is absent). After a transport batch every device a step touched is
 * reset and probed again (fuzz_transport_restart): the steps leave the
 * driver's picture of the device wrong on purpose.
 *
 *   st  up to four status or feature writes (bits 4-19, a nibble each):
 *       reset mid-I/O, DRIVER_OK before FEATURES_OK, FEATURES_OK with
 *       bits never offered or none, FAILED, NEEDS_RESET (the device's
 *       bit), a random status, feature selects past 1
 *   qs  a queue (bits 0-2: rx, tx, the third, one past the device's,
 *       0xffff) and up to three field writes (bits 3-14): size 0, odd or
 *       huge, the areas moved while enabled, enabled twice or disabled,
 *       a vector out of range, queue_reset
 *   mv  a vector (the config's or a queue's) changed under traffic,
 *       to none, out of the table, another queue's; repeated
 *   nq  notifications for queues that do not exist, with 16 and 32-bit
 *       writes, anywhere in the notify window
 *   qr  queue reset (4.1.4.3.2) where the device offers it (the device
 *       is restarted once with VIRTIO_F_RING_RESET negotiated), else the
 *       field written anyway when the structure has it
 *
 * The device is never handed guest memory to write but scratch: before
 * a batch's first step touches a device, after a reset, and whenever a
 * step moves a queue, its queues' descriptor and driver areas point at
 * zeroes (nothing available: nothing read, nothing written back) and
 * their device areas at scratch. A device started again on the driver's
 * own rings would begin at old entries, whose buffers are long freed.
 */
#include <errno.h>
#include <string.h>

#include "drivers/virtio/fuzz.h"
#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/virtio_pci_regs.h"
#include "kernel/dma.h"

#define NO_VECTOR 0xffff
#define ADDR_FAR (1ULL << 46)

/* Devices a step of this batch touched (bit per virtio_device_get index). */
static uint32_t touched;
/* Of those, the ones whose queues no longer name the driver's rings. */
static uint32_t detached;

static void detach(struct virtio_device *v);

static uint32_t device_bit(const struct virtio_device *v)
{
	for (unsigned int i = 0; i < virtio_device_count(); i++)
		if (virtio_device_get(i) == v)
			return 1u << i;
	return 0;
}

static struct virtio_device *pick_device(uint64_t w)
{
	struct virtio_device *found[2] = { NULL, NULL };
	unsigned int want = (unsigned int)(w >> 63);

	for (unsigned int i = 0; i < virtio_device_count(); i++) {
		struct virtio_device *v = virtio_device_get(i);

		if (!v->driver || !v->common)
			continue;
		if (v->type == VIRTIO_ID_VSOCK && !found[0])
			found[0] = v;
		else if (v->type == VIRTIO_ID_NET && !found[1])
			found[1] = v;
	}
	if (!found[want])
		want = !want;
	if (!found[want])
		return NULL;
	touched |= device_bit(found[want]);
	detach(found[want]);
	return found[want];
}

static void wr(struct virtio_device *v, unsigned int off, unsigned int width, uint32_t val)
{
	virtio_common_write(v, off, width, val);
}

static uint32_t rd(struct virtio_device *v, unsigned int off, unsigned int width)
{
	return virtio_common_read(v, off, width);
}

static void wr64(struct virtio_device *v, unsigned int off, uint64_t val)
{
	wr(v, off, 4, (uint32_t)val);
	wr(v, off + 4, 4, (uint32_t)(val >> 32));
}

/* Queue @q's areas where the device can do no harm (the header's rule). */
static void areas_harmless(struct virtio_device *v, uint16_t q, unsigned int skew)
{
	const struct fuzz_mem *m = fuzz_mem();

	wr(v, COMMON_Q_SELECT, 2, q);
	wr64(v, COMMON_Q_DESC, m->zeros_pa + (skew & 1));
	wr64(v, COMMON_Q_DRIVER, m->zeros_pa);
	wr64(v, COMMON_Q_DEVICE, m->scratch_pa + (skew & 2));
}

/*
 * Before a step's first write: every queue of @v taken off the driver's
 * rings and set up again on harmless areas (4.1.4.3: the areas a device
 * takes as queue_enable is written). A step may make the device start
 * its rings again without a reset (features changed under DRIVER_OK, a
 * queue enabled again); on the driver's rings it would begin at entries
 * whose buffers the driver has long taken back and freed, RX buffers
 * among them, and write there. The batch's restart gives the driver new
 * rings.
 */
static void detach(struct virtio_device *v)
{
	if (detached & device_bit(v))
		return;
	detached |= device_bit(v);
	for (uint16_t q = 0; q < v->num_queues; q++) {
		areas_harmless(v, q, 0);
		wr(v, COMMON_Q_ENABLE, 2, 1);
	}
}

/* A reset forgets the driver's rings: nothing may point at them again. */
static void after_reset(struct virtio_device *v)
{
	for (uint16_t q = 0; q < v->num_queues; q++)
		areas_harmless(v, q, 0);
}

static void status_write(struct virtio_device *v, uint8_t status)
{
	wr(v, COMMON_STATUS, 1, status);
	if (!status)
		after_reset(v);
}

static uint64_t device_features(struct virtio_device *v)
{
	uint64_t lo;

	wr(v, COMMON_DFSELECT, 4, 0);
	lo = rd(v, COMMON_DF, 4);
	wr(v, COMMON_DFSELECT, 4, 1);
	return lo | (uint64_t)rd(v, COMMON_DF, 4) << 32;
}

static void driver_features(struct virtio_device *v, uint64_t f)
{
	wr(v, COMMON_GFSELECT, 4, 0);
	wr(v, COMMON_GF, 4, (uint32_t)f);
	wr(v, COMMON_GFSELECT, 4, 1);
	wr(v, COMMON_GF, 4, (uint32_t)(f >> 32));
}

static int st_step(struct virtio_device *v, uint64_t w)
{
	uint8_t status = (uint8_t)rd(v, COMMON_STATUS, 1);

	for (unsigned int k = 0; k < 4; k++) {
		switch (fuzz_field(w, 4 + 4 * k, 4)) {
		case 0:
			return 0;
		case 1:
			status = 0; /* 4.1.4.3.2: a reset, at any time */
			break;
		case 2:
			status |= STATUS_ACKNOWLEDGE;
			break;
		case 3:
			status |= STATUS_DRIVER;
			break;
		case 4:
			status |= STATUS_FEATURES_OK;
			break;
		case 5:
			status |= STATUS_DRIVER_OK;
			break;
		case 6:
			status = STATUS_FAILED;
			break;
		case 7:
			status |= STATUS_NEEDS_RESET;
			break;
		case 8:
			driver_features(v, device_features(v));
			continue;
		case 9:
			driver_features(v, ~device_features(v) | v->features);
			continue;
		case 10:
			driver_features(v, 0);
			continue;
		case 11:
			status = (uint8_t)fuzz_field(w, 32, 8);
			break;
		case 12:
			status = (uint8_t)rd(v, COMMON_STATUS, 1);
			continue;
		case 13:
			status = STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK |
				 STATUS_DRIVER_OK;
			break;
		case 14:
			wr(v, COMMON_DFSELECT, 4, fuzz_field(w, 40, 8));
			(void)rd(v, COMMON_DF, 4);
			continue;
		case 15:
			wr(v, COMMON_GFSELECT, 4, 2 + fuzz_field(w, 40, 8));
			wr(v, COMMON_GF, 4, (uint32_t)fuzz_field(w, 48, 16));
			continue;
		}
		status_write(v, status);
	}
	return 0;
}

static uint16_t queue_pick(struct virtio_device *v, unsigned int which)
{
	switch (which) {
	case 0:
	case 1:
	case 2:
		return (uint16_t)(which % (v->num_queues ? v->num_queues : 1));
	case 3:
		return v->num_queues;
	case 4:
		return 0xffff;
	default:
		return 1;
	}
}

static int qs_step(struct virtio_device *v, uint64_t w)
{
	uint16_t q = queue_pick(v, fuzz_field(w, 0, 3));
	uint16_t size;

	wr(v, COMMON_Q_SELECT, 2, q);
	size = (uint16_t)rd(v, COMMON_Q_SIZE, 2);
	for (unsigned int k = 0; k < 3; k++) {
		switch (fuzz_field(w, 3 + 4 * k, 4)) {
		case 1:
			wr(v, COMMON_Q_SIZE, 2, 0);
			break;
		case 2:
			wr(v, COMMON_Q_SIZE, 2, size > 1 ? size - 1 : 3);
			break;
		case 3:
			wr(v, COMMON_Q_SIZE, 2, fuzz_field(w, 40, 1) ? 0xffff : 2u * size);
			break;
		case 4:
			areas_harmless(v, q, 0);
			break;
		case 5:
			wr64(v, COMMON_Q_DESC, ADDR_FAR);
			break;
		case 6:
			areas_harmless(v, q, 3); /* misaligned */
			break;
		case 7:
			wr64(v, COMMON_Q_DEVICE, ADDR_FAR);
			break;
		case 8:
			wr(v, COMMON_Q_ENABLE, 2, 1);
			break;
		case 9:
			wr(v, COMMON_Q_ENABLE, 2, 0); /* 4.1.4.3.2: the driver never writes 0 */
			break;
		case 10:
			wr(v, COMMON_Q_MSIX, 2, NO_VECTOR);
			break;
		case 11:
			wr(v, COMMON_Q_MSIX, 2, v->pci->msix_size + fuzz_field(w, 41, 4));
			break;
		case 12:
			wr(v, COMMON_Q_NOFF, 2, 0x5a5a); /* read-only for the driver */
			break;
		case 13:
			areas_harmless(v, q, 0);
			wr(v, COMMON_Q_SIZE, 2, 8);
			wr(v, COMMON_Q_ENABLE, 2, 1);
			break;
		case 14:
			wr(v, COMMON_Q_RESET, 2, 1);
			break;
		case 15:
			(void)rd(v, COMMON_Q_ENABLE, 2);
			break;
		}
	}
	return 0;
}

static int mv_step(struct virtio_device *v, uint64_t w)
{
	unsigned int which = fuzz_field(w, 0, 2), rounds = 1 + fuzz_field(w, 19, 3);
	uint16_t q = which == 3 ?
			     (uint16_t)(fuzz_field(w, 2, 3) % (v->num_queues ? v->num_queues : 1)) :
			     (uint16_t)(which ? which - 1 : 0);
	unsigned int off = which ? COMMON_Q_MSIX : COMMON_MSIX;
	uint16_t own, value;

	if (which)
		wr(v, COMMON_Q_SELECT, 2, q);
	own = (uint16_t)rd(v, off, 2);
	switch (fuzz_field(w, 5, 3)) {
	case 0:
		value = NO_VECTOR;
		break;
	case 1:
		value = v->pci->msix_size;
		break;
	case 2:
		value = 0xfffe;
		break;
	case 3:
		value = (uint16_t)((own + 1) % (v->pci->msix_size ? v->pci->msix_size : 1));
		break;
	case 5:
		value = 0;
		break;
	case 6:
		value = (uint16_t)fuzz_field(w, 8, 11);
		break;
	default:
		value = own;
		break;
	}
	/* 4.1.5.1.2: a vector the device cannot take reads back as NO_VECTOR */
	for (unsigned int i = 0; i < rounds; i++) {
		wr(v, off, 2, value);
		(void)rd(v, off, 2);
		if (i + 1 < rounds)
			wr(v, off, 2, own);
	}
	return 0;
}

static int nq_step(struct virtio_device *v, uint64_t w)
{
	static const unsigned int counts[] = { 1, 16, 256, 1024 };
	uint32_t value, span = v->notify_len, off;

	if (span < 4)
		return -EOPNOTSUPP;
	switch (fuzz_field(w, 0, 3)) {
	case 0:
		value = v->num_queues;
		break;
	case 1:
		value = 0xffff;
		break;
	case 2:
		value = 0xffffffffu;
		break;
	case 3:
		value = (uint32_t)fuzz_field(w, 32, 32);
		break;
	default:
		value = fuzz_field(w, 8, 3);
		break;
	}
	switch (fuzz_field(w, 3, 2)) {
	case 0:
		off = 0;
		break;
	case 1:
		off = (span - 2) & ~1u; /* the window's last halfword */
		break;
	default:
		off = (uint32_t)(fuzz_field(w, 12, 16) % (span - 3)) & ~3u;
		break;
	}
	for (unsigned int i = 0; i < counts[fuzz_field(w, 5, 2)]; i++) {
		if (fuzz_field(w, 7, 1))
			*(volatile uint32_t *)(v->notify_base + (off & ~3u)) = value;
		else
			*(volatile uint16_t *)(v->notify_base + off) = (uint16_t)value;
	}
	return 0;
}

static int qr_step(struct virtio_device *v, uint64_t w)
{
	uint16_t q = queue_pick(v, fuzz_field(w, 0, 3));

	if (v->common_len < COMMON_LEN_RESET)
		return -EOPNOTSUPP;
	if ((v->offered & VIRTIO_BIT(VIRTIO_F_RING_RESET)) &&
	    !(v->features & VIRTIO_BIT(VIRTIO_F_RING_RESET))) {
		int ret = virtio_restart(v, VIRTIO_BIT(VIRTIO_F_RING_RESET));

		if (ret)
			return ret;
		detached &= ~device_bit(v); /* the driver's new rings: off them again */
		detach(v);
	}
	wr(v, COMMON_Q_SELECT, 2, q);
	wr(v, COMMON_Q_RESET, 2, 1);
	(void)rd(v, COMMON_Q_RESET, 2);
	if (fuzz_field(w, 3, 1)) {
		/* 4.1.4.3.2: the queue may be enabled again, set up anew */
		areas_harmless(v, q, 0);
		wr(v, COMMON_Q_ENABLE, 2, 1);
	}
	return 0;
}

int fuzz_transport_step(const struct fuzz_step *s, struct fuzz_outcome *o)
{
	struct virtio_device *v = pick_device(s->word);

	if (!v)
		return -ENODEV;
	o->well_formed = false;
	switch (s->kind) {
	case FK_STATUS:
		return st_step(v, s->word);
	case FK_QUEUE:
		return qs_step(v, s->word);
	case FK_VECTOR:
		return mv_step(v, s->word);
	case FK_NOTIFY:
		return nq_step(v, s->word);
	case FK_QRESET:
		return qr_step(v, s->word);
	default:
		return -EOPNOTSUPP;
	}
}

int fuzz_transport_restart(void)
{
	int done = 0, ret;

	for (unsigned int i = 0; i < virtio_device_count(); i++) {
		if (!(touched & (1u << i)))
			continue;
		ret = virtio_restart(virtio_device_get(i), 0);
		if (ret) {
			touched = detached = 0;
			return ret;
		}
		done++;
	}
	touched = detached = 0;
	return done;
}
