#!/bin/sh
# Build the libFuzzer targets (`make fuzz-build`: clang, ASan + UBSan, rules
# and sources in tests/fuzz/fuzz.mk) and run each for a bounded time, then
# print a table of executions per target (libFuzzer's final stats).
# Usage: tests/fuzz/run.sh [SECONDS] [TARGET[=SECONDS]...]
#   SECONDS per target (default 30); all targets unless named; NAME=S gives
#   one target its own duration: tests/fuzz/run.sh 20 vhost_user=600 ring,
#   or tests/fuzz/run.sh guest_vsock=60 iperf3
# Corpora stay in build/fuzz/corpus-NAME between runs. Needs: clang.
set -eu
cd "$(dirname "$0")/../.."
secs=30
case ${1:-} in
'') ;;
*[!0-9]*)
	# a target first: every named target runs for the default or its =S
	case $1 in
	*[!a-z0-9_=]* | =*)
		echo "run.sh: '$1' is neither seconds nor a target (NAME or NAME=SECONDS)" >&2
		exit 2
		;;
	esac
	;;
*)
	secs=$1
	shift
	;;
esac
targets=${*:-desc_chain vsock_hdr guest_vsock ring json iperf3 vhost_user madt}
out=build/fuzz
make -s fuzz-build

# the value of libFuzzer's final stat $1 in log $2 ("-" if absent)
final_stat() {
	v=$(sed -n "s/^stat::$1: *//p" "$2" | tail -1)
	echo "${v:--}"
}

status=0
table=""
# back end: descriptor chains, vsock headers and the vhost-user protocol;
# guest: the socket layer and the virtqueues against a hostile device; the
# iperf3 server and its JSON
for spec in $targets; do
	t=${spec%%=*}
	s=$secs
	[ "$t" != "$spec" ] && s=${spec#*=}
	case $s in
	'' | *[!0-9]*)
		echo "run.sh: '$spec': want NAME=SECONDS" >&2
		exit 2
		;;
	esac
	if [ ! -x "$out/fuzz_$t" ]; then
		echo "run.sh: no target fuzz_$t (see tests/fuzz/fuzz.mk)" >&2
		exit 2
	fi
	mkdir -p "$out/corpus-$t"
	echo "== fuzz_$t for ${s}s"
	# tests/fuzz/seeds-NAME, where present: inputs that reach deep states
	# and every input that once found a bug (replayed first, every run)
	seeds=""
	[ -d "tests/fuzz/seeds-$t" ] && seeds="tests/fuzz/seeds-$t"
	log="$out/fuzz_$t.log"
	result=ok
	if ! "$out/fuzz_$t" -max_total_time="$s" -print_final_stats=1 \
		-artifact_prefix="$out/crash-$t-" "$out/corpus-$t" $seeds \
		>"$log" 2>&1; then
		grep -v '^ringside-vhost-vsock: ' "$log" | tail -40
		status=1
		result=FAILED
	fi
	table="$table$(printf '%-12s %6s %12s %9s %6s %s' "$t" "$s" \
		"$(final_stat number_of_executed_units "$log")" \
		"$(final_stat average_exec_per_sec "$log")" \
		"$(final_stat new_units_added "$log")" "$result")
"
done
printf '\n%-12s %6s %12s %9s %6s %s\n' target seconds executions exec/s new result
printf '%s' "$table"
exit $status
