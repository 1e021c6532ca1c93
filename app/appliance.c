// SPDX-License-Identifier: MIT
/*
 * The appliance: which drivers, protocols and services this build runs,
 * in the order they depend on each other. The kernel calls app_init()
 * (kernel/app.h) after its own bring-up.
 */
#include "app/app.h"
#include "app/services.h"
#include "drivers/virtio/virtio_pci.h"
#include "drivers/virtio/fuzz.h"
#include "drivers/virtio/vsock_attack.h"
#include "kernel/app.h"
#include "net/net.h"
#include "net/vsock/vsock.h"

void app_init(void)
{
	/*
	 * Drivers register before virtio_pci_init() probes the devices;
	 * commands register in the order `help` lists them.
	 */
	virtio_rng_init();
	rng_cmd_init();
	virtio_vsock_init();
	vsock_poller_init();
	udp_echo_init();
	net_shell_init();
	netsink_init();
	virtio_net_init();
	virtio_pci_init();
	services_init();
	iperf3_init();
	sockperf_init();
	vsock_test_init();
	vsock_cmd_init();
	vsock_attack_init(); /* off unless `attack` or the attack= key */
	fuzz_init(); /* off unless `fuzz` or the fuzz= key */
}
