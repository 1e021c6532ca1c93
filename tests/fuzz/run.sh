#!/bin/sh
# Build the libFuzzer targets (`make fuzz-build`: clang, ASan + UBSan, rules
# and sources in tests/fuzz/fuzz.mk) and run each for a bounded time.
# Usage: tests/fuzz/run.sh [SECONDS_PER_TARGET [TARGET...]]  (default 30, all)
# Corpora stay in build/fuzz/corpus-NAME between runs. Needs: clang.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-30}
[ $# -gt 0 ] && shift
targets=${*:-desc_chain vsock_hdr guest_vsock ring json iperf3}
out=build/fuzz
make -s fuzz-build

status=0
# back end: descriptor chains and vsock headers; guest: the socket layer
# and the virtqueues against a hostile device; the iperf3 server and its JSON
for t in $targets; do
	mkdir -p "$out/corpus-$t"
	echo "== fuzz_$t for ${secs}s"
	# tests/fuzz/seeds-NAME, where present: inputs that reach deep states
	seeds=""
	[ -d "tests/fuzz/seeds-$t" ] && seeds="tests/fuzz/seeds-$t"
	if ! "$out/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$out/crash-$t-" "$out/corpus-$t" $seeds \
		>"$out/fuzz_$t.log" 2>&1; then
		tail -40 "$out/fuzz_$t.log"
		status=1
	else
		grep -E "stat::number_of_executed_units|Done" "$out/fuzz_$t.log" | tail -2
	fi
done
exit $status
