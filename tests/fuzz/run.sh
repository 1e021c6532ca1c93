#!/bin/sh
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for a
# bounded time. Usage: tests/fuzz/run.sh [SECONDS_PER_TARGET]  (default 30)
# Corpora stay in build/fuzz/corpus-NAME between runs. Needs: clang.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-30}
out=build/fuzz
mkdir -p "$out"
vv=host/vhost-vsock
common="host/vring/vring.c host/vring/vring_split.c host/vring/vring_packed.c host/vring/iov.c host/vring/guest_mem.c"
flags="-std=gnu11 -g -O1 -I. -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Wall -Wextra -Werror -Wno-unused-parameter"

status=0
# back end: descriptor chains and vsock headers; guest: the socket layer
# and the virtqueues against a hostile device
for t in desc_chain vsock_hdr guest_vsock ring; do
	srcs="$common"
	[ "$t" = vsock_hdr ] && srcs="$common $vv/vsock_hdr.c"
	[ "$t" = guest_vsock ] && srcs="net/vsock/socket.c net/vsock/packet.c kernel/config.c"
	[ "$t" = ring ] && srcs="drivers/virtio/virtqueue.c drivers/virtio/ring_split.c drivers/virtio/ring_packed.c"
	# shellcheck disable=SC2086
	clang $flags -o "$out/fuzz_$t" "tests/fuzz/fuzz_$t.c" $srcs
	mkdir -p "$out/corpus-$t"
	echo "== fuzz_$t for ${secs}s"
	if ! "$out/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$out/crash-$t-" "$out/corpus-$t" \
		>"$out/fuzz_$t.log" 2>&1; then
		tail -40 "$out/fuzz_$t.log"
		status=1
	else
		grep -E "stat::number_of_executed_units|Done" "$out/fuzz_$t.log" | tail -2
	fi
done
exit $status
