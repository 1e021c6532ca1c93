/* SPDX-License-Identifier: MIT */
/*
 * Memory barriers between the driver and a device (or, in unit tests, a
 * device model on the same CPU). x86 is TSO: stores are not reordered with
 * stores nor loads with loads, so the read and write barriers only have to
 * stop the compiler; a full barrier orders a store before a later load
 * (needed around EVENT_IDX checks, virtio 1.2 2.7.7.2 / 2.8.21.3). The
 * same holds between two CPUs: barrier() orders the stores one CPU makes
 * for another, and the loads of the reader.
 */
#ifndef KERNEL_BARRIER_H
#define KERNEL_BARRIER_H

#define barrier() __asm__ __volatile__("" ::: "memory")
#define virt_rmb() barrier()
#define virt_wmb() barrier()
#define virt_mb() __asm__ __volatile__("mfence" ::: "memory")

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#endif
