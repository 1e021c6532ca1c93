/* SPDX-License-Identifier: MIT */
/*
 * The control socket (--control PATH, control.c): the counters, and
 * stopping fault injection, for programs; one request line, one JSON line.
 */
#ifndef VV_CONTROL_H
#define VV_CONTROL_H

#include "dev.h"

void control_accept(struct vsock_dev *d); /* the listener is readable */
void control_event(struct vsock_dev *d, struct ep_src *src); /* a client's socket */

#endif
