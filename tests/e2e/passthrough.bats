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
	mkdir "$T/realbin" "$T/rw"
}

teardown() { teardown_tmp; }

# The real tool runs confined: it may write only $T/rw (given with --passthrough-write).
real_tool() { # real_tool BODY: the "real" uip, counting its runs
	printf '#!/bin/sh\necho run >>"%s/rw/runs"\n%s\n' "$T" "$1" >"$T/realbin/uip"
	chmod +x "$T/realbin/uip"
}

@test "passthrough: allowlisted prefix runs the real tool; output and exit code are served" {
	real_tool 'echo "real: $*"; echo "warn" >&2; exit 4'
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run bash -c "'$UIP' docsai ask 'how do I' 2>'$T/err'"
	[ "$status" -eq 4 ]
	[ "$output" = "real: docsai ask how do I" ]
	[ "$(cat "$T/err")" = "warn" ]
	run json_get 'd[0]["outcome"], d[0]["exit"]' <"$JOURNAL"
	[ "$output" = "('passthrough', 4)" ]
}

@test "passthrough: a repeated call is served from the cache" {
	real_tool 'echo "answer $*"'
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	"$UIP" docsai ask q1 >/dev/null
	run "$UIP" docsai ask q1
	[ "$output" = "answer docsai ask q1" ]
	[ "$(wc -l <"$T/rw/runs")" -eq 1 ]
	run json_get '[x["outcome"] for x in d]' <"$JOURNAL"
	[ "$output" = "['passthrough', 'cached']" ]
}

@test "passthrough: calls outside the allowlist never reach the real tool" {
	real_tool 'echo leaked'
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai delete everything
	[ "$status" -eq 1 ]
	[ ! -e "$T/rw/runs" ]
}

@test "passthrough: arguments are never interpreted by a shell" {
	real_tool 'printf "%s|" "$@"'
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai ask "; touch $T/pwned" '$(touch x)'
	[ "$output" = "docsai|ask|; touch $T/pwned|\$(touch x)|" ]
	[ ! -e "$T/pwned" ]
}

@test "passthrough: the real tool is found on PATH, skipping the shim itself" {
	real_tool 'echo "from PATH"'
	PATH="$T/bin:$T/realbin:$PATH" start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask'
	run "$UIP" docsai ask x
	[ "$output" = "from PATH" ]
}

@test "passthrough: a slow real tool does not delay fixture hits" {
	real_tool "while [ ! -e '$T/rw/go' ]; do sleep 0.05; done; echo slow done"
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	"$UIP" docsai ask slow >"$T/slow.out" &
	slow=$!
	for _ in $(seq 1 100); do [ -e "$T/rw/runs" ] && break; sleep 0.05; done
	# the passthrough is running and blocked; fixture hits are still answered
	for i in 1 2 3; do
		run "$UIP" or jobs get J1
		[ "$output" = "job J1" ]
	done
	touch "$T/rw/go"
	wait "$slow"
	[ "$(cat "$T/slow.out")" = "slow done" ]
	run json_get '[x["outcome"] for x in d]' <"$JOURNAL"
	[ "$output" = "['exact', 'exact', 'exact', 'passthrough']" ]
}

@test "passthrough: a tool over the time limit is killed and gives 70" {
	s=29.$$ # a name no other run uses: a stray from another tree must not fail this test
	real_tool "sleep $s"
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip" \
		--passthrough-timeout 1
	# Killed at its deadline: the answer comes in about a second, not when the tool would end.
	run timeout 10 "$UIP" docsai ask x
	[ "$status" -eq 70 ]
	echo "$output" | grep -q 'timed out'
	for _ in $(seq 1 100); do pgrep -f "^sleep $s\$" >/dev/null || break; sleep 0.05; done
	run ! pgrep -f "^sleep $s\$"
	run "$UIP" docsai ask x # failures are not cached
	[ "$(wc -l <"$T/rw/runs")" -eq 2 ]
}

@test "passthrough: output over 512 KiB gives 70" {
	real_tool 'head -c 600000 /dev/zero | tr "\0" x'
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai ask x
	[ "$status" -eq 70 ]
	echo "$output" | grep -q 'output exceeds size limit'
}

@test "passthrough: a tool is stopped as soon as its output passes 512 KiB, not at its deadline" {
	s=28.$$
	real_tool "head -c 600000 /dev/zero | tr '\\0' x; sleep $s"
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip" \
		--passthrough-timeout 20
	run timeout 10 "$UIP" docsai ask x
	[ "$status" -eq 70 ]
	echo "$output" | grep -q 'output exceeds size limit'
	for _ in $(seq 1 100); do pgrep -f "^sleep $s\$" >/dev/null || break; sleep 0.05; done
	run ! pgrep -f "^sleep $s\$"
}

@test "passthrough: a tool killed by a signal gives 70" {
	real_tool 'kill -9 $$'
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai ask x
	[ "$status" -eq 70 ]
}

@test "passthrough: a missing real tool gives 69" {
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/absent"
	grep -q 'those calls will get exit 69' "$T/mockd.err"
	run "$UIP" docsai ask x
	[ "$status" -eq 69 ]
	run "$UIP" or jobs get J1
	[ "$output" = "job J1" ]
}

@test "passthrough: invalid UTF-8 from the real tool is replaced, not refused" {
	real_tool 'printf "a\377b\n"'
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip"
	run "$UIP" docsai ask x
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'a\357\277\275b')" ]
}

@test "passthrough: a background child holding the pipes does not hang the call" {
	s=4321.$$ # a name no other run uses: a stray from another tree must not fail this test
	real_tool "sleep $s & echo parent done"
	start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" --passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip" \
		--passthrough-timeout 30
	run "$UIP" docsai ask x
	[ "$status" -eq 0 ]
	[ "$output" = "parent done" ]
	# SIGKILL was sent to the tool's group before the answer; delivery itself is asynchronous
	for _ in $(seq 1 100); do pgrep -f "^sleep $s\$" >/dev/null || break; sleep 0.05; done
	run ! pgrep -f "^sleep $s\$"
}

# Issue 12 finding 2: an allowlisted prefix lets the agent choose the remaining arguments; the
# real tool runs as mockd's uid (here root, the owner of everything), so only its sandbox stops
# it from printing the answer key or rewriting the journal.
@test "passthrough: the agent (uid 2000) cannot make the real tool read the fixture or write the journal" {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	command -v git >/dev/null || skip "git not installed"
	[ "$(id -u)" -eq 0 ] || skip "needs root to run the agent as uid 2000"
	write_fixture "$T/git.json" '{"version":1,"responses":[{"argv":["status"],"stdout":"ANSWER-KEY-7731\n"}]}'
	ln -s "$SHIM" "$T/bin/git"
	start_mockd --tool git --fixture "$T/git.json" --passthrough 'diff' --passthrough-exec "$(command -v git)" \
		--socket-mode 0666
	agent() { setpriv --reuid 2000 --regid 2000 --clear-groups env PROCTOR_MOCK_SOCKET="$SOCK" "$@"; }
	run agent "$T/bin/git" status
	[ "$output" = "ANSWER-KEY-7731" ]
	# The tool itself works: two readable files are diffed.
	run agent "$T/bin/git" diff --no-index /dev/null /etc/hostname
	[ "$status" -eq 1 ]
	echo "$output" | grep -q '^+++ b/etc/hostname'
	run agent "$T/bin/git" diff --no-index /dev/null "$T/git.json"
	[ "$status" -ne 0 ]
	[ -z "$(echo "$output" | grep ANSWER-KEY)" ]
	run agent "$T/bin/git" diff --no-index "--output=$JOURNAL" /dev/null /etc/hostname
	[ "$status" -ne 0 ]
	run json_get '[(x["argv"][:1], x["outcome"], x["uid"]) for x in d]' <"$JOURNAL"
	[ "${lines[0]}" = "[(['status'], 'exact', 2000), (['diff'], 'passthrough', 2000), (['diff'], 'passthrough', 2000), (['diff'], 'passthrough', 2000)]" ]
}

@test "passthrough: the real tool gets a scrubbed environment, / as cwd and no fd above 2" {
	real_tool 'env | sort; pwd; ls /proc/self/fd'
	SECRET_TOKEN=s3cret start_mockd --passthrough-write "$T/rw" --tool uip --fixture "$T/uip.json" \
		--passthrough 'docsai ask' --passthrough-exec "$T/realbin/uip" --passthrough-env LANG=C.UTF-8 \
		7</etc/hostname # a stray fd mockd inherited without close-on-exec
	run "$UIP" docsai ask x
	[ "$status" -eq 0 ]
	[ -z "$(echo "$output" | grep SECRET_TOKEN)" ]
	echo "$output" | grep -qx 'LANG=C.UTF-8'
	echo "$output" | grep -qx 'PATH=/usr/local/bin:/usr/bin:/bin'
	echo "$output" | grep -qx '/'
	# ls itself opens one fd for /proc/self/fd: 0 1 2 and that one, nothing of mockd's
	[ "$(echo "$output" | grep -xE '[0-9]+' | tr '\n' ' ')" = "0 1 2 3 " ]
}

@test "passthrough: a sandbox path that would expose a fixture, the journal or the socket is refused" {
	run "$PROCTOR" mockd --tool uip --fixture "$T/uip.json" --socket "$SOCK" --passthrough 'docsai ask' \
		--passthrough-exec /bin/true --passthrough-read "$T" --check
	[ "$status" -eq 1 ]
	echo "$output" | grep -q "$T: the real tool may not reach this path: it contains $T/uip.json"
	mkdir "$T/logs"
	run "$PROCTOR" mockd --tool uip --fixture "$T/uip.json" --socket "$SOCK" --journal "$T/logs/j" \
		--passthrough 'docsai ask' --passthrough-exec /bin/true --passthrough-write "$T/logs"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q "it contains $T/logs/j"
	[ ! -e "$SOCK" ]
}
