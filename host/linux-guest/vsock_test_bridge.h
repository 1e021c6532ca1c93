/* SPDX-License-Identifier: MIT */
/* The `vsocktest` command of ringside-guest-server (vsock_test_bridge.c). */
#ifndef HOST_LINUX_GUEST_VSOCK_TEST_BRIDGE_H
#define HOST_LINUX_GUEST_VSOCK_TEST_BRIDGE_H

/* argv: server|client VPORT [vsock_test's own arguments]. */
void do_vsocktest(int argc, char **argv);

#endif
