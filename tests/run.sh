#!/bin/sh
# SPDX-License-Identifier: MIT
# Run every suite (cmocka unit tests, fuzz corpus replays, the bats lint, bats end-to-end tests)
# and end with one line: "N passed, N failed, N skipped". Exit non-zero on any failure.
set -u
BUILD=${BUILD:-build}
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
pass=0 fail=0 skip=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# Tally TAP lines from $out; a suite that crashed or fell short of its plan counts as failed.
# Each suite's line ends with the seconds it took (since the previous tally), so a slow CI run
# shows where its time went.
last=$(date +%s)
tally() {
	suite=$1 rc=$2
	# A SKIP directive is a skip on either kind of line: cmocka writes "not ok N # SKIP".
	p=$(grep -c '^ok ' "$out" | tr -d ' ')
	s=$(grep -ci '^ok .*# skip' "$out" | tr -d ' ')
	ns=$(grep -ci '^not ok .*# skip' "$out" | tr -d ' ')
	f=$(grep -c '^not ok ' "$out" | tr -d ' ')
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$out" | head -n 1)
	p=$((p - s)) f=$((f - ns)) s=$((s + ns))
	if [ -n "$plan" ] && [ $((p + s + f)) -lt "$plan" ]; then
		f=$((f + plan - p - s - f))
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	if [ "$f" -ne 0 ]; then
		echo "--- $suite: $f failed"
		grep -v '^ok ' "$out" | head -n 60
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	now=$(date +%s)
	printf '%-28s %4d passed %3d failed %3d skipped %5ds\n' "$suite" "$p" "$f" "$s" $((now - last))
	last=$now
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	CMOCKA_MESSAGE_OUTPUT=TAP "$t" >"$out" 2>&1
	tally "unit/$(basename "$t")" $?
done

for f in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	corpus=tests/fuzz/corpus/${name#fuzz_}
	"$f" "$corpus" >"$out" 2>&1
	tally "fuzz/$name" $?
done

# A bats line `! cmd` that set -e ignores asserts nothing: the lint fails on one.
sh scripts/lint-bats.sh --tap >"$out" 2>&1
tally "lint/bats" $?

if command -v bats >/dev/null 2>&1; then
	for b in tests/e2e/*.bats; do
		PROCTOR_BUILD="$TOP/$BUILD" bats --tap "$b" >"$out" 2>&1
		tally "e2e/$(basename "$b" .bats)" $?
	done
else
	echo "bats not found: e2e suites not run (scripts/deps.sh installs it)"
	fail=$((fail + 1))
fi

# The scripted model servers' own tests, then the real agent CLIs bare (skipped with a reason
# unless scripts/agents.sh installed them and we are root).
python3 tests/agents/test_models.py --tap >"$out" 2>&1
tally "agents/test_models" $?
tests/agents/smoke.sh --tap >"$out" 2>&1
tally "agents/smoke" $?

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
