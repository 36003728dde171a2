#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# proctor fixtures end to end: check, sort, replay, coverage and record against the real binary,
# with calls produced by a real mockd and served back through the real shim.

bats_require_minimum_version 1.5.0
load helpers

# Deliberate problems: rule 1 is shadowed by rule 0; rule 3 is keyed like exact rule 2;
# the subset rules are not sorted most-specific-first.
PROBLEMS='{
  "version": 1,
  "responses": [
    {"argv": ["or", "jobs"], "match_mode": "subset", "stdout": "jobs\n"},
    {"argv": ["or", "jobs", "get", "42", "--output", "json"], "match_mode": "subset", "stdout": "job 42\n"},
    {"argv": ["a", "b"], "stdout": "exact\n"},
    {"argv": ["b", "a"], "match_mode": "normalized", "stdout": "normalized\n"},
    {"argv": ["or", "folders", "list"], "match_mode": "subset", "stdout": "folders\n"}
  ],
  "expected_calls": [{"pattern": "or jobs get 42", "min": 1}, {"pattern": "or queues", "min": 1}]
}'

setup() {
	setup_tmp
	printf '%s\n' "$PROBLEMS" >"$T/problem-fixture.json"
}

teardown() { teardown_tmp; }

@test "fixtures check: a fixture with deliberate problems gives exactly the expected report" {
	run "$PROCTOR" fixtures check "$T/problem-fixture.json"
	[ "$status" -eq 0 ]
	f="$T/problem-fixture.json"
	expected="warning: $f: responses[1]: never matches: responses[0] comes first and its tokens are all among this rule's
warning: $f: responses[3]: same normalized key as exact rule responses[2], which answers that argv first
warning: $f: subset rules are not sorted most-specific-first: responses[0] (2 tokens) comes before responses[1] (4 tokens); 'proctor fixtures sort' fixes the order
checked 1 files (5 rules): 0 errors, 3 warnings"
	[ "$output" = "$expected" ]
}

@test "fixtures check: load errors are all reported with file, index and field; exit 1" {
	printf '%s' '{"version":1,"responses":[{"argv":["a"]},{"argv":["a"]},{"argv":[1],"exit_code":300}]}' >"$T/bad-fixture.json"
	run "$PROCTOR" fixtures check "$T/bad-fixture.json"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "$T/bad-fixture.json: responses[2].argv[0]: must be a string, got an integer"
	echo "$output" | grep -qF "$T/bad-fixture.json: responses[2].exit_code: must be an integer from 0 to 255, got 300"
	echo "$output" | grep -qF "$T/bad-fixture.json: responses[1].argv: duplicate exact key (same as responses[0])"
	echo "$output" | grep -qF "checked 1 files (3 rules): 3 errors, 0 warnings"
}

@test "fixtures check: missing files and invalid JSON are errors; directories are walked" {
	mkdir -p "$T/tree/a/b"
	printf '{"version":1,"responses":[' >"$T/tree/a/b/uip-fixture.json"
	printf '{"version":1,"responses":[]}' >"$T/tree/a/other-fixture.json"
	printf 'not looked at' >"$T/tree/a/notes.json"
	run "$PROCTOR" fixtures check "$T/tree" "$T/absent.json"
	[ "$status" -eq 1 ]
	echo "$output" | grep -qF "$T/tree/a/b/uip-fixture.json:1:27: invalid JSON"
	echo "$output" | grep -qF "$T/absent.json: No such file or directory"
	echo "$output" | grep -qF "checked 3 files (0 rules): 2 errors, 0 warnings"
}

@test "fixtures check: the whole corpus passes with zero unsorted subset rule sets" {
	[ -d "$CORPUS" ] || skip "corpus not found at $CORPUS (../shared is absent)"
	run "$PROCTOR" fixtures check "$CORPUS"
	[ "$status" -eq 0 ]
	[ "$output" = "checked 594 files (1887 rules): 0 errors, 0 warnings" ]
}

@test "fixtures sort: fixes the order, keeps the formatting, and replay proves no rule changed" {
	cp "$T/problem-fixture.json" "$T/orig.json"
	run "$PROCTOR" fixtures sort "$T/problem-fixture.json" --in-place
	[ "$status" -eq 0 ]
	echo "$output" | grep -qF "responses[1]: its own argv was answered by responses[0] (shadowed); now it answers itself"
	# byte for byte: only the rule lines swap places
	diff <(sed 's/,$//' "$T/orig.json" | sort) <(sed 's/,$//' "$T/problem-fixture.json" | sort)
	[ "$(sed -n 4p "$T/problem-fixture.json")" = '    {"argv": ["or", "jobs", "get", "42", "--output", "json"], "match_mode": "subset", "stdout": "job 42\n"},' ]
	run "$PROCTOR" fixtures check "$T/problem-fixture.json"
	[ "$status" -eq 0 ]
	run ! grep -q 'not sorted' <<<"$output"
	# every rule's own argv, replayed against both: the answering rule is the same rule
	# (by content), except rule 1, which was shadowed and now answers itself
	python3 - "$T" <<-'PY'
	import json, shlex, sys
	t = sys.argv[1]
	rules = json.load(open(t + "/orig.json"))["responses"]
	with open(t + "/own.txt", "w") as f:
	    for r in rules:
	        f.write(shlex.join(r["argv"]) + "\n")
	PY
	"$PROCTOR" fixtures replay --json "$T/orig.json" "$T/own.txt" >"$T/before.json"
	"$PROCTOR" fixtures replay --json "$T/problem-fixture.json" "$T/own.txt" >"$T/after.json"
	run python3 - "$T" <<-'PY'
	import json, sys
	t = sys.argv[1]
	def answers(fx, rp):
	    rules = json.load(open(fx))["responses"]
	    return [json.dumps(rules[c["rule"]]) for c in json.load(open(rp))["calls"]]
	b = answers(t + "/orig.json", t + "/before.json")
	a = answers(t + "/problem-fixture.json", t + "/after.json")
	print([i for i in range(len(b)) if a[i] != b[i]])
	PY
	[ "$output" = "[1]" ]
}

@test "fixtures sort: an already sorted fixture is written unchanged" {
	[ -d "$CORPUS" ] || skip "corpus not found at $CORPUS (../shared is absent)"
	f=$(find "$CORPUS" -name uip-fixture.json | sort | head -n 1)
	run --separate-stderr "$PROCTOR" fixtures sort "$f"
	[ "$status" -eq 0 ]
	[ "$output" = "$(cat "$f")" ]
}

@test "fixtures replay: shell lines and journals; an unbalanced quote is reported by line" {
	printf '%s\n' 'uip or jobs get 42' '# a comment' 'or "unbalanced' '' "or folders list --output=json" 'zzz' >"$T/lines.txt"
	run --separate-stderr "$PROCTOR" fixtures replay "$T/problem-fixture.json" "$T/lines.txt"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$T/lines.txt:3: unbalanced double quote" ]
	[ "${lines[0]}" = "1: subset responses[0]: or jobs get 42" ]
	[ "${lines[1]}" = "5: subset responses[4]: or folders list --output=json" ]
	[ "${lines[2]}" = "6: unmocked: zzz" ]
	[ "${lines[3]}" = "3 calls: exact 0, normalized 0, subset 2, passthrough 0, default 0, unmocked 1 (0 lines skipped, 1 errors)" ]
	# the reference journal format: {ts, tool, argv, exit}; other tools are skipped
	printf '%s\n' '{"ts":1.5,"tool":"uip","argv":["b","a"],"exit":0}' '{"ts":2,"tool":"gh","argv":["pr"],"exit":0}' >"$T/ref.jsonl"
	run "$PROCTOR" fixtures replay --json "$T/problem-fixture.json" "$T/ref.jsonl"
	[ "$status" -eq 0 ]
	run json_get 'd[0]["calls"][0]["outcome"], d[0]["calls"][0]["rule"], d[0]["summary"]["skipped"]' <<<"$(tr -d '\n' <<<"$output")"
	[ "$output" = "('normalized', 3, 1)" ]
}

@test "fixtures coverage: over a real mockd journal, the unused rules and the near misses" {
	start_mockd --tool uip --fixture "$T/problem-fixture.json"
	"$UIP" or jobs get 42 >/dev/null
	"$UIP" a b >/dev/null
	"$UIP" or jobz get 42 >/dev/null 2>&1 || true
	stop_mockd
	printf '%s\n' 'not json {' >>"$JOURNAL"
	run --separate-stderr "$PROCTOR" fixtures coverage "$T/problem-fixture.json" "$JOURNAL"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$JOURNAL:4: not a JSON object with an \"argv\" list of strings" ]
	expected="$T/problem-fixture.json: 5 rules, 3 calls from 1 files (0 lines skipped, 1 errors)
served: 2 of 5 rules
  responses[0] subset         1  or jobs
  responses[2] exact          1  a b
never used: 3 rules
  responses[1] subset      or jobs get 42 --output json
  responses[3] normalized  b a
  responses[4] subset      or folders list
passthrough: 0 calls
fell through: 1 calls
  $JOURNAL:3 unmocked: or jobz get 42
      near responses[1]: missing jobs; extra jobz
      near responses[0]: missing jobs; extra jobz get 42
      near responses[4]: missing folders list; extra jobz get 42
expected calls: 1 of 2 met
  met     \"or jobs get 42\" min 1, seen 1
  NOT MET \"or queues\" min 1, seen 0"
	[ "$output" = "$expected" ] || { diff <(echo "$expected") <(echo "$output") >&2; false; }
}

@test "fixtures coverage --json: machine-readable and complete" {
	printf '%s\n' '{"argv":["or","jobs","list"]}' '{"argv":["nope"]}' >"$T/calls.jsonl"
	run "$PROCTOR" fixtures coverage --json --near 1 "$T/problem-fixture.json" "$T/calls.jsonl"
	[ "$status" -eq 0 ]
	run json_get 'd[0]["unused"], d[0]["fell_through"][0]["near"][0]["rule"], [e["met"] for e in d[0]["expected_calls"]]' \
		<<<"$(tr -d '\n' <<<"$output")"
	[ "$output" = "([1, 2, 3, 4], 0, [False, False])" ]
}

@test "fixtures record: a script as the real tool; mockd then serves the recording byte-identically" {
	printf '#!/bin/sh\nprintf "out %%s\\n" "$*"\nprintf "api_key=SEKRET1 err\\n" >&2\nexit $#\n' >"$T/real"
	chmod +x "$T/real"
	mkfifo "$T/rready"
	"$PROCTOR" fixtures record --tool uip --out "$T/rec.json" --redact 'SEKRET[0-9]+' --socket "$SOCK" \
		--ready-fd 3 -- "$T/real" 3>"$T/rready" 2>"$T/record.err" &
	rec=$!
	read -r -t 10 _ <"$T/rready"
	for args in "or jobs list" "docsai ask 'a question'" "or jobs list" "x"; do
		eval "\"$UIP\" $args" >"$T/live.out" 2>"$T/live.err" && code=0 || code=$?
		printf '%s|%s|%s\n' "$code" "$(cat "$T/live.out")" "$(cat "$T/live.err")" >>"$T/live.txt"
	done
	kill -TERM "$rec"
	wait "$rec"
	grep -q "3 rules recorded" "$T/record.err"
	run ! grep -q SEKRET1 "$T/rec.json"
	run "$PROCTOR" fixtures check "$T/rec.json"
	[ "$status" -eq 0 ]
	start_mockd --tool uip --fixture "$T/rec.json"
	for args in "or jobs list" "docsai ask 'a question'" "or jobs list" "x"; do
		eval "\"$UIP\" $args" >"$T/mock.out" 2>"$T/mock.err" && code=0 || code=$?
		printf '%s|%s|%s\n' "$code" "$(cat "$T/mock.out")" "$(cat "$T/mock.err")" >>"$T/mock.txt"
	done
	# byte for byte the same, except the redacted secret
	diff <(sed 's/SEKRET1/[REDACTED]/' "$T/live.txt") "$T/mock.txt"
}

@test "fixtures record: never runs without the real tool, never overwrites" {
	run "$PROCTOR" fixtures record --tool uip --out "$T/rec.json" --socket "$SOCK" -- "$T/absent-tool"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q 'not an executable'
	[ ! -e "$T/rec.json" ]
	[ ! -e "$SOCK" ]
	echo keep >"$T/rec.json"
	run "$PROCTOR" fixtures record --tool uip --out "$T/rec.json" --socket "$SOCK" -- /bin/echo
	[ "$status" -eq 1 ]
	[ "$(cat "$T/rec.json")" = keep ]
	run "$PROCTOR" fixtures record --tool uip --out "$T/r2.json" --redact '(' -- /bin/echo
	[ "$status" -eq 2 ]
}
