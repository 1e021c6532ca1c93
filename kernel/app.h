/* SPDX-License-Identifier: MIT */
/*
 * The upper layer's entry point. kernel/ is the base and names no driver,
 * protocol or service; the appliance (app/appliance.c) implements this
 * declaration and kmain calls it once the base is up. A plain function,
 * not initcall linker sections: the bring-up order matters (drivers
 * register before PCI probing binds them, services after), and one
 * function shows that order in one place.
 */
#ifndef KERNEL_APP_H
#define KERNEL_APP_H

/* Start every driver, protocol and service; interrupts are still off. */
void app_init(void);

#endif
