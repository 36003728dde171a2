#!/bin/sh
# SPDX-License-Identifier: MIT
# Run each libFuzzer harness (built by `make fuzz` into BUILD/libfuzzer/) for SECONDS over a copy
# of its corpus, and print one line per harness: executions per second, coverage (cov, ft), the
# seconds it ran and its crashes. New inputs and crashers stay in BUILD/fuzz-run/NAME/; the
# committed corpus is never written. Exit non-zero when any harness crashed.
# FUZZ_JOBS harnesses run at once (default 1; CI runs 2, one per core); the lines come out in
# the harnesses' order either way.
# Usage: fuzz.sh BUILD SECONDS [NAME...]   (NAME: e.g. fuzz_shell; default every harness)
set -u
BUILD=${1:?usage: fuzz.sh BUILD SECONDS [NAME...]}
SECONDS_EACH=${2:?usage: fuzz.sh BUILD SECONDS [NAME...]}
shift 2
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
JOBS=${FUZZ_JOBS:-1}

# run_one NAME: fuzz one harness; its report line (and crasher details) go to fuzz-run/NAME/report,
# its status (0 clean, 1 crashed) to fuzz-run/NAME/status.
run_one() {
	name=$1
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
	{
		printf '%-20s %10s %8s %8s %6s %s\n' "$name" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$secs" "$n"
		if [ "$n" -ne 0 ]; then
			echo "$crashers" | sed 's/^/    crasher: /'
			grep -m 1 -E 'ERROR: |runtime error:|SUMMARY' "$work/log" | sed 's/^/    /'
			echo "    minimise: $bin -minimize_crash=1 -runs=100000 CRASHER; replay: $bin CRASHER"
		fi
	} >"$work/report"
	[ "$n" -eq 0 ] && echo 0 >"$work/status" || echo 1 >"$work/status"
}

if [ "${FUZZ_ONE:-}" ]; then
	run_one "$1"
	exit 0
fi
[ $# -gt 0 ] || set -- $(cd "$BUILD/libfuzzer" && ls fuzz_*)
for name in "$@"; do
	[ -x "$BUILD/libfuzzer/$name" ] || { echo "fuzz: no harness $BUILD/libfuzzer/$name" >&2; exit 2; }
	rm -f "$BUILD/fuzz-run/$name/status"
done
printf '%s\n' "$@" | FUZZ_ONE=1 xargs -P "$JOBS" -I{} sh "$0" "$BUILD" "$SECONDS_EACH" {}

failed=0
printf '%-20s %10s %8s %8s %6s %s\n' harness exec/s cov ft secs crashes
for name in "$@"; do
	work=$BUILD/fuzz-run/$name
	if [ -f "$work/report" ] && [ -f "$work/status" ]; then
		cat "$work/report"
		[ "$(cat "$work/status")" = 0 ] || failed=1
	else
		printf '%-20s did not run to the end (see %s/log)\n' "$name" "$work"
		failed=1
	fi
done
exit "$failed"
