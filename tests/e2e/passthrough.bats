#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Passthrough end to end: the real tool runs without a shell, bounded in time and output, with
# a cache, and never delays fixture hits.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	setup_tmp
	write_fixture "$T/uip.json" '{"version":1,"responses":[{"argv":["or","jobs","get","J1"],"stdout":"job J1\n"}],
		"default":{"exit_code":1,"stderr":"unknown command\n"}}'
	mkdir "$T/realbin"
}

teardown() { teardown_tmp; }

real_tool() { # real_tool BODY: the "real" uip, counting its runs
	printf '#!/bin/sh\necho run >>"%s/runs"\n%s\n' "$T" "$1" >"$T/realbin/uip"
	chmod +x "$T/realbin/uip"
}

@test "passthrough: allowlisted prefix runs the real tool; output and exit code are served" {
	real_tool 'echo "real: $*"; echo "warn" >&2; exit 4'
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run bash -c "'$UIP' docsai ask 'how do I' 2>'$T/err'"
	[ "$status" -eq 4 ]
	[ "$output" = "real: docsai ask how do I" ]
	[ "$(cat "$T/err")" = "warn" ]
	run json_get 'd[0]["outcome"], d[0]["exit"]' <"$JOURNAL"
	[ "$output" = "('passthrough', 4)" ]
}

@test "passthrough: a repeated call is served from the cache" {
	real_tool 'echo "answer $*"'
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	"$UIP" docsai ask q1 >/dev/null
	run "$UIP" docsai ask q1
	[ "$output" = "answer docsai ask q1" ]
	[ "$(wc -l <"$T/runs")" -eq 1 ]
	run json_get '[x["outcome"] for x in d]' <"$JOURNAL"
	[ "$output" = "['passthrough', 'cached']" ]
}

@test "passthrough: calls outside the allowlist never reach the real tool" {
	real_tool 'echo leaked'
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai delete everything
	[ "$status" -eq 1 ]
	[ ! -e "$T/runs" ]
}

@test "passthrough: arguments are never interpreted by a shell" {
	real_tool 'printf "%s|" "$@"'
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai ask "; touch $T/pwned" '$(touch x)'
	[ "$output" = "docsai|ask|; touch $T/pwned|\$(touch x)|" ]
	[ ! -e "$T/pwned" ]
}

@test "passthrough: the real tool is found on PATH, skipping the shim itself" {
	real_tool 'echo "from PATH"'
	PATH="$T/bin:$T/realbin:$PATH" start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask'
	run "$UIP" docsai ask x
	[ "$output" = "from PATH" ]
}

@test "passthrough: a slow real tool does not delay fixture hits" {
	real_tool "while [ ! -e '$T/go' ]; do sleep 0.05; done; echo slow done"
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	"$UIP" docsai ask slow >"$T/slow.out" &
	slow=$!
	for _ in $(seq 1 100); do [ -e "$T/runs" ] && break; sleep 0.05; done
	# the passthrough is running and blocked; fixture hits are still answered
	for i in 1 2 3; do
		run "$UIP" or jobs get J1
		[ "$output" = "job J1" ]
	done
	touch "$T/go"
	wait "$slow"
	[ "$(cat "$T/slow.out")" = "slow done" ]
	run json_get '[x["outcome"] for x in d]' <"$JOURNAL"
	[ "$output" = "['exact', 'exact', 'exact', 'passthrough']" ]
}

@test "passthrough: a tool over the time limit is killed and gives 70" {
	real_tool 'sleep 30'
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip" \
		--passthrough-timeout 1
	run "$UIP" docsai ask x
	[ "$status" -eq 70 ]
	echo "$output" | grep -q 'timed out'
	run "$UIP" docsai ask x # failures are not cached
	[ "$(wc -l <"$T/runs")" -eq 2 ]
}

@test "passthrough: output over 512 KiB gives 70" {
	real_tool 'head -c 600000 /dev/zero | tr "\0" x'
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai ask x
	[ "$status" -eq 70 ]
	echo "$output" | grep -q 'output exceeds size limit'
}

@test "passthrough: a tool killed by a signal gives 70" {
	real_tool 'kill -9 $$'
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai ask x
	[ "$status" -eq 70 ]
}

@test "passthrough: a missing real tool gives 69" {
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/absent"
	grep -q 'those calls will get exit 69' "$T/mockd.err"
	run "$UIP" docsai ask x
	[ "$status" -eq 69 ]
	run "$UIP" or jobs get J1
	[ "$output" = "job J1" ]
}

@test "passthrough: invalid UTF-8 from the real tool is replaced, not refused" {
	real_tool 'printf "a\377b\n"'
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai ask x
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'a\357\277\275b')" ]
}

@test "passthrough: a background child holding the pipes does not hang the call" {
	real_tool 'sleep 4321 & echo parent done'
	start_mockd --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip" \
		--passthrough-timeout 30
	run "$UIP" docsai ask x
	[ "$status" -eq 0 ]
	[ "$output" = "parent done" ]
	# SIGKILL was sent to the tool's group before the answer; delivery itself is asynchronous
	for _ in $(seq 1 100); do pgrep -f "^sleep 4321$" >/dev/null || break; sleep 0.05; done
	! pgrep -f "^sleep 4321$" >/dev/null
}
