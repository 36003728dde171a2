#!/bin/sh
# SPDX-License-Identifier: MIT
# Run each libFuzzer harness (built by `make fuzz` into BUILD/libfuzzer/) for SECONDS over a copy
# of its corpus, and print one line per harness: executions per second, coverage (cov, ft), the
# seconds it ran and its crashes. New inputs and crashers stay in BUILD/fuzz-run/NAME/; the
# committed corpus is never written. Exit non-zero when any harness crashed.
# Usage: fuzz.sh BUILD SECONDS [NAME...]   (NAME: e.g. fuzz_shell; default every harness)
set -u
BUILD=${1:?usage: fuzz.sh BUILD SECONDS [NAME...]}
SECONDS_EACH=${2:?usage: fuzz.sh BUILD SECONDS [NAME...]}
shift 2
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
[ $# -gt 0 ] || set -- $(cd "$BUILD/libfuzzer" && ls fuzz_*)

failed=0
printf '%-20s %10s %8s %8s %6s %s\n' harness exec/s cov ft secs crashes
for name in "$@"; do
	bin=$BUILD/libfuzzer/$name
	work=$BUILD/fuzz-run/$name
	rm -rf "$work"
	mkdir -p "$work/corpus"
	cp tests/fuzz/corpus/"${name#fuzz_}"/* "$work/corpus/"
	start=$(date +%s)
	# -timeout: one input taking 10 s is a hang; leaks count as crashes (ASan's default).
	"$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
	covft=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$work/log" | tail -n 1)
	cov=$(echo "$covft" | awk '{print $2}')
	ft=$(echo "$covft" | awk '{print $4}')
	crashers=$(ls "$work" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | sed "s|^|$work/|")
	n=$(echo "$crashers" | grep -c . | tr -d ' ')
	if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
		n=1 crashers="(exit $rc, see $work/log)"
	fi
	printf '%-20s %10s %8s %8s %6s %s\n' "$name" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$secs" "$n"
	if [ "$n" -ne 0 ]; then
		failed=1
		echo "$crashers" | sed 's/^/    crasher: /'
		grep -m 1 -E 'ERROR: |runtime error:|SUMMARY' "$work/log" | sed 's/^/    /'
		echo "    minimise: $bin -minimize_crash=1 -runs=100000 CRASHER; replay: $bin CRASHER"
	fi
done
exit "$failed"
