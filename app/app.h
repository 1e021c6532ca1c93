/* SPDX-License-Identifier: MIT */
/* The appliance's parts, each started by app_init() (appliance.c). */
#ifndef APP_APP_H
#define APP_APP_H

#include <stdint.h>

#include "kernel/config.h"

/* The `net`, `ping` and `pktgen` commands (net_shell.c, pktgen.c). */
void net_shell_init(void);
/* The `vsock` command and the socket counters in `stats` (vsock_cmd.c). */
void vsock_cmd_init(void);
/* The `rng` command (rng_cmd.c). */
void rng_cmd_init(void);
/* The `netsink` RX benchmark command (netsink.c). */
void netsink_init(void);
/* The UDP echo service on udp_echo_port (udp_echo.c). */
void udp_echo_init(void);
/* Datagrams the service sent back: in all, from CPU @cpu's loop; to zero. */
uint64_t udp_echo_count(void);
uint64_t udp_echo_count_on(unsigned int cpu);
void udp_echo_reset(void);
extern struct config_key cfg_udp_echo_port;
/* The iperf3 server on iperf3_port (iperf3.c). */
void iperf3_init(void);
/* sockperf's TCP server protocol on sockperf_port (sockperf.c). */
void sockperf_init(void);
/* The kernel's vsock_test, ringside's half: the `vsock-test` peer (vsock_test.c). */
void vsock_test_init(void);

#endif
