/* SPDX-License-Identifier: MIT */
/*
 * The virtio-pci transport (drivers/virtio/virtio_pci.h) for a driver's
 * unit test, one device at a time: each queue set up is a ring in host
 * memory, in the layout and size the test chose, with a device-side
 * model (ring_model.c) reading it. A queue set up with a poll context
 * gets fake_pci_vector as its MSI-X vector (-1: none, polled as with
 * irq=poll); its interrupt (fake_pci_complete, when the model says the
 * device notifies) schedules that context, as the transport's raise
 * entry does. The config space is fake_pci_config's bytes.
 */
#ifndef TESTS_UNIT_FAKE_VIRTIO_PCI_H
#define TESTS_UNIT_FAKE_VIRTIO_PCI_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/virtio/virtio_pci.h"
#include "ring_model.h"

#define FAKE_PCI_QUEUES 5

/* The driver registered last (virtio_register_driver). */
extern const struct virtio_driver *fake_pci_driver;
/* What the next queues are: layout, size, vector; the index whose setup fails (-1: none). */
extern enum virtq_layout fake_pci_layout;
extern uint16_t fake_pci_qsize;
extern int fake_pci_vector;
extern int fake_pci_fail_index;
/* Each queue set up, its model, its notifications and where its vector goes. */
extern struct virtq *fake_pci_queues[FAKE_PCI_QUEUES];
extern struct ring_model fake_pci_models[FAKE_PCI_QUEUES];
extern unsigned long fake_pci_kicks[FAKE_PCI_QUEUES];
extern unsigned int fake_pci_irq_cpu[FAKE_PCI_QUEUES];
/* virtio_config_read's bytes; virtio_reprobe_all's calls. */
extern uint8_t fake_pci_config[64];
extern unsigned int fake_pci_quiesced;
extern unsigned int fake_pci_reprobes;

/* Forget the queues of the last device (after the test freed them). */
void fake_pci_reset(void);
/* The queues' models checked (no driver error) and freed, with their rings. */
void fake_pci_destroy_queues(void);

/*
 * The device completes held buffer @i of queue @q with @len bytes; when
 * the model says it notifies and the queue has a vector, the interrupt
 * comes (fake_pci_interrupt). Returns whether the device notified.
 */
bool fake_pci_complete(unsigned int q, unsigned int i, uint32_t len);
/* Queue @q's interrupt: the ring counts it, its context is scheduled. */
void fake_pci_interrupt(unsigned int q);

#endif
