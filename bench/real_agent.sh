#!/bin/bash
# SPDX-License-Identifier: MIT
# make bench (part): the cage's overhead around a real Claude Code session. The same scripted
# two-turn session (a Bash call, an answer; then a resumed turn) against the scripted model
# server, run inside `proctor run` (the whole run: set-up, both turns, teardown) and bare as uid
# 2000 (setpriv, HOME and TMPDIR in a scratch dir, as tests/agents/smoke_cases.sh does); median
# of BENCH_REAL_RUNS (5) each. Prints the numbers (goal: within 10%); never fails on them.
# Needs root and the CLIs (scripts/agents.sh); holds /tmp/proctor-e2e.lock (uid 2000 is shared).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build}
B=$(cd "$BUILD" && pwd)
N=${BENCH_REAL_RUNS:-5}
. "$HERE/../tests/e2e/real/lib.bash"

echo "== a real Claude Code session: inside proctor run vs bare as uid 2000; median of $N"
if [ "$(id -u)" -ne 0 ]; then
	echo "skipped: needs root"
	exit 0
fi
if ! why=$(real_cli_paths); then
	echo "skipped: $why"
	exit 0
fi
real_cli_paths
T=$(mktemp -d /tmp/proctor-bench-real-XXXXXX)
MODEL_PID=
trap 'real_model_stop; rm -rf "$T"' EXIT
chmod 0755 "$T"
mkdir "$T/ws"
cp "$HERE/../examples/uip-fixture.json" "$T/fx.json"
SESSION='{"turns": [
 {"tool_calls": [{"tool": "bash", "command": "echo hi > x.txt"}]},
 {"text": "turn one done"},
 {"text": "turn two done", "expect": "turn one done"}]}'
CLAUDE_FLAGS=(--output-format stream-json --verbose --permission-mode bypassPermissions
	--setting-sources "")

now_us() { echo $(($(date +%s%N) / 1000)); }

# caged: one proctor run of the session; prints its wall time in microseconds.
caged() {
	real_model anthropic "$SESSION"
	real_task claude-code "make x.txt" '["again"]'
	rm -rf "$T/run"
	local s e
	s=$(now_us)
	"$B/proctor" run "$T/task.json" --out "$T/run" --quiet >/dev/null
	e=$(now_us)
	real_model_stop
	q "r['status'] == 'completed' and len(r['agent']['turns']) == 2" ||
		{ echo "the caged session did not complete" >&2; return 1; }
	echo $((e - s))
}

# as_agent OUT ARGS...: Claude Code as uid 2000 in $T/bare/ws, environment as the descriptor's.
as_agent() {
	local out=$1
	shift
	(cd "$T/bare/ws" && setpriv --reuid 2000 --regid 2000 --clear-groups env -i \
		PATH="$(dirname "$PROCTOR_CLAUDE"):/usr/local/bin:/usr/bin:/bin" HOME="$T/bare/home" \
		TMPDIR="$T/bare/tmp" CLAUDE_CODE_TMPDIR="$T/bare/tmp" \
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
		DISABLE_ERROR_REPORTING=1 ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" \
		ANTHROPIC_API_KEY=sk-dummy CLAUDE_CODE_MAX_RETRIES=0 \
		"$PROCTOR_CLAUDE" "$@" "${CLAUDE_FLAGS[@]}" </dev/null >"$out" 2>/dev/null)
}

# bare: the same session without the cage; prints its wall time in microseconds.
bare() {
	rm -rf "$T/bare"
	mkdir -p "$T/bare/ws" "$T/bare/home" "$T/bare/tmp"
	chown -R 2000:2000 "$T/bare"
	real_model anthropic "$SESSION"
	local s e sid
	s=$(now_us)
	as_agent "$T/bare/out1.jsonl" -p "make x.txt"
	sid=$(python3 -c 'import json,sys
print(next(e["session_id"] for e in map(json.loads, open(sys.argv[1])) if e.get("subtype") == "init"))' \
		"$T/bare/out1.jsonl")
	as_agent "$T/bare/out2.jsonl" -p "again" --resume "$sid"
	e=$(now_us)
	real_model_stop
	grep -q '"result":"turn two done"' "$T/bare/out2.jsonl" ||
		{ echo "the bare session did not complete" >&2; return 1; }
	echo $((e - s))
}

median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

real_lock
caged >/dev/null # warm the page cache with the 384 MiB binary, for both
: >"$T/caged" && : >"$T/bare.t"
for _ in $(seq 1 "$N"); do
	caged >>"$T/caged"
	bare >>"$T/bare.t"
done
mc=$(median <"$T/caged")
mb=$(median <"$T/bare.t")
awk -v c="$mc" -v b="$mb" 'BEGIN { printf "inside proctor run: median %.0f ms; bare as uid 2000: median %.0f ms; overhead %+.1f%% (goal within 10%%)\n", c/1000, b/1000, (c-b)*100/b }'
