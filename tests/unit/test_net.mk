test_net_SRCS := net/net.c net/ethernet.c net/arp.c net/ipv4.c net/icmp.c net/udp.c \
	app/pktgen.c app/net_shell.c app/udp_echo.c kernel/config.c kernel/poll.c \
	kernel/stats.c kernel/json_writer.c kernel/shell_json.c app/json.c tests/unit/stub_kernel.c
