#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# mockd refuses bad configuration before binding: one clear message per problem naming file,
# index and field, exit 1, and no socket ever appears.

bats_require_minimum_version 1.5.0
load helpers

setup() { setup_tmp; }
teardown() { teardown_tmp; }

refuses() { # refuses FIXTURE_JSON EXPECTED_MESSAGE_PART
	printf '%s' "$1" >"$T/f.json"
	run "$PROCTOR" mockd --tool uip --fixture "$T/f.json" --socket "$SOCK"
	[ "$status" -eq 1 ]
	[ ! -e "$SOCK" ]
	echo "$output" | grep -qF "$T/f.json"
	echo "$output" | grep -qF "$2"
}

@test "startup: wrong version" { refuses '{"version":2,"responses":[]}' 'version: must be 1'; }
@test "startup: responses not a list" { refuses '{"version":1,"responses":"x"}' 'responses: must be a list'; }
@test "startup: argv not a string list" {
	refuses '{"version":1,"responses":[{"argv":["a",null]}]}' 'responses[0].argv[1]: must be a string, got null'
}
@test "startup: bad match_mode" {
	refuses '{"version":1,"responses":[{"argv":["a"],"match_mode":"regex"}]}' 'responses[0].match_mode'
}
@test "startup: exit_code out of range" {
	refuses '{"version":1,"responses":[{"argv":["a"],"exit_code":999}]}' 'responses[0].exit_code: must be an integer from 0 to 255, got 999'
}
@test "startup: exit_code not an integer" {
	refuses '{"version":1,"responses":[{"argv":["a"],"exit_code":true}]}' 'responses[0].exit_code: must be an integer from 0 to 255, got a boolean'
}
@test "startup: stdout not a string" {
	refuses '{"version":1,"responses":[{"argv":["a"],"stdout":{}}]}' 'responses[0].stdout: must be a string'
}
@test "startup: stdout plus stderr over 512 KiB" {
	python3 -c "import json; print(json.dumps({'version':1,'responses':[{'argv':['a'],'stdout':'x'*300000,'stderr':'y'*300000}]}))" >"$T/big.json"
	run "$PROCTOR" mockd --tool uip --fixture "$T/big.json" --socket "$SOCK"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "$T/big.json: responses[0]: stdout and stderr together are 600000 bytes"
	[ ! -e "$SOCK" ]
}
@test "startup: duplicate exact key" {
	refuses '{"version":1,"responses":[{"argv":["a"]},{"argv":["a"]}]}' 'responses[1].argv: duplicate exact key (same as responses[0])'
}
@test "startup: duplicate normalized key" {
	refuses '{"version":1,"responses":[{"argv":["a","b"],"match_mode":"normalized"},{"argv":["b","a"],"match_mode":"normalized"}]}' \
		'responses[1].argv: duplicate normalized key'
}
@test "startup: empty subset argv" {
	refuses '{"version":1,"responses":[{"argv":[],"match_mode":"subset"}]}' 'responses[0].argv: must not be empty for subset matching'
}
@test "startup: truncated JSON" { refuses '{"version":1,"responses":[' 'invalid JSON'; }
@test "startup: missing fixture file" {
	run "$PROCTOR" mockd --tool uip --fixture "$T/absent.json" --socket "$SOCK"
	[ "$status" -eq 1 ]
	[ "$output" = "proctor mockd: $T/absent.json: No such file or directory" ]
	[ ! -e "$SOCK" ]
}
@test "startup: every error is reported, not only the first" {
	printf '%s' '{"version":1,"responses":[{"argv":[1]},{"argv":["a"],"exit_code":-4},{"argv":["b"],"stdout":2}]}' >"$T/f.json"
	run "$PROCTOR" mockd --tool uip --fixture "$T/f.json" --socket "$SOCK"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 3 ]
}
@test "startup: a bad config names its field; its fixture path is relative to the config" {
	printf '%s' '{"version":1,"tools":[{"tool":"uip","fixture":"nope.json","max_requests":-1}]}' >"$T/c.json"
	run "$PROCTOR" mockd --config "$T/c.json" --socket "$SOCK"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "$T/c.json: tools[0].max_requests: must be an integer from 1"
	printf '%s' '{"version":1,"tools":[{"tool":"uip","fixture":"nope.json","max_requests":5}]}' >"$T/c.json"
	run "$PROCTOR" mockd --config "$T/c.json" --socket "$SOCK"
	echo "$output" | grep -qF "$T/nope.json: No such file or directory"
}

@test "startup: a tool without max_requests is refused, as the reference refuses it (issue 15)" {
	write_fixture "$T/uip.json" '{"version":1,"responses":[]}'
	printf '%s' '{"version":1,"tools":[{"tool":"uip","fixture":"uip.json"}]}' >"$T/c.json"
	run "$PROCTOR" mockd --config "$T/c.json" --socket "$SOCK"
	[ "$status" -eq 1 ]
	[ "$output" = "proctor mockd: $T/c.json: tools[0].max_requests: required (the tool's request budget, 1 to 100000000)" ]
	[ ! -e "$SOCK" ]
}
@test "startup: usage errors exit 2" {
	run "$PROCTOR" mockd
	[ "$status" -eq 2 ]
	run "$PROCTOR" mockd --tool uip --fixture x --config y
	[ "$status" -eq 2 ]
	run "$PROCTOR" mockd --tool 'a/b' --fixture x
	[ "$status" -eq 2 ]
	run "$PROCTOR" mockd --tool uip --fixture x --socket-mode 999
	[ "$status" -eq 2 ]
	run "$PROCTOR" mockd --tool uip --fixture x --ready-fd 77
	[ "$status" -eq 2 ]
	run "$PROCTOR" nonsense
	[ "$status" -eq 2 ]
}
@test "startup: --help fits on a screen and --check validates without binding" {
	run "$PROCTOR" mockd --help
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -le 40 ]
	printf '%s' '{"version":1,"responses":[{"argv":["a"]}]}' >"$T/f.json"
	run "$PROCTOR" mockd --tool uip --fixture "$T/f.json" --socket "$SOCK" --check
	[ "$status" -eq 0 ]
	[ ! -e "$SOCK" ]
}
