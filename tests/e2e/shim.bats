#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The shim against failures and against a foreign server that speaks protocol v1: it never
# fabricates a success; any failure is 125 with one line on stderr and nothing on stdout.

bats_require_minimum_version 1.5.0
load helpers

setup() { setup_tmp; }

teardown() {
	[ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null
	teardown_tmp
}

start_server() { # start_server MODE ARGS...: a python peer written from PROTOCOL.md
	mkfifo "$T/srv.ready"
	$RAWSOCK "$1" "$SOCK" "${@:2}" >"$T/srv.ready" &
	SERVER_PID=$!
	read -r -t 10 _ <"$T/srv.ready"
}

@test "shim: no server gives 125, one line on stderr, nothing on stdout" {
	run bash -c "'$UIP' or jobs 2>'$T/err'"
	[ "$status" -eq 125 ]
	[ -z "$output" ]
	[ "$(wc -l <"$T/err")" -eq 1 ]
	grep -q "uip: service unavailable: $SOCK" "$T/err"
}

@test "shim: PROCTOR_MOCK_SOCKET picks the socket; the default is /run/proctor/mock.sock" {
	run env -u PROCTOR_MOCK_SOCKET "$UIP" x
	[ "$status" -eq 125 ]
	echo "$output" | grep -q '/run/proctor/mock.sock'
}

@test "shim: an oversize request is refused before connecting" {
	start_server mute-server
	big=$(head -c 70000 /dev/zero | tr '\0' a)
	run "$UIP" "$big"
	[ "$status" -eq 125 ]
	[ "$output" = "uip: request exceeds the 65536 byte limit" ]
}

@test "shim: an argument that is not UTF-8 gives 125" {
	run "$UIP" ok "$(printf '\377')"
	[ "$status" -eq 125 ]
	[ "$output" = "uip: argument 2 is not valid UTF-8" ]
}

@test "shim: a malformed response gives 125, never a fabricated success" {
	for line in 'not json' '{"version":2,"exit_code":0,"stdout":"x","stderr":""}' \
		'{"version":1,"exit_code":300,"stdout":"x","stderr":""}' '{"version":1,"exit_code":0,"stdout":5,"stderr":""}' \
		'{"version":1,"stdout":"x","stderr":""}'; do
		start_server garbage-server "$line"
		run "$UIP" anything
		[ "$status" -eq 125 ]
		echo "$output" | grep -q 'invalid response'
		kill "$SERVER_PID"; wait "$SERVER_PID" || true
		rm -f "$SOCK" "$T/srv.ready"
	done
}

@test "shim: a server that never answers times out with 125" {
	start_server mute-server
	PROCTOR_MOCK_TIMEOUT=1 run "$UIP" anything
	[ "$status" -eq 125 ]
	echo "$output" | grep -q 'timed out'
}

@test "shim: a bad PROCTOR_MOCK_TIMEOUT is refused" {
	PROCTOR_MOCK_TIMEOUT=soon run "$UIP" anything
	[ "$status" -eq 125 ]
	echo "$output" | grep -q 'PROCTOR_MOCK_TIMEOUT'
}

@test "shim: works against a foreign protocol v1 server and ignores unknown keys" {
	start_server server 6 "foreign"
	run "$UIP" a 'b c'
	[ "$status" -eq 6 ]
	[ "$output" = "foreign a b c" ]
}

@test "shim: a client written from PROTOCOL.md works against mockd" {
	write_fixture "$T/uip.json" '{"version":1,"responses":[{"argv":["a","b"],"exit_code":9,"stdout":"é\n","stderr":"e"}]}'
	start_mockd --tool uip --fixture "$T/uip.json"
	run $RAWSOCK call "$SOCK" uip a b
	[ "$output" = '{"version":1,"exit_code":9,"stdout":"\u00E9\n","stderr":"e"}' ]
}
