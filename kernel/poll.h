/* SPDX-License-Identifier: MIT */
/*
 * One pass of the poll loop without the shell: what a long-running shell
 * command (a guest-initiated benchmark) calls while it waits.
 */
#ifndef KERNEL_POLL_H
#define KERNEL_POLL_H

void poll_once(void);

#endif
